"""The figures of a fit, as Markdown, and its precision-recall curve, held out."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..corpus.judged import JudgedReport
from ..errors import TaggerError
from ..io.files import write_atomic

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
CURVE = tuple(sorted({*THRESHOLDS, *(x / 20 for x in range(1, 20))}))
UNTITLED = "title-less papers (paper lists, and abstracts whose title was removed)"
KEYS = (
    "type_precision",
    "papers_with_a_wrong_type",
    "type_recall",
    "tag_precision",
    "papers_with_a_wrong_tag",
    "area_recall",
    "area_recall_lenient",
    "untagged",
    "tags_per_paper",
    "first_tag_is_specific",
    "first_tag_is_main",
    "root_first_child_judged",
    "largest_calibration_gap",
)


def summary(report: JudgedReport) -> dict[str, float]:
    """The headline figures of a judged report, by KEYS."""
    data = report.as_dict()
    types = {f"type_{key}": value for key, value in data["types"].items()}
    types["papers_with_a_wrong_type"] = data["types"]["papers_with_a_wrong_type"]
    return {key: (data | types)[key] for key in KEYS}


def curve_table(curve: Sequence[tuple[float, dict[str, float]]]) -> list[str]:
    """The held-out figures at each of THRESHOLDS, as Markdown table lines."""
    lines = [
        "| min_score | " + " | ".join(KEYS) + " |",
        "| --- " * (len(KEYS) + 1) + "|",
    ]
    for threshold, figures in curve:
        if threshold in THRESHOLDS:
            row = " | ".join(f"{figures[key]:.3f}" for key in KEYS)
            lines.append(f"| {threshold} | {row} |")
    return lines


def check_drawable() -> None:
    """Refuse, before a fit begins, a curve that could not be drawn at its end."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise TaggerError(
            "--curve draws with matplotlib, which is not installed: pip install 'tagger[plot]' "
            "(or leave --curve out)"
        ) from None


def draw(
    curves: dict[str, Sequence[tuple[float, dict[str, float]]]],
    default: float,
    path: str | Path,
    *,
    title: str = "Held out: tags against the judged set, by --min-score",
) -> None:
    """Precision against recall (strict, and lenient dashed) per named curve, one point per
    min_score, the default marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 5.2), dpi=120)
    for (name, curve), color in zip(
        curves.items(), ("tab:blue", "tab:orange", "tab:green"), strict=False
    ):
        for key, style, label in (
            ("area_recall", "-", "strict"),
            ("area_recall_lenient", "--", "lenient"),
        ):
            ax.plot(
                [f[key] for _, f in curve],
                [f["tag_precision"] for _, f in curve],
                style,
                color=color,
                marker="o",
                markersize=3,
                label=f"{name}: recall, {label}",
            )
            for threshold, f in curve:
                if abs(threshold - default) < 1e-9:
                    ax.plot([f[key]], [f["tag_precision"]], "k*", markersize=10)
    ax.annotate("* default --min-score", xy=(0.01, 0.01), xycoords="axes fraction")
    ax.set_xlabel("area recall (judged areas listed)")
    ax.set_ylabel("tag precision")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    picture = io.BytesIO()
    try:
        fig.savefig(picture, format="png")
    finally:
        plt.close(fig)
    write_atomic(path, picture.getvalue())  # the old picture or the new, whole


def as_json(figures: dict[str, Any]) -> dict[str, Any]:
    """Figures rounded for a record."""
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in figures.items()}
