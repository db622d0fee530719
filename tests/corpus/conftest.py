"""What the review tests share: tagged papers to review, and the lines of a judgments file."""

from __future__ import annotations

import json

from ..conftest import tagged_record

ABSTRACT = "Multi-agent reinforcement learning on graphs."


def review_records():
    """Two tagged papers of the mini taxonomy, the first with a type."""
    return [
        tagged_record(
            "p1",
            [(["rl"], 0.9), (["graphs", "graphs.gnn"], 0.72)],
            abstract=ABSTRACT,
            title="One",
            venue="ICLR",
            year=2025,
            facets=[["type", "type.theory"]],
        ),
        tagged_record("p2", [(["graphs"], 0.5)], abstract="Graphs.", source="lab/2025"),
    ]


def judgments_in(path):
    """The lines of a judgments file, parsed."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def judged_line(paper_id="p1", abstract=ABSTRACT, **judged):
    """A judged line of the judged set's format, as text."""
    judged = {"areas": ["rl"], "main": ["rl"], "type": ["theory"], **judged}
    return json.dumps({"id": paper_id, "abstract": abstract, "judged": judged})
