"""Tables a person reads: a frame, its title, the assumptions it rests on, its footnotes.

A :class:`Table` is a pandas DataFrame (the values stay numbers, so a user can keep working on
them) that knows how it is written: :meth:`Table.text` for a terminal, :meth:`Table.html` for
the report and notebooks. Both write every number through :mod:`reviewlab.ui._numbers`, put ∞
in a table at most once in its footnote, and end with the assumptions line (censoring,
reaction, engine — docs/semantics.md, "What a replay assumes"), so no table leaves its
assumptions behind.

Invariants: one table never mixes two assumptions (:func:`summary_table` refuses runs that
differ in censoring, reaction or engine unless each column's label names its value); a policy
that hedges, has a breaker or idle timeouts adds its rows (:func:`policy_rows`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core._metric_names import METRICS
from reviewlab.ui._numbers import (
    cell,
    column_kind,
    infinity_footnote,
    is_infinite,
    label_of,
)

ASSUMPTION_KEYS = ("censored", "reaction", "engine")
"""What a replay assumes that one table never mixes (docs/semantics.md, "What a replay
assumes")."""

SUMMARY_ROWS = {
    metric.key: metric.label for metric in METRICS if metric.key not in ("cost_per_episode",)
}
"""Summary keys shown by default, in reading order, with the label a person reads."""

_CENSORING_WORDS = {
    "wedge": "a call the recording never saw return never returns",
    "observed": "a call the recording never saw return returns when the recording last saw it",
    "impute": "a call the recording never saw return returns at a seeded Kaplan-Meier draw",
    "bounds": "both ends: observed (optimistic) and wedge (pessimistic), one column each",
}


def assumptions_line(assumptions: Mapping[str, Any] | str) -> str:
    """One line naming what a table assumes: a replay's censoring, reaction and engine (and seed,
    time scale …), or a sentence for a table that replays nothing."""
    if isinstance(assumptions, str):
        return "assumes: " + assumptions
    parts = []
    if "censored" in assumptions:
        censored = str(assumptions["censored"])
        words = _CENSORING_WORDS.get(censored)
        parts.append(f"censored={censored}" + (f" ({words})" if words else ""))
    parts += [
        f"{key}={assumptions[key]}"
        for key in assumptions
        if key != "censored" and assumptions[key] is not None
    ]
    return "assumes: " + ", ".join(parts)


class Table(pd.DataFrame):
    """A DataFrame with a title, its assumptions and notes, written in the one number style.

    ``orient="columns"``: each column holds one kind of number (read off its name);
    ``orient="rows"``: each row does (a summary: one row per metric). ``assumptions`` is a
    replay's assumptions (a mapping) or a sentence; ``None`` only for tables that replay
    nothing and say so in their title.
    """

    _metadata = ["title", "assumptions", "notes", "orient"]
    title: str = ""
    assumptions: Mapping[str, Any] | str | None = None
    notes: tuple[str, ...] = ()
    orient: str = "columns"

    @property
    def _constructor(self) -> Any:
        return Table

    # -- writing ---------------------------------------------------------------
    def cells(self) -> tuple[list[str], list[list[str]], list[bool], bool]:
        """Header, rows of text, which columns are numeric, whether ∞ appears."""
        frame = pd.DataFrame(self)
        if not isinstance(frame.index, pd.RangeIndex):
            frame = frame.reset_index()
        columns = [str(c) for c in frame.columns]
        if self.orient == "rows":
            kinds = [[column_kind(str(row[0]))] * len(columns) for row in frame.itertuples(False)]
        else:
            kinds = [[column_kind(c) for c in columns]] * len(frame)
        infinite = False
        rows = []
        for row, row_kinds in zip(frame.itertuples(index=False, name=None), kinds, strict=True):
            texts = []
            for value, kind in zip(row, row_kinds, strict=True):
                infinite = infinite or is_infinite(value)
                texts.append(cell(value, kind))
            rows.append(texts)
        numeric = [_numeric(frame.iloc[:, i]) for i in range(len(columns))]
        return columns, rows, numeric, infinite

    def footnotes(self, infinite: bool) -> list[str]:
        """The ∞ footnote (once, when ∞ appears), the notes, then the assumptions line."""
        lines = []
        if infinite:
            assumptions = self.assumptions if isinstance(self.assumptions, Mapping) else None
            lines.append(infinity_footnote(assumptions))
        lines += list(self.notes)
        if self.assumptions is not None:
            lines.append(assumptions_line(self.assumptions))
        return lines

    def grid(self) -> str:
        """The aligned rows alone (numbers right-aligned, text left-aligned)."""
        columns, rows, numeric, _ = self.cells()
        return _grid(columns, rows, numeric)

    def text(self) -> str:
        """Title, aligned rows, footnotes and the assumptions line, for a terminal."""
        columns, rows, numeric, infinite = self.cells()
        head = [self.title] if self.title else []
        return "\n".join([*head, _grid(columns, rows, numeric), *self.footnotes(infinite)])

    def html(self) -> str:
        """The table as HTML: caption, rows, and its footnotes and assumptions below it."""
        columns, rows, numeric, infinite = self.cells()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        right = [' class="num"' if flag else "" for flag in numeric]
        body = "".join(
            "<tr>"
            + "".join(f"<td{right[i]}>{html.escape(text)}</td>" for i, text in enumerate(row))
            + "</tr>"
            for row in rows
        )
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        notes = "".join(
            f'<p class="{"assumes" if note.startswith("assumes: ") else "note"}">'
            f"{html.escape(note)}</p>"
            for note in self.footnotes(infinite)
        )
        return (
            f'<div class="wide"><table>{caption}<thead><tr>{head}</tr></thead>'
            f'<tbody>{body}</tbody></table><div class="foot">{notes}</div></div>'
        )

    def __repr__(self) -> str:
        return self.text()

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return self.html()


def as_table(
    data: pd.DataFrame | Iterable[Mapping[str, Any]],
    *,
    title: str | None = None,
    assumptions: Mapping[str, Any] | str | None = None,
    notes: Sequence[str] = (),
    orient: str | None = None,
) -> Table:
    """``data`` as a :class:`Table` (a Table's own metadata kept unless given here)."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    table = Table(frame.copy())
    if isinstance(data, Table):
        table.title, table.assumptions = data.title, data.assumptions
        table.notes, table.orient = tuple(data.notes), data.orient
    else:
        table.title, table.assumptions, table.notes, table.orient = "", None, (), "columns"
    if title is not None:
        table.title = title
    if assumptions is not None:
        table.assumptions = assumptions
    if notes:
        table.notes = (*table.notes, *notes)
    if orient is not None:
        table.orient = orient
    return table


def text_table(
    data: pd.DataFrame | Iterable[Mapping[str, Any]], *, index: bool | None = None
) -> str:
    """An aligned plain-text table in the one number style, with its footnotes (∞, notes,
    assumptions). The index is shown when it carries names, unless ``index`` says otherwise."""
    table = as_table(data)
    if index is False and not isinstance(table.index, pd.RangeIndex):
        table = as_table(table.reset_index(drop=True))
    return table.text()


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


def _grid(columns: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            value.rjust(widths[i]) if numeric[i] else value.ljust(widths[i])
            for i, value in enumerate(values)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * width for width in widths)
    if not rows:
        return "\n".join([line(columns), rule, "(no rows)"])
    return "\n".join([line(columns), rule, *(line(row) for row in rows)])


# -- summaries side by side ------------------------------------------------------------------
def policy_rows(result: Any) -> dict[str, Any]:
    """The rows a replay's policy adds to its summary: hedged calls and the extra-call share
    (hedges), calls the breaker withheld (a breaker), calls bounded by idleness (idle
    timeouts); empty for a policy that sets none of them."""
    from reviewlab.core._vocab import SOURCE_GAP_WITHHELD

    policy = result.policy  # the one record of the policy replayed
    rows: dict[str, Any] = {}
    summary = result.summary
    if policy.hedges:
        rows["hedges"] = int(summary.get("hedges", 0))
        rows["extra_call_share"] = float(summary.get("extra_call_share", 0.0))
    if policy.breaker is not None:
        rows["withheld_calls"] = int((result.calls["source_gap"] == SOURCE_GAP_WITHHELD).sum())
    if policy.idle_sec:
        rows["idle_bound_calls"] = int((result.calls["bound_by"] == "idle").sum())
    return rows


_OPTIONAL_ROWS = ("hedges", "extra_call_share", "withheld_calls", "idle_bound_calls")
"""Summary rows shown only when a run's policy sets the part they count."""


def common_assumptions(
    labelled: Mapping[str, Mapping[str, Any]], *, what: str = "summary_table"
) -> dict[str, Any]:
    """What every labelled run assumes; a key that differs must be named in each label (then it
    reads ``per column``), else a ValueError: one table never mixes two assumptions."""
    if not labelled:
        return {}
    keys = list(dict.fromkeys(k for a in labelled.values() for k in a))
    common: dict[str, Any] = {}
    for key in keys:
        values = [a.get(key) for a in labelled.values()]
        if all(v == values[0] for v in values):
            common[key] = values[0]
            continue
        unnamed = [label for label, a in labelled.items() if str(a.get(key)) not in str(label)]
        if key in ASSUMPTION_KEYS and unnamed:
            differ = ", ".join(f"{label}: {a.get(key)}" for label, a in labelled.items())
            raise ValueError(
                f"{what}: the runs assume different {key} ({differ}); one table never mixes "
                f"two — split the table, or name the {key} in each column's label"
            )
        common[key] = "per column (" + ", ".join(dict.fromkeys(map(str, values))) + ")"
    return common


def summary_table(
    summaries: Mapping[str, Any],
    keys: Sequence[str] | None = None,
    *,
    assumptions: Mapping[str, Any] | str | None = None,
    title: str = "",
) -> Table:
    """Runs side by side: one row per metric (the label a person reads), one column per run.

    A run is a :class:`~reviewlab.engines._result.ReplayResult` (its summary, its policy's rows
    and its assumptions) or a summary mapping (then ``assumptions`` says what they rest on).
    Runs that assume different censoring, reactions or engines are refused unless each label
    names its value (:func:`common_assumptions`).
    """
    values: dict[str, dict[str, Any]] = {}
    found: dict[str, Mapping[str, Any]] = {}
    parts: set[str] = set()  # rows a run's policy adds: shown even at 0
    for label, run in summaries.items():
        if hasattr(run, "summary") and hasattr(run, "assumptions"):
            extra = policy_rows(run)
            parts.update(extra)
            values[label] = {**run.summary, **extra}
            found[label] = run.assumptions
        else:
            values[label] = dict(run)
    if found and assumptions is None:
        assumptions = common_assumptions(found)
    if keys is None:
        keys = [
            key
            for key in SUMMARY_ROWS
            if any(key in s for s in values.values())
            and (
                key not in _OPTIONAL_ROWS
                or key in parts
                or any(s.get(key) for s in values.values())
            )
        ]
    else:
        keys = list(keys)
    rows = {label_of(key): [summary.get(key) for summary in values.values()] for key in keys}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(values), dtype=object)
    frame.index.name = "metric"
    return as_table(frame, title=title, assumptions=assumptions, orient="rows")


