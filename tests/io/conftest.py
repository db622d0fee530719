"""What the tests of reading and writing share: a part directory as `tagger tag --cluster`
writes it, and a copy of it for each test to spoil."""

from __future__ import annotations

import json
import shutil

import pytest

from ..conftest import ABSTRACTS, MINI_TAXONOMY, HashEmbedder


def numbered_papers(path, count=12):
    """``count`` papers, p0 to p11 by default, on the three abstracts in turn."""
    path.write_text(
        "".join(
            json.dumps({"id": f"p{i}", "abstract": f"{ABSTRACTS[i % 3]} Case {i}."}) + "\n"
            for i in range(count)
        )
    )
    return path


@pytest.fixture(scope="session")
def written(tmp_path_factory):
    """A part directory of 12 papers in 4 parts, written by tag_on_cluster on a Dask cluster in
    this process (HashEmbedder, as the fast lane tags), and the local output of the same run."""
    from dask.distributed import Client, LocalCluster

    import tagger.language.embedders as embedders
    import tagger.language.model_files as model_files
    from tagger import Tagger, tag_files
    from tagger.runs.cluster import tag_on_cluster

    root = tmp_path_factory.mktemp("parts")
    source = numbered_papers(root / "p.jsonl")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedders, "make_embedder", lambda *a, **k: HashEmbedder())
        patch.setattr(model_files, "onnx_model_dir", lambda: root / "no-export")
        tagger = Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder())
        tag_files(tagger, [source], root / "local.jsonl")
        with (
            LocalCluster(
                processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            tag_on_cluster(
                tagger, [str(source)], root / "out", size=4, client=client, warn=print, note=print
            )
    return root / "out", (root / "local.jsonl").read_bytes()


@pytest.fixture
def parts(written, tmp_path):
    """A copy of the part directory to spoil."""
    directory = tmp_path / "out"
    shutil.copytree(written[0], directory)
    return directory
