"""The decision core every engine shares: deadlines, policies, narrowing, receipts, crediting,
metrics.

Nothing here imports another layer of reviewlab. The real executor and the SimPy twin differ only
in how they wait; every decision (the bound, a call's fate, what is credited, what a metric
means) is made by this package. Its modules are private; what users need is exported here and
imported on first use.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.core._breaker import BreakerRule
    from reviewlab.core._crediting import Crediting
    from reviewlab.core._deadline import (
        Clock,
        ScaledClock,
        calendar_scope,
        clock_scope,
        current_clock,
        deadline_remaining,
        execution_deadline_scope,
        monotonic_now,
    )
    from reviewlab.core._errors import ParameterError
    from reviewlab.core._hedge import HedgeRule
    from reviewlab.core._kinds import DEFAULT_TOOL_KINDS, kind_of
    from reviewlab.core._learned import LearnedTimeouts
    from reviewlab.core._metric_names import METRICS, SUMMARY_KEYS, Metric
    from reviewlab.core._metrics import summarize
    from reviewlab.core._narrowing import Bound, Narrowing, PolicyError
    from reviewlab.core._policy import Policy, resolve_bound
    from reviewlab.core._presets import BUILTIN_PRESETS, Preset, load_presets, preset_names
    from reviewlab.core._prices import PriceTable, PriceTableError, load_prices, save_prices
    from reviewlab.core._receipts import Outcome, ToolReceipt, tool_timeout_text
    from reviewlab.core._rules import ClockAwarePolicy, SupportsTimeoutFor
    from reviewlab.core._timeouts import TimeoutPolicy
    from reviewlab.core._vocab import (
        END_REASONS,
        OUTCOMES,
        REACTIONS,
        SOURCE_GAP_ABANDONED,
        SOURCE_GAP_SKIPPED,
        SOURCE_GAP_WEDGED,
        SOURCE_GAP_WITHHELD,
    )

_HOMES = {
    "BUILTIN_PRESETS": "reviewlab.core._presets",
    "Bound": "reviewlab.core._narrowing",
    "BreakerRule": "reviewlab.core._breaker",
    "Clock": "reviewlab.core._deadline",
    "ClockAwarePolicy": "reviewlab.core._rules",
    "Crediting": "reviewlab.core._crediting",
    "DEFAULT_TOOL_KINDS": "reviewlab.core._kinds",
    "END_REASONS": "reviewlab.core._vocab",
    "HedgeRule": "reviewlab.core._hedge",
    "LearnedTimeouts": "reviewlab.core._learned",
    "METRICS": "reviewlab.core._metric_names",
    "Metric": "reviewlab.core._metric_names",
    "Narrowing": "reviewlab.core._narrowing",
    "OUTCOMES": "reviewlab.core._vocab",
    "Outcome": "reviewlab.core._receipts",
    "ParameterError": "reviewlab.core._errors",
    "Policy": "reviewlab.core._policy",
    "PolicyError": "reviewlab.core._narrowing",
    "Preset": "reviewlab.core._presets",
    "PriceTable": "reviewlab.core._prices",
    "PriceTableError": "reviewlab.core._prices",
    "REACTIONS": "reviewlab.core._vocab",
    "SOURCE_GAP_ABANDONED": "reviewlab.core._vocab",
    "SOURCE_GAP_SKIPPED": "reviewlab.core._vocab",
    "SOURCE_GAP_WEDGED": "reviewlab.core._vocab",
    "SOURCE_GAP_WITHHELD": "reviewlab.core._vocab",
    "SUMMARY_KEYS": "reviewlab.core._metric_names",
    "ScaledClock": "reviewlab.core._deadline",
    "SupportsTimeoutFor": "reviewlab.core._rules",
    "TimeoutPolicy": "reviewlab.core._timeouts",
    "ToolReceipt": "reviewlab.core._receipts",
    "calendar_scope": "reviewlab.core._deadline",
    "clock_scope": "reviewlab.core._deadline",
    "current_clock": "reviewlab.core._deadline",
    "deadline_remaining": "reviewlab.core._deadline",
    "execution_deadline_scope": "reviewlab.core._deadline",
    "kind_of": "reviewlab.core._kinds",
    "load_presets": "reviewlab.core._presets",
    "load_prices": "reviewlab.core._prices",
    "monotonic_now": "reviewlab.core._deadline",
    "preset_names": "reviewlab.core._presets",
    "resolve_bound": "reviewlab.core._policy",
    "save_prices": "reviewlab.core._prices",
    "summarize": "reviewlab.core._metrics",
    "tool_timeout_text": "reviewlab.core._receipts",
}
"""Where each public name lives: imported on first use, so importing ``reviewlab.core`` loads
only what is asked for."""

__all__ = [
    "BUILTIN_PRESETS",
    "DEFAULT_TOOL_KINDS",
    "END_REASONS",
    "METRICS",
    "OUTCOMES",
    "REACTIONS",
    "SOURCE_GAP_ABANDONED",
    "SOURCE_GAP_SKIPPED",
    "SOURCE_GAP_WEDGED",
    "SOURCE_GAP_WITHHELD",
    "SUMMARY_KEYS",
    "Bound",
    "BreakerRule",
    "Clock",
    "ClockAwarePolicy",
    "Crediting",
    "HedgeRule",
    "LearnedTimeouts",
    "Metric",
    "Narrowing",
    "Outcome",
    "ParameterError",
    "Policy",
    "PolicyError",
    "Preset",
    "PriceTable",
    "PriceTableError",
    "ScaledClock",
    "SupportsTimeoutFor",
    "TimeoutPolicy",
    "ToolReceipt",
    "calendar_scope",
    "clock_scope",
    "current_clock",
    "deadline_remaining",
    "execution_deadline_scope",
    "kind_of",
    "load_presets",
    "load_prices",
    "monotonic_now",
    "preset_names",
    "resolve_bound",
    "save_prices",
    "summarize",
    "tool_timeout_text",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