OBJECTIVE_ROWS = tuple(metric.key for metric in METRICS if metric.objective)
"""The summary figures a policy is judged on, all to be minimised (what ``saved`` and ``paid``
name when they change)."""


def changes(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    keys: Sequence[str] | None = None,
) -> tuple[list[str], list[str]]:
    """What changed from ``before`` to ``after`` among ``keys`` (default:
    :data:`OBJECTIVE_ROWS`): ``(saved, paid)`` as ``"wall p95 54.99 s → 54.85 s"`` texts.

    Every key is one to minimise; a key that went down is saved, one that went up is paid.
    """
    keys = list(keys) if keys is not None else list(OBJECTIVE_ROWS)
    saved: list[str] = []
    paid: list[str] = []
    for key in keys:
        if key not in before or key not in after:
            continue
        old, new = before[key], after[key]
        if old is None or new is None or old == new:
            continue
        if _missing(old) and _missing(new):
            continue
        kind = column_kind(key)
        text = f"{label_of(key)} {cell(old, kind)} → {cell(new, kind)}"
        (saved if new < old else paid).append(text)
    return saved, paid


def changes_lines(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    keys: Sequence[str] | None = None,
    *,
    against: str = "",
) -> list[str]:
    """``saved: …`` and ``paid: …`` lines naming every objective that changed (``against`` names
    the policy ``before`` ran under); one line saying nothing changed otherwise."""
    saved, paid = changes(before, after, keys)
    than = f" (against {against})" if against else ""
    if not saved and not paid:
        return [f"nothing changed{than}"]
    lines = [f"saved{than}: " + "; ".join(saved)] if saved else [f"saved{than}: nothing"]
    if paid:
        lines.append("paid: " + "; ".join(paid))
    return lines


def _missing(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
