"""BibTeX libraries (io.bibtex) as BibTeX reads them: a value of several pieces or a macro read
joined and expanded and kept so when tags are added, a tag word that cannot end a value, a
field given twice in two cases, an @string defined twice, bibtexparser's logging silenced, and
a minimal entry's braces balanced. Each case: written back with no tags it is the file again,
and a second run writes the same file."""

from __future__ import annotations

import logging

import pytest

from tagger.errors import InputError, InputNotice
from tagger.io import bibtex
from tagger.io.libraries import library_records
from tagger.records import Paper

P = "tagger:"


def tagged(text: str, tags: list[str]) -> str:
    """The library ``text`` written back with ``tags`` on every entry that was read."""
    return "".join(
        bibtex.with_tags(b.text, tags, P) if b.fields is not None else b.text
        for b in bibtex.blocks(text)
    )


def round_trips(text: str, tags: list[str]) -> str:
    """``text`` tagged; checked: its blocks join to it, no tags give it back byte for byte, a
    second run gives the same file, and the tags taken off give ``text`` again."""
    assert "".join(b.text for b in bibtex.blocks(text)) == text
    assert tagged(text, []) == text
    once = tagged(text, tags)
    assert tagged(once, tags) == once
    assert tagged(once, []) == text
    return once


def entry_fields(text: str) -> dict[str, dict]:
    return {b.key: b.fields for b in bibtex.blocks(text) if b.fields is not None}


def papers(text: str) -> dict[str, dict]:
    return {key: bibtex.paper_fields(fields, P) for key, fields in entry_fields(text).items()}


# --- F7: a tag word never holds what ends a value ------------------------------------------------


def test_a_tag_name_with_a_quote_keeps_a_quoted_value_readable():
    text = '@misc{k, keywords = "mine", abstract = {A}}\n'
    once = round_trips(text, ['Graph "neural" networks', "C# @ 50%"])
    assert once == (
        '@misc{k, keywords = "mine, tagger:Graph neural networks, tagger:C# @ 50%", '
        "abstract = {A}}\n"
    )
    assert entry_fields(once)["k"]["keywords"] == (
        "mine, tagger:Graph neural networks, tagger:C# @ 50%"
    )
    assert papers(once)["k"]["keywords"] == ["mine"]


# --- F8: keywords of several pieces, or a macro --------------------------------------------------

PIECES = (
    "@string{kw = {x, y}}\n"
    "@misc{k, keywords = {kw1} # {, more, } # kw, abstract = {A}}\n"
    "@misc{j,\n  keywords = kw,\n  abstract = {A}\n}\n"
    "@misc{n, keywords = {kw1}#kw, abstract = {A}}\n"
)


def test_keywords_of_several_pieces_or_a_macro_are_read_as_bibtex_joins_them():
    assert entry_fields(PIECES)["k"]["keywords"] == "kw1, more, x, y"
    assert papers(PIECES)["k"]["keywords"] == ["kw1", "more", "x", "y"]
    assert papers(PIECES)["j"]["keywords"] == ["x", "y"]


def test_tags_are_one_more_piece_of_keywords_of_several_pieces_or_a_macro():
    once = round_trips(PIECES, ["a", "b"])
    assert once == (
        "@string{kw = {x, y}}\n"
        "@misc{k, keywords = {kw1} # {, more, } # kw # {, tagger:a, tagger:b}, abstract = {A}}\n"
        "@misc{j,\n  keywords = kw # {, tagger:a, tagger:b},\n  abstract = {A}\n}\n"
        "@misc{n, keywords = {kw1}#kw#{, tagger:a, tagger:b}, abstract = {A}}\n"
    )
    assert entry_fields(once)["j"]["keywords"] == "x, y, tagger:a, tagger:b"
    assert papers(once)["k"]["keywords"] == ["kw1", "more", "x", "y"]
    again = tagged(once, ["c"])
    assert again.count("{, tagger:c}") == 3 and "tagger:a" not in again  # replaced, not piled up


# --- F9: every field read as BibTeX joins it -----------------------------------------------------


def test_a_field_of_several_pieces_is_read_joined_with_its_macros_expanded():
    text = (
        '@string{ab = "An abstract."}\n@STRING{jr = "J. " # {Graphs}}\n'
        '@misc{k, title = "T" # {itle}, abstract = ab # " Extra.", journal = JR # { } # 2021,\n'
        "  year = 2021, month = jan}\n"
    )
    paper = papers(text)["k"]
    assert paper == {
        "title": "Title",
        "abstract": "An abstract. Extra.",
        "venue": "J. Graphs 2021",
        "year": 2021,
    }
    assert entry_fields(text)["k"]["month"] == "jan"  # a macro BibTeX's styles define, as written
    used = [b.uses for b in bibtex.blocks(text) if b.key == "k"][0]
    assert used == ('@string{ab = "An abstract."}', '@STRING{jr = "J. " # {Graphs}}')
    round_trips(text, ["a"])


# --- F20: a field given twice, in two cases ------------------------------------------------------


