"""Total caps while a call reports progress: reviewlab's true cap and the TypeScript SDK's.

``hard`` (reviewlab): an idle timeout re-armed on progress is re-armed at ``min(idle, cap -
elapsed)``, so a call ends at the first quiet gap or at the cap, with or without progress.
``checked_on_progress`` (the MCP TypeScript SDK's ``maxTotalTimeout`` with
``resetTimeoutOnProgress``): each report re-arms the full timeout and the cap is checked only
when a report arrives (:func:`on_progress_fire_sec`), so a call can run one idle period past its
cap, and past it for good without progress. A policy chooses with its ``cap_rule`` part;
:meth:`Policy.typescript_sdk <reviewlab.core._policy.Policy.typescript_sdk>` is the SDK's
configuration. docs/mcp.md, "Which clock fired".
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewlab.core._errors import ParameterError
from reviewlab.core._vocab import CAP_RULES, CapRule

TYPESCRIPT_SDK_TIMEOUT_SEC = 60.0
"""The TypeScript SDK's ``DEFAULT_REQUEST_TIMEOUT_MSEC`` (60 000 ms), in seconds."""


def check_cap_rule(value: object, where: str = "cap_rule") -> CapRule:
    """``value`` as a cap rule; anything else is an error naming ``where``."""
    if value not in CAP_RULES:
        raise ParameterError(where, f"expected one of {', '.join(CAP_RULES)}, got {value!r}")
    return value  # type: ignore[return-value]


def on_progress_fire_sec(
    progress_sec: Sequence[float], idle_sec: float, cap_sec: float | None
) -> tuple[float, str]:
    """When the ``checked_on_progress`` rule ends a call that never returns, and why.

    Walking the reports in order: a gap of ``idle_sec`` since the last activity (dispatch, or
    the last report) fires the idle timeout at ``last + idle_sec`` (``"idle"``); a report that
    arrives at or past ``cap_sec`` fires the cap at that report (``"cap"``); after the last
    report the idle timeout fires. The call returned in time iff it returned no later than
    this moment (a return at the fire counts as inside it, as at any bound).
    """
    last = 0.0
    for moment in sorted(progress_sec):
        if moment >= last + idle_sec:
            break  # the timer, re-armed at the last report, fired before this one
        if cap_sec is not None and moment >= cap_sec:
            return moment, "cap"
        last = moment
    return last + idle_sec, "idle"
