"""The HTML report, and table files: what the demo writes into ``out/``.

Thin over pandas and matplotlib: tables are :class:`~reviewlab.ui._tables.Table` s in the one
number style of :mod:`reviewlab.ui._numbers`, figures come from :mod:`reviewlab.ui.charts`.

Lifecycle of a report: ``Report(title)`` → ``heading`` / ``paragraph`` / ``table`` /
``figure`` / ``code`` blocks in reading order → ``write(out_dir)``. A figure's PNG is saved
(and the figure closed) as soon as it is added; ``report.html`` is written last, atomically.
Invariants: the HTML is self-contained apart from the PNGs beside it (inline CSS, no scripts,
no network); every table states its assumptions (:meth:`Report.table` refuses one that does
not). The notebooks' table helpers live in :mod:`reviewlab.ui._tables`,
:mod:`reviewlab.ui._sweeps` and :mod:`reviewlab.ui._calls`, re-exported here.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from reviewlab.core._atomic import atomic_path, write_text_atomic
from reviewlab.ui._numbers import INFINITY, Kind, cell, column_kind
from reviewlab.ui._tables import (
    as_table,
)

INFINITE_TEXT = INFINITY
"""How an infinite figure prints; its table says why in one footnote."""


def format_value(value: Any, kind: Kind | None = None, *, name: str | None = None) -> str:
    """One value in the one number style (:func:`reviewlab.ui._numbers.cell`): of ``kind``, or
    of the kind the column ``name`` holds, else a plain number."""
    if kind is None:
        kind = column_kind(name) if name is not None else "number"
    return cell(value, kind)


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
div.foot { margin: -1.2em 0 1.5em; }
p.assumes, p.note { color: #555; font-size: .85em; margin: .15em 0; }
p.assumes { font-style: italic; }
"""


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

    def table(
        self,
        data: pd.DataFrame | Iterable[Mapping[str, Any]],
        caption: str = "",
        *,
        assumptions: Mapping[str, Any] | str | None = None,
    ) -> None:
        """Append a table (a :class:`~reviewlab.ui._tables.Table`, a frame or rows) with its
        caption, footnotes and assumptions; a table that states no assumptions is refused."""
        table = as_table(data, title=caption or None, assumptions=assumptions)
        if table.assumptions is None:
            raise ValueError(
                f"Report.table: the table {caption or table.title!r} states no assumptions; pass "
                "assumptions= (a replay's, or a sentence saying what it rests on)"
            )
        self.blocks.append(table.html())

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