def test_a_field_given_twice_in_two_cases_is_a_problem():
    text = "@misc{k, Keywords = {a}, keywords = {b}, abstract = {A}}\n"
    [block] = [b for b in bibtex.blocks(text) if b.is_entry]
    assert (block.fields, block.problem) == (None, "it gives a field twice (keywords); keep one")
    [error] = list(library_records(text.encode(), "lib.bib", "bibtex"))
    assert isinstance(error, InputError)
    assert str(error) == (
        "lib.bib line 1: entry 'k': it gives a field twice (keywords); keep one; it is not "
        "tagged, and written back as it is"
    )
    round_trips(text, ["a"])


# --- F21: an @string defined twice ---------------------------------------------------------------


@pytest.mark.parametrize("second", ["late", "Late"])
def test_an_at_string_defined_twice_is_no_entry_but_a_notice(second):
    text = (
        '@string{late = "First."}\n\n'
        f'@string{{{second} = "Second."}}\n'
        "@misc{late, abstract = late}\n"
    )
    found = bibtex.blocks(text)
    assert [b.key for b in found if b.is_entry] == ["late"]  # the @string is no entry
    notices = [(b.line, b.notice) for b in found if b.notice]
    assert notices == [
        (
            3,
            f"@string {second!r} is defined twice (first at line 1): BibTeX reads the later "
            "definition from here on; keep one",
        )
    ]
    assert papers(text)["late"]["abstract"] == "Second."  # as BibTeX reads it
    read = list(library_records(text.encode(), "lib.bib", "bibtex"))
    assert not [r for r in read if isinstance(r, InputError)]  # no rejected paper
    (said,) = [r for r in read if isinstance(r, InputNotice)]
    assert (said.line, said.warning, said.message) == (3, True, notices[0][1])
    round_trips(text, ["a"])


def test_an_entry_key_that_is_an_at_strings_name_is_no_problem():
    text = '@string{JLAMP = "J. Log. Algebr."}\n@article{JLAMP, journal = JLAMP, abstract = {A}}\n'
    assert papers(text)["JLAMP"] == {"abstract": "A", "venue": "J. Log. Algebr."}
    round_trips(text, ["a"])


# --- F22: bibtexparser's logging silenced --------------------------------------------------------

BROKEN = (
    "@article{ok, abstract={A}}\n@article{bad,\n  title = {Missing,\n  year = 2021\n}\n"
    "@misc{next, abstract={B}}\n"
)


def test_an_unreadable_entry_logs_nothing_and_the_loggers_are_as_they_were(caplog):
    splitter = logging.getLogger("bibtexparser.splitter")
    level = splitter.level
    splitter.setLevel(logging.INFO)  # as a user's logging set-up may have it
    try:
        with caplog.at_level(logging.DEBUG):
            found = bibtex.blocks(BROKEN)
        assert [r.getMessage() for r in caplog.records if r.name.startswith("bibtexparser")] == []
        assert [b.key for b in found if b.problem] == ["bad"]
        assert splitter.level == logging.INFO and not splitter.disabled
        assert not logging.getLogger("bibtexparser").disabled
    finally:
        splitter.setLevel(level)
    round_trips(BROKEN, ["a"])


# --- F24: a minimal entry's braces ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "written"),
    [
        ("Unbalanced } brace { title", "Unbalanced  brace  title"),
        ("Sets {x | x} } and { y", "Sets {x | x}  and  y"),
        ("{Nested {ok}} {", "{Nested {ok}} "),
    ],
)
def test_a_minimal_entry_drops_only_the_unmatched_braces(title, written):
    paper = Paper(id="p", title=title, abstract="A.")
    entry = bibtex.new_entry(paper, ["rl"], P, "p")
    assert f"  title = {{{written}}},\n" in entry
    assert round_trips(bibtex.new_entry(paper, [], P, "p"), ["rl"]) == entry
    text = " ".join(written.replace("{", "").replace("}", "").split())
    assert papers(entry)["p"]["title"] == text


# --- a '#' joining nothing: reported, never tagged where the tags could not be written -----------


@pytest.mark.parametrize(
    "keywords",
    ["keywords = # {x},", "keywords = {x} ## {y},", "keywords = {x} # ,", "keywords = kw #\n,"],
)
def test_an_entry_whose_fields_cannot_be_followed_is_reported_and_kept(keywords):
    text = (
        "@string{kw = {mine}}\n@article{v,\n  "
        + keywords
        + "\n  abstract = {Graph neural networks for molecules.}\n}\n"
    )
    read = list(library_records(text.encode(), "lib.bib", "bibtex"))
    (error,) = [r for r in read if isinstance(r, InputError)]
    assert str(error) == (
        "lib.bib line 2: entry 'v': its fields cannot be followed to their end (a '#' joining "
        "nothing?); it is not tagged, and written back as it is"
    )
    assert not [r for r in read if not isinstance(r, (InputError, InputNotice))]
    round_trips(text, ["rl"])
