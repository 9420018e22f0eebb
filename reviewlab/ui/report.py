"""Presenting results: aligned text tables, CSV/Parquet files, and the HTML report.

Thin over pandas and matplotlib: nothing here computes a metric. Frames come
from :mod:`reviewlab.engines.replay`, :mod:`reviewlab.analysis.sweep` and
:mod:`reviewlab.analysis.tune`;
figures come from :mod:`reviewlab.ui.charts`.

Lifecycle of a report: ``Report(title)`` → ``heading`` / ``paragraph`` /
``table`` / ``figure`` / ``code`` blocks in reading order → ``write(out_dir)``.
``figure`` saves its PNG into ``out_dir`` as soon as it is added (and closes the
figure, so a long demo does not hoard memory); ``write`` writes
``report.html`` last, through a temporary file, so a reader never sees a
half-written report. The HTML is self-contained apart from the PNGs beside it:
inline CSS, no scripts, no network.
"""

from __future__ import annotations

import decimal
import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core.atomic import atomic_path, write_text_atomic

__all__ = [
    "INFINITE_TEXT",
    "RECEIPT_COLUMNS",
    "SUMMARY_ROWS",
    "SWEEP_METRICS",
    "Report",
    "assumptions_line",
    "format_value",
    "receipts_table",
    "summary_table",
    "sweep_view",
    "text_table",
    "write_table",
]

RECEIPT_COLUMNS = (
    "round",
    "tool",
    "outcome",
    "duration_sec",
    "bound_sec",
    "bound_by",
    "source_gap",
    "result_chars",
    "opened_path",
    "start_line",
    "end_line",
)

# Summary keys shown by default, in reading order, with the label a person reads.
SUMMARY_ROWS = {
    "episodes": "episodes",
    "calls": "dispatched calls",
    "abandoned_call_rate": "abandoned-call rate",
    "coverage_loss_rate": "coverage-loss rate",
    "timeout_coverage_loss_rate": "coverage lost to timeouts",
    "inherent_coverage_loss_rate": "coverage lost by failing reads",
    "wall_p50_sec": "wall p50 (s)",
    "wall_p95_sec": "wall p95 (s)",
    "wall_p99_sec": "wall p99 (s)",
    "wall_max_sec": "wall max (s)",
    "max_silence_sec": "longest silence (s)",
    "zombie_sec": "zombie seconds",
    "zombie_finite_sec": "zombie seconds (returning)",
    "wedged_zombies": "wedged zombies",
    "peak_loose_workers": "peak loose workers",
    "deadline_bound_share": "deadline-bound share",
}


INFINITE_TEXT = "∞ (a censored call never returns)"
"""How an infinite figure prints: only a call that never returns makes a figure infinite."""

_HUGE = 1e15
"""Numbers this large or larger are printed in scientific notation."""


