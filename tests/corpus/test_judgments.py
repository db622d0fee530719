"""The judgments file of a review (corpus.judgments), worked out by hand: drafts and judged lines
in the judged set's format, what it refuses, a write that fails changing nothing, a file of other
papers refused, and one writer at a time."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tagger.corpus.judged import Judgment, judgments_of
from tagger.corpus.judgments import JudgmentStore, StaleJudgment
from tagger.errors import InputError, TaggerError
from tagger.io.readers import read_papers
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import MINI_TAXONOMY
from .conftest import ABSTRACT, judged_line, judgments_in, review_records

MINI = load_taxonomy(MINI_TAXONOMY)


def _store(tmp_path, records=None):
    return JudgmentStore.open(
        tmp_path / "j.jsonl", records or review_records(), MINI, source="mine"
    )


def test_the_store_writes_drafts_and_judgments_in_the_judged_format(tmp_path):
    store = _store(tmp_path)
    path = store.path
    # A paper begun: a draft, which eval and the fit skip; notes exactly as given.
    view = store.save("p1", rejected=["graphs.gnn"], type=["theory"], notes=" hard <b>call</b>\n")
    assert view == {
        "areas": [],
        "acceptable": [],
        "rejected": ["graphs.gnn"],
        "main": [],
        "type": ["theory"],
        "notes": " hard <b>call</b>\n",
        "done": False,
        "revision": store.revision("p1"),
    }
    paper = {"id": "p1", "source": "mine", "venue": "ICLR", "year": 2025, "title": "One"}
    assert judgments_in(path) == [
        {
            **paper,
            "abstract": ABSTRACT,
            "draft": {
                "areas": [],
                "main": [],
                "acceptable": [],
                "type": ["theory"],
                "rejected": ["graphs.gnn"],
                "notes": " hard <b>call</b>\n",
            },
        }
    ]
    assert Judgment.of_paper(next(iter(read_papers(path)))) is None
    # Done: the rejected tag left out, the main area the first accepted in the tagger's order.
    store.save("p1", rejected=["graphs.gnn"], type=["theory"], notes="n", done=True)
    # Done with an area added and one tag undecided: the tag is accepted, and is the main one.
    view = store.save("p2", areas=["rl.multi-agent"], type=["method", "dataset"], done=True)
    assert view["areas"] == ["rl.multi-agent", "graphs"] and view["main"] == ["graphs"]
    lines = judgments_in(path)
    assert [list(line) for line in lines] == [
        ["id", "source", "venue", "year", "title", "abstract", "judged"]
    ] * 2
    assert [line["judged"] for line in lines] == [
        {"areas": ["rl"], "main": ["rl"], "acceptable": [], "type": ["theory"], "notes": "n"},
        {
            "areas": ["rl.multi-agent", "graphs"],
            "main": ["graphs"],
            "acceptable": [],
            "type": ["method", "dataset"],
            "notes": "",
        },
    ]
    assert lines[1]["source"] == "lab/2025"  # a paper's own source is kept
    # What eval and the fit read.
    read = judgments_of(read_papers(path), str(path))
    assert read["p2"] == Judgment(
        areas=("rl.multi-agent", "graphs"), main=("graphs",), types=("method", "dataset")
    )
    # Rewriting a paper rewrites its line in place; nothing but the file and its lock is left.
    store.save("p1", areas=["rl", "graphs.gnn"], main=["graphs.gnn"], type=["theory"], done=True)
    assert [line["id"] for line in judgments_in(path)] == ["p1", "p2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".j.jsonl.lock", "j.jsonl"]
    views = store.views()
    store.close()
    # Reopened: the same views, done papers done.
    again = _store(tmp_path)
    assert again.views() == views and again.done == {"p1", "p2"}
    assert again.view("p1")["rejected"] == [] and again.view("p2")["rejected"] == []
    again.close()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"areas": ["nope"]}, "paper 'p1': area 'nope' is not in "),
        (
            {"areas": ["type.theory"]},
            "paper 'p1': 'type.theory' is a contribution type: see 'type'",
        ),
        ({"areas": ["rl"], "rejected": ["rl"]}, "paper 'p1': area 'rl' is both in 'areas' and"),
        ({"rejected": ["graphs"]}, "paper 'p1': only a tag can be rejected; 'graphs' is not one"),
        ({"main": ["rl"]}, "paper 'p1': 'main' must be one or two of its areas. Got ['rl']"),
        ({"type": ["novelty"]}, "paper 'p1': 'novelty' is no contribution type; they are method,"),
        ({"areas": "rl"}, "paper 'p1': 'areas' must be a list of names. Got 'rl' instead."),
        ({"notes": 3}, "paper 'p1': 'notes' must be text of up to 10,000 characters"),
        (
            {"rejected": ["rl", "graphs.gnn"], "type": ["theory"], "done": True},
            "paper 'p1' cannot be done with no area: accept a tag, or add the area it is about",
        ),
        ({"done": True}, "paper 'p1' cannot be done with no contribution type: mark one of"),
        ({"id": "p9"}, "paper 'p9' is not one of the papers under review"),
    ],
)
def test_what_the_store_refuses(tmp_path, change, message):
    store = _store(tmp_path)
    with pytest.raises(TaggerError) as refused:
        store.save(change.pop("id", "p1"), **change)
    assert str(refused.value).startswith(message)
    assert not store.path.exists() and store.views() == {}
    store.close()


def test_a_write_that_fails_changes_nothing(tmp_path, monkeypatch):
    store = _store(tmp_path)
    store.save("p1", type=["theory"])
    before = store.path.read_bytes()

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        store.save("p1", type=["theory"], done=True)
    assert store.path.read_bytes() == before and store.done == set()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".j.jsonl.lock", "j.jsonl"]
    store.close()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [judged_line("x1"), judged_line(), judged_line("x2")],
            "j.jsonl: 2 of its lines judge papers that mine does not hold (the first on line 1: "
            "'x1'): it holds judgments of other papers; give --judgments a new file, or review "
            "the tagged file they were judged from",
        ),
        (
            [judged_line(abstract="Another version.")],
            "j.jsonl line 1: paper 'p1': its abstract is not the one in mine: these are "
            "judgments of another version of the paper; give --judgments a new file",
        ),
        (
            [judged_line(), "", judged_line()],
            "j.jsonl line 3: paper 'p1' comes again: `tagger review` writes one line a paper; "
            "keep the one to go on with",
        ),
        (["[1, 2]"], "j.jsonl line 1: not a judged paper: a line is an object with an 'id'"),
        (["{"], "j.jsonl line 1: not a line of JSON ("),
        (
            [judged_line(areas="rl")],
            "j.jsonl line 1: paper 'p1': 'judged.areas': must be a list (judged/README.md",
        ),
        (
            [judged_line(areas=["rl"], main=["graphs"])],
            "j.jsonl line 1: paper 'p1': 'main' must be one or two of its areas. Got ['graphs']",
        ),
        (
            [json.dumps({"id": "p1", "abstract": ABSTRACT})],
            "j.jsonl line 1: neither 'judged' nor 'draft' holds a judgment (judged/README.md",
        ),
    ],
)
def test_a_judgments_file_that_is_not_this_reviews_is_refused(tmp_path, lines, message):
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as refused:
        _store(tmp_path)
    assert str(refused.value).replace(str(tmp_path) + "/", "").startswith(message)
    assert path.read_text() == "\n".join(lines) + "\n"
    path.write_text("")
    _store(tmp_path).close()  # the refusal let go of the file's lock


def test_two_reviews_cannot_write_one_file(tmp_path):
    first = _store(tmp_path)
    with pytest.raises(TaggerError) as refused:
        _store(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path / 'j.jsonl'} is being written by another `tagger review` (it holds "
        ".j.jsonl.lock): stop that one first, or choose another file"
    )
    first.close()
    _store(tmp_path).close()


# ---- the file under hostile use: two pages, links, hand edits, kills, modes, odd files ----------


def test_a_save_made_on_an_older_revision_is_refused(tmp_path):
    """Two pages of one review: each save names the revision of the paper's judgment it was
    made on; once the other page has saved, the older page's save is refused with the current
    view, and the file keeps the newer page's judgment."""
    store = _store(tmp_path)
    assert store.view("p1") is None and store.revision("p1") == ""
    draft = store.save("p1", type=["theory"], revision="")
    assert draft["revision"] == store.revision("p1") != ""
    # Both pages hold the draft; the newer one adds a note and marks the paper done.
    newer = store.save("p1", type=["theory"], notes="newer", done=True, revision=draft["revision"])
    assert newer["revision"] not in ("", draft["revision"])
    with pytest.raises(StaleJudgment) as refused:
        store.save("p1", type=["method"], revision=draft["revision"])
    assert refused.value.current == newer
    assert str(refused.value) == (
        "paper 'p1' was changed in another page since this one read it: not saved"
    )
    with pytest.raises(StaleJudgment):  # a page that never saw the paper begun
        store.save("p1", type=["method"], revision="")
    line = judgments_in(store.path)[0]
    assert line["judged"]["notes"] == "newer" and store.done == {"p1"}
    store.close()


