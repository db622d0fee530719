"""The exceptions tagger raises. The library raises; only the CLI prints and exits."""

from __future__ import annotations

STDIN_NAME = "<stdin>"  # how messages name standard input


class TaggerError(Exception):
    """Base class of every error tagger raises on purpose."""


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
        if self.source is None:
            return ""
        if self.line is not None:
            return f"{self.source} line {self.line}: "
        if self.record is not None:
            return f"{self.source} record {self.record}: "
        return f"{self.source}: "


class TaxonomyError(TaggerError):
    """The taxonomy file is missing, not YAML, or breaks the schema. Carries every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class ModelError(TaggerError):
    """An embedding or spaCy model cannot be loaded."""
