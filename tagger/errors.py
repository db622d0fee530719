"""The exceptions tagger raises. The library raises; only the CLI prints and exits."""

from __future__ import annotations

STDIN_NAME = "<stdin>"  # how messages name standard input
# What a command stopped by Ctrl-C ("Interrupted") or SIGTERM ("Terminated") says, once.
STOPPED = (
    "{what}. JSON Lines already written are complete, and `tagger tag ... -o FILE --resume` "
    "continues the run; a Parquet file or a library is written whole at the end, so none was."
)


class TaggerError(Exception):
    """Base class of every error tagger raises on purpose."""


def where(source: str | None, line: int | None = None, record: int | None = None) -> str:
    """'papers.jsonl line 12: ', 'papers.json record 3: ', 'papers.csv: ' or ''."""
    if source is None:
        return ""
    if line is not None:
        return f"{source} line {line}: "
    if record is not None:
        return f"{source} record {record}: "
    return f"{source}: "


class InputNotice:
    """Something about an input worth saying that is no error: the header line of a paper
    list, read for the venue and year; or, a ``warning``, what may not be what was meant (a
    first line that may be a header, a paragraph read as several papers)."""

    def __init__(
        self, message: str, *, source: str, line: int | None = None, warning: bool = False
    ) -> None:
        self.message, self.source, self.line, self.warning = message, source, line, warning

    def __str__(self) -> str:
        return where(self.source, self.line) + self.message


class InputError(TaggerError):
    """A paper file (or one record in it) cannot be read.

    ``source`` and ``line`` say where; ``reason`` says what. ``str()`` gives the
    one-line form users see: ``papers.jsonl line 12: 'abstract': field required``.
    """

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        line: int | None = None,
        record: int | None = None,
        record_id: str | None = None,
    ) -> None:
        self.reason = reason
        self.source = source
        self.line = line  # 1-based line in the file, for line-based formats
        self.record = record  # 1-based element number, for a JSON array
        self.record_id = record_id
        super().__init__(self.where() + reason)

    def where(self) -> str:
        return where(self.source, self.line, self.record)


class TaxonomyError(TaggerError):
    """The taxonomy file is missing, not YAML, or breaks the schema. Carries every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class ModelError(TaggerError):
    """An embedding or spaCy model cannot be loaded."""