@pytest.mark.parametrize("exists", [True, False])
def test_a_judgments_file_through_a_symlink_is_its_target(tmp_path, exists):
    """The target gets the change and the link stays a link; a second review of the file,
    through the link or the target, is refused."""
    target = tmp_path / "real.jsonl"
    if exists:
        target.write_text(judged_line("p2", abstract="Graphs.", areas=["graphs"], main=[]) + "\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    store = JudgmentStore.open(link, review_records(), MINI, source="mine")
    store.save("p1", type=["theory"])
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert [line["id"] for line in judgments_in(target)] == (["p2", "p1"] if exists else ["p1"])
    for path in (target, link):
        with pytest.raises(TaggerError) as refused:
            JudgmentStore.open(path, review_records(), MINI)
        assert str(refused.value) == (
            f"{target} is being written by another `tagger review` (it holds .real.jsonl.lock): "
            "stop that one first, or choose another file"
        )
    store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".real.jsonl.lock",
        "link.jsonl",
        "real.jsonl",
    ]


def test_a_hand_edit_while_the_review_runs_is_kept_and_shown(tmp_path):
    store = _store(tmp_path)
    path = store.path
    store.save("p1", type=["theory"])
    by_hand = judged_line("p2", abstract="Graphs.", areas=["graphs"], main=["graphs"], notes="hand")
    path.write_text(path.read_text() + by_hand + "\n")
    store.refresh()  # as the server does before it answers the page
    assert store.view("p2")["notes"] == "hand" and store.done == {"p2"}
    store.save("p1", type=["theory"], notes="after", revision=store.revision("p1"))
    assert [line["id"] for line in judgments_in(path)] == ["p1", "p2"]
    assert judgments_in(path)[1]["judged"]["notes"] == "hand"
    # An edit that breaks the file: the save is refused, naming the line, and nothing written.
    broken = path.read_text() + '{"id": "p2"\n'
    path.write_text(broken)
    with pytest.raises(InputError) as refused:
        store.save("p1", type=["theory"], done=True)
    assert str(refused.value).startswith(f"{path} line 3: not a line of JSON (")
    assert str(refused.value).endswith(
        "): the file was changed while the review runs; mend that line and save again (nothing "
        "was written)"
    )
    assert path.read_text() == broken and store.done == {"p2"}
    store.close()