def format_value(value: Any) -> str:
    """One cell as text: thousands separators for big numbers, 4 significant digits for small."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        if abs(value) >= _HUGE:  # 4 significant digits, not hundreds of them
            return format(decimal.Decimal(value), ".4g")
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return INFINITE_TEXT if value > 0 else "-∞"
        if abs(value) >= _HUGE:  # 1e308 prints as 1e+308, not a 309-digit number
            return f"{value:.4g}"
        if value == int(value):
            return f"{int(value):,}"
        if abs(value) >= 100:
            return f"{value:,.1f}"
        return f"{value:.4g}"
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # NumPy scalars
        try:
            return format_value(value.item())
        except (TypeError, ValueError):
            pass
    return str(value)


def _frame(data: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    return data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def _numeric(column: pd.Series) -> bool:
    """A column is right-aligned when every value present is a number (object columns included)."""
    values = [
        value
        for value in column
        if value is not None and not (isinstance(value, float) and math.isnan(value))
    ]
    return bool(values) and all(_is_number(value) for value in values)


def text_table(
    data: pd.DataFrame | Iterable[Mapping[str, Any]], *, index: bool | None = None
) -> str:
    """An aligned plain-text table (numbers right-aligned, text left-aligned).

    The index is shown when it carries names (a non-default index), unless ``index`` says otherwise.
    """
    frame = _frame(data)
    if index is None:
        index = not isinstance(frame.index, pd.RangeIndex)
    if index:
        frame = frame.reset_index()
    columns = [str(column) for column in frame.columns]
    cells = [
        [format_value(value) for value in row] for row in frame.itertuples(index=False, name=None)
    ]
    numeric = [_numeric(frame.iloc[:, i]) for i in range(len(columns))]
    widths = [max([len(name)] + [len(row[i]) for row in cells]) for i, name in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            value.rjust(widths[i]) if numeric[i] else value.ljust(widths[i])
            for i, value in enumerate(values)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * width for width in widths)
    if not cells:
        return "\n".join([line(columns), rule, "(no rows)"])
    return "\n".join([line(columns), rule, *(line(row) for row in cells)])


_CENSORING_WORDS = {
    "wedge": "a censored call never returns",
    "observed": "a censored call returns when the recording last saw it",
    "impute": "a censored call returns at a seeded Kaplan-Meier draw",
    "bounds": "both ends: observed (optimistic) and wedge (pessimistic)",
}


def assumptions_line(assumptions: Mapping[str, Any]) -> str:
    """One line naming what a replay assumed (docs/semantics.md, "What a replay assumes"), for
    the CLI and reports."""
    censored = str(assumptions.get("censored", "wedge"))
    parts = [f"censored={censored} ({_CENSORING_WORDS.get(censored, censored)})"]
    parts += [
        f"{key}={format_value(assumptions[key])}"
        for key in ("reaction", "engine", "seed", "time_scale", "overhead_share")
        if key in assumptions
    ]
    return "assumes: " + ", ".join(parts)


def summary_table(
    summaries: Mapping[str, Mapping[str, Any]], keys: Sequence[str] | None = None
) -> pd.DataFrame:
    """Replay summaries side by side: one row per metric, one column per labelled run."""
    keys = (
        list(keys)
        if keys is not None
        else [key for key in SUMMARY_ROWS if any(key in s for s in summaries.values())]
    )
    rows = {
        SUMMARY_ROWS.get(key, key): [summary.get(key) for summary in summaries.values()]
        for key in keys
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(summaries))
    frame.index.name = "metric"
    return frame.astype(object)


SWEEP_METRICS = (
    "abandoned_call_rate",
    "timeout_coverage_loss_rate",
    "coverage_loss_rate",
    "wall_p95_sec",
    "max_silence_sec",
    "zombie_sec",
    "peak_loose_workers",
)
"""The metrics :func:`sweep_view` shows (the written sweep file keeps every column)."""


def sweep_view(
    frame: pd.DataFrame, *, sort_by: str | None = None, top: int | None = None
) -> pd.DataFrame:
    """A sweep frame narrowed for reading: the parameters that vary,
    the key metrics, the Pareto flag."""
    metric_columns = [c for c in SWEEP_METRICS if c in frame.columns]
    params = [
        c
        for c in frame.columns
        if c not in metric_columns
        and c not in ("policy_name", "pareto")
        and (c.startswith(("timeout.", "narrowing.", "scale")))
    ]
    # Per-tool timeouts and the narrowing mode always name a point; the other
    # parameters only when they vary.
    kept = [
        c
        for c in params
        if c.startswith("timeout.") or c == "narrowing.mode" or frame[c].nunique(dropna=False) > 1
    ] or params[:1]
    view = frame[[*kept, *metric_columns, *(["pareto"] if "pareto" in frame.columns else [])]]
    if sort_by is not None:
        view = view.sort_values(sort_by, kind="stable")
    view = view.reset_index(drop=True)
    return view.head(top) if top is not None else view


def receipts_table(receipts: Iterable[Any]) -> pd.DataFrame:
    """Receipts (``ToolReceipt`` objects or their dicts) as a frame with :data:`RECEIPT_COLUMNS`."""
    rows = [
        receipt.to_dict() if hasattr(receipt, "to_dict") else dict(receipt) for receipt in receipts
    ]
    frame = pd.DataFrame(rows)
    present = [column for column in RECEIPT_COLUMNS if column in frame.columns]
    frame = frame[present] if present else frame
    if "source_gap" in frame.columns:
        frame["source_gap"] = frame["source_gap"].fillna("")
    return frame.astype(object).where(frame.notna(), None)


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as CSV or Parquet, chosen by the file's extension, whole or not at all."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ValueError(f"{path}: expected a .csv or .parquet file name")
    with atomic_path(path) as tmp:
        if suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
    return path


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em;
       color: #222; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #bbb; }
div.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0 2em; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption, caption { color: #555; font-size: .9em; text-align: left; padding: .3em 0; }
pre { background: #f6f6f6; padding: .8em; overflow-x: auto; }
"""


def _html_table(frame: pd.DataFrame, caption: str) -> str:
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    head = "".join(f"<th>{html.escape(str(column))}</th>" for column in frame.columns)
    body = []
    for row in frame.itertuples(index=False, name=None):
        cells = []
        for value in row:
            css = ' class="num"' if _is_number(value) else ""
            cells.append(f"<td{css}>{html.escape(format_value(value))}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    table = f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return (
        f'<div class="wide">{table}</div>'  # a wide table scrolls instead of overflowing the page
    )


@dataclass
class Report:
    """An HTML report assembled block by block; PNGs are written into
    ``out_dir`` as figures are added."""

    title: str
    out_dir: Path
    blocks: list[str] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)

    def heading(self, text: str) -> None:
        """Append a section heading (escaped)."""
        self.blocks.append(f"<h2>{html.escape(text)}</h2>")

    def paragraph(self, text: str) -> None:
        """Append a paragraph of plain text (escaped)."""
        self.blocks.append(f"<p>{html.escape(text)}</p>")

    def table(self, data: pd.DataFrame | Iterable[Mapping[str, Any]], caption: str = "") -> None:
        """Append a table of a frame or of rows (dicts), with an optional caption."""
        self.blocks.append(_html_table(_frame(data), caption))

    def code(self, text: str) -> None:
        """Append preformatted text (CLI output, a policy file), escaped."""
        self.blocks.append(f"<pre>{html.escape(text)}</pre>")

    def figure(self, figure: Any, name: str, caption: str = "") -> Path:
        """Save a matplotlib figure as ``out_dir/name.png``, close it, and show it in the report."""
        path = self.out_dir / f"{name}.png"
        with atomic_path(path) as tmp:
            figure.savefig(tmp, dpi=110, format="png")
        import matplotlib.pyplot as plt

        plt.close(figure)
        self.images.append(path)
        cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        alt = html.escape(caption or name)
        self.blocks.append(
            f'<figure><img src="{html.escape(path.name)}" alt="{alt}">{cap}</figure>'
        )
        return path

    def render(self) -> str:
        """The whole report as one standalone HTML page (images referenced by file name)."""
        title = html.escape(self.title)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{title}</title><style>{_CSS}</style></head>\n<body><h1>{title}</h1>\n"
            + "\n".join(self.blocks)
            + "\n</body></html>\n"
        )

    def write(self, name: str = "report.html") -> Path:
        """Write the HTML beside its PNGs (atomically) and return its path."""
        return write_text_atomic(self.out_dir / name, self.render())
