"""The one number style of every output: rates as percentages, counts as integers, seconds with
their unit, ∞ once per table with a footnote (docs/metrics.md, "How numbers are written").

Every table the report, the CLI, the demo, the notebooks' helpers and the dashboard print goes
through :func:`cell`; the kind of number a column holds is read off its name by
:func:`column_kind`. Rates are ``100·x`` with three significant digits, never scientific;
seconds carry ``s`` (∞ is ``∞``); counts print as integers with thousands separators; anything
else with four significant digits. Nothing here computes a figure; it only writes one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from reviewlab.core._metric_names import METRICS

Kind = Literal["rate", "seconds", "count", "number", "text"]
KINDS: tuple[Kind, ...] = ("rate", "seconds", "count", "number", "text")

INFINITY = "∞"
"""How an infinite figure is written; the table it appears in carries one footnote saying why."""

LABELS: dict[str, str] = {metric.key: metric.label for metric in METRICS}
"""Summary keys and the label a person reads (declared once, in
:data:`reviewlab.core._metric_names.METRICS`)."""

SILENCE = (
    "silence: how long a reviewer slot hears nothing from its model between two model sends of "
    "one episode — from the end of one send to the start of the next, while the episode waits "
    "on the calls of one round"
)
"""The one definition of silence (docs/metrics.md, "Silence"): ``max_silence_sec``, the
incident's ranking and the charts all mean this."""

_BY_LABEL = {label: key for key, label in LABELS.items()}
_UNITS: dict[str, Kind] = {metric.key: metric.unit for metric in METRICS}

_RATE_NAMES = frozenset(
    {
        "coverage_loss",
        "timeout_coverage_loss",
        "survival_quantile",
        "predicted_timeout_loss",
        "abandoned_rate",
        "estimate",
        "limit",
        "predicted_unseen",
        "predicted (unseen episodes)",
        "share",
    }
)
_RATE_PARTS = ("_rate", "_share", "_loss_upper", "_loss_predicted", "upper bound")
_COUNT_NAMES = frozenset(
    {
        "episodes",
        "calls",
        "censored",
        "round",
        "rounds",
        "call_index",
        "result_chars",
        "hedges",
        "wedged_zombies",
        "peak_loose_workers",
        "points",
        "rank",
        "completed_abandoned",
        "deadline_bounds",
        "start_line",
        "end_line",
        "total_lines",
        "retries",
        "slots",
        "certificate_rank",
        "observations",
        "events",
    }
)
_COUNT_SUFFIXES = ("_calls", "_lines", "_rounds", "_zombies", "_episodes", "_count")


_HUGE = 1e15
"""Numbers this large or larger are written with four significant digits in scientific notation."""


def label_of(key: str) -> str:
    """The label a person reads for a summary key (the key itself when it has none)."""
    return LABELS.get(key, key)


def column_kind(name: str) -> Kind:
    """What a column (or a summary row) named ``name`` holds: a rate, seconds, a count, a plain
    number or text — read off the name, so every output writes it the same way."""
    key = _BY_LABEL.get(name, name)
    if key in _UNITS:  # a summary figure: its declared unit
        return _UNITS[key]
    if key.endswith("_sec") or "_sec_" in key or "_sec." in key or key.endswith("(s)"):
        return "seconds"
    if key in ("timeout", "bound", "silence") or key.startswith(("timeout.", "hedge_after")):
        return "seconds"
    if key in _COUNT_NAMES or key.endswith(_COUNT_SUFFIXES):
        return "count"
    if key in _RATE_NAMES or key.startswith("upper_") or any(p in key for p in _RATE_PARTS):
        return "rate"
    return "number"


def is_infinite(value: Any) -> bool:
    """Whether ``value`` is a positive infinity (a float or a NumPy scalar)."""
    value = plain_value(value)
    return isinstance(value, float) and math.isinf(value) and value > 0


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def plain_value(value: Any) -> Any:
    """A NumPy or pandas scalar as the Python value it holds (other values unchanged)."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        try:
            return value.item()
        except (TypeError, ValueError):
            return value
    return value


def _significant(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, positional (never ``1e-05``), separators."""
    if value == 0:
        return "0"
    if abs(value) >= _HUGE:  # 1e308 is written 1e+308, not as 309 digits
        return f"{value:.4g}"
    exponent = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - exponent, 0)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def rate_text(value: float) -> str:
    """A rate (a fraction) as a percentage: ``0.01662`` → ``1.66 %``; ``0`` → ``0 %``."""
    if _missing(value):
        return "–"
    value = float(value)
    if math.isinf(value):
        return INFINITY if value > 0 else "-" + INFINITY
    percent = 100 * value
    if percent == 0:
        return "0 %"
    if 0 < abs(percent) < 0.0001:
        return "< 0.0001 %" if percent > 0 else "> -0.0001 %"
    return f"{_significant(percent, 3)} %"


def seconds_text(value: float) -> str:
    """Seconds with their unit: ``0.418 s``, ``54.99 s``, ``610.9 s``, ``26,160 s``, ``∞``."""
    if _missing(value):
        return "–"
    value = float(value)
    if math.isinf(value):
        return INFINITY if value > 0 else "-" + INFINITY
    if value == 0:
        return "0 s"
    size = abs(value)
    if size >= _HUGE:
        return f"{value:.4g} s"
    if size >= 1000:
        return f"{value:,.0f} s"
    if size >= 100:
        return f"{value:,.0f} s" if value == round(value) else f"{value:,.1f} s"
    if size < 0.0001:
        return "< 0.0001 s" if value > 0 else "> -0.0001 s"
    return f"{_significant(value, 4)} s"


def count_text(value: Any) -> str:
    """A count as an integer with separators (a float that holds one included)."""
    if _missing(value):
        return "–"
    value = plain_value(value)
    if isinstance(value, float):
        if math.isinf(value):
            return INFINITY if value > 0 else "-" + INFINITY
        if value != int(value):
            return number_text(value)
        value = int(value)
    return f"{value:.4g}" if abs(value) >= _HUGE else f"{value:,}"


def number_text(value: Any) -> str:
    """Any other number: four significant digits, separators, integers as integers."""
    if _missing(value):
        return "–"
    value = plain_value(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:.4g}" if abs(value) >= _HUGE else f"{value:,}"
    if isinstance(value, float):
        if math.isinf(value):
            return INFINITY if value > 0 else "-" + INFINITY
        if abs(value) >= _HUGE:
            return f"{value:.4g}"
        if value == int(value):
            return f"{int(value):,}"
        return _significant(value, 4)
    return str(value)


def cell(value: Any, kind: Kind = "number") -> str:
    """One value as text in the style of its ``kind``; text, booleans and missing values alike
    in every kind (``yes``/``no``, ``–``)."""
    value = plain_value(value)
    if _missing(value):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, int | float):
        return str(value)
    if kind == "rate":
        return rate_text(value)
    if kind == "seconds":
        return seconds_text(value)
    if kind == "count":
        return count_text(value)
    return number_text(value)


_WHY_INFINITE = {
    "wedge": "under censored=wedge a call the recording never saw return never returns: what "
    "waits on it unbounded waits forever, and its abandoned worker never comes back",
}
_NEVER = "a call that never returns: what waits on it waits forever"


def infinity_footnote(assumptions: Mapping[str, Any] | None = None) -> str:
    """The one footnote of a table holding ∞: why a figure is infinite under its assumptions."""
    censored = str((assumptions or {}).get("censored", ""))
    return f"{INFINITY}: never ends — {_WHY_INFINITE.get(censored, _NEVER)}"
