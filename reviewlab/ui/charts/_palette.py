"""The one home of reviewlab's colours: named policies, tools, slot states and outcomes.

A policy keeps its colour in every view — the report, the notebooks, the
dashboard — because every chart asks :func:`policy_color` (and every
per-tool curve asks :func:`tool_color`) instead of taking the next colour of
matplotlib's cycle, which depends on drawing order.

Rules: a name in :data:`POLICY_COLORS` (or :data:`TOOL_COLORS`) has its fixed
colour; any other name gets one of :data:`EXTRA_COLORS`, chosen by a stable hash
of the name (CRC-32, not Python's salted ``hash``), so it is the same in every
process and on every run. The colours are the colour-blind-safe Okabe–Ito set
plus darker tones, all dark enough for black-on-white labels beside them.
"""

from __future__ import annotations

import zlib

from reviewlab.core._policy import PRE_FIX_LABEL
from reviewlab.core._vocab import (
    OUTCOME_ERROR,
    OUTCOME_EXECUTED,
    OUTCOME_REFUSED,
    OUTCOME_WITHHELD,
)

POLICY_COLORS = {
    PRE_FIX_LABEL: "#d55e00",
    "unbounded": "#d55e00",
    "pre-fix": "#d55e00",
    "ouroboros": "#0072b2",
    "recommended": "#009e73",
    "tuned": "#009e73",
}
"""Fixed colours of the policies every view names (pre-fix vermilion,
ouroboros blue, recommended green)."""

TOOL_COLORS = {
    "read_file": "#0072b2",
    "list_files": "#009e73",
    "search_code": "#cc79a7",
    "query_code": "#e69f00",
}
"""Fixed colours of the inspection tools."""

EXTRA_COLORS = (
    "#56b4e9",
    "#8c564b",
    "#7f3c8d",
    "#3969ac",
    "#b8860b",
    "#11a579",
    "#e73f74",
    "#4b4b8f",
)
"""Colours for any other name, picked by a stable hash of it."""

STATE_COLORS = {"busy": "#4c72b0", "silent": "#dd3333", "idle": "#e5e5e5", "zombie": "#e69f00"}
"""Reviewer-slot states on a pool timeline."""

OUTCOME_COLORS: dict[str, str] = {
    OUTCOME_EXECUTED: "#4c9f70",
    OUTCOME_ERROR: "#c44e52",
    OUTCOME_REFUSED: "#8c8c8c",
    OUTCOME_WITHHELD: "#8c8c8c",
}
"""Call outcomes on an episode timeline."""

METRIC_COLORS = {
    "abandoned_call_rate": "#c44e52",
    "timeout_coverage_loss_rate": "#4c72b0",
    "coverage_loss_rate": "#9ecae1",
    "model_send": "#8172b2",
    "zombie": "#e69f00",
}
"""Bars of one metric (per-tool rates) and timeline elements that are not states or outcomes."""

POINT_COLOR = "#9aa7b8"
"""Sweep points off the Pareto front."""
FRONT_COLOR = "#a50f15"
"""The Pareto front: red dots on a red staircase (named policies keep their own colours over
it)."""


def _stable(name: str, table: dict[str, str]) -> str:
    if name in table:
        return table[name]
    return EXTRA_COLORS[zlib.crc32(name.encode("utf-8")) % len(EXTRA_COLORS)]


def policy_color(name: str) -> str:
    """The colour of the policy called ``name``, the same in every chart and every run."""
    if name in POLICY_COLORS:
        return POLICY_COLORS[name]
    lowered = name.lower()
    for known in ("pre-fix", "unbounded", "recommended", "ouroboros"):
        # "ouroboros, inherit" or "recommended (0.5 %)" keep the colour of the policy they name.
        if lowered.startswith(known):
            return POLICY_COLORS[known]
    return _stable(name, POLICY_COLORS)


def tool_color(tool: str) -> str:
    """The colour of ``tool``'s curves and bars, the same in every chart and every run."""
    return _stable(tool, TOOL_COLORS)
