"""Worker processes (tagging.workers): results in input order, and a pool stopped now (an error
or Ctrl-C inside ``with Tagger(...)``) stops its own processes and none of the host's."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from tagger import Tagger
from tagger.tagging.workers import Workers

from ..conftest import MINI_TAXONOMY, HashEmbedder, alive


def _ready() -> None:
    pass


def _doubled(batch: list[int]) -> list[int]:
    return [2 * item for item in batch]


def _busy(batch: list[str]) -> list[str]:
    """Say it started (a file named by the worker's pid), then work for a long time."""
    with open(os.path.join(batch[0], f"{os.getpid()}.started"), "w"):
        pass
    time.sleep(3600)  # a pool that waited for it would not stop within the test
    return batch


def _busy_workers(pool, tmp_path) -> list[int]:
    """The pids of the pool's two workers, once both have started a _busy task."""
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("*.started"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    own = [process.pid for process in pool._processes.values()]
    assert len(own) == 2 and all(alive(pid) for pid in own)
    return own


def test_workers_give_every_batchs_results_in_order():
    workers = Workers(2, _ready, (), _doubled, backend="static")
    try:
        assert list(workers.map([[1, 2], [3], [4, 5, 6], [7]])) == [2, 4, 6, 8, 10, 12, 14]
    finally:
        workers.close()


@pytest.mark.slow
def test_an_error_inside_a_tagger_stops_its_workers_and_leaves_the_hosts_children(tmp_path):
    host = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(120,))
    host.start()
    try:
        workers = Workers(2, _ready, (), _busy, backend="static")
        pool = workers._started()
        for _ in range(2):
            pool.submit(_busy, [str(tmp_path)])
        own = _busy_workers(pool, tmp_path)
        tagger = Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder())
        with pytest.raises(RuntimeError, match="inside the run"), tagger:
            tagger._workers = workers
            raise RuntimeError("an error inside the run")
        # by /proc, not Process.is_alive, which says True of a child something else reaped
        assert not any(alive(pid) for pid in own)
        assert alive(host.pid)
    finally:
        host.terminate()
        host.join()


@pytest.mark.slow
def test_a_process_pool_stopped_by_ctrl_c_stops_its_busy_workers(tmp_path):
    """A fit's pools (its folds, its inner folds, its --papers): Ctrl-C or SIGTERM inside one
    stops its workers now, where leaving the block would wait for their tasks (an hour here)."""
    from tagger.tagging.workers import process_pool

    with pytest.raises(KeyboardInterrupt), process_pool(2) as pool:
        for _ in range(2):
            pool.submit(_busy, [str(tmp_path)])
        own = _busy_workers(pool, tmp_path)
        raise KeyboardInterrupt
    assert not any(alive(pid) for pid in own)