def test_a_save_killed_midway_leaves_no_file_a_review_keeps(tmp_path):
    """A save writes one temporary file, of one name, beside the file (under the review's lock);
    one left by a kill -9 is removed when a review opens."""
    left = tmp_path / ".j.jsonl.tmp"
    left.write_text('{"id": "p1", "half')
    store = _store(tmp_path)
    assert not left.exists()
    store.save("p1", type=["theory"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".j.jsonl.lock", "j.jsonl"]
    store.close()


def test_a_saved_file_keeps_its_mode(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text("")
    path.chmod(0o600)
    store = _store(tmp_path)
    store.save("p1", type=["theory"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    store.close()
    path.unlink()
    before = os.umask(0o027)  # a new file: as a normal open makes it
    try:
        store = _store(tmp_path)
        store.save("p1", type=["theory"])
    finally:
        os.umask(before)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    store.close()


def test_a_read_only_judgments_file_is_refused_at_open(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(judged_line() + "\n")
    path.chmod(0o444)
    with pytest.raises(TaggerError) as refused:
        _store(tmp_path)
    assert str(refused.value) == (
        f"{path} is read-only: make it writable (chmod u+w {path}) or give another file"
    )
    assert path.read_text() == judged_line() + "\n"


def test_a_fifo_is_refused_at_open_and_not_read(tmp_path):
    """Reading a FIFO would block the review for ever: it is refused, unopened for reading."""
    path = tmp_path / "j.jsonl"
    os.mkfifo(path)
    with pytest.raises(TaggerError) as refused:
        _store(tmp_path)
    assert str(refused.value) == (
        f"{path} is a FIFO, not a file: give --judgments a regular file (or a new one)"
    )
    assert stat.S_ISFIFO(path.stat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device needs root")
def test_a_device_is_refused_at_open_and_kept(tmp_path):
    path = tmp_path / "j.jsonl"
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null
    with pytest.raises(TaggerError) as refused:
        _store(tmp_path)
    assert str(refused.value) == (
        f"{path} is a device, not a file: give --judgments a regular file (or a new one)"
    )
    assert stat.S_ISCHR(path.stat().st_mode)
