"""reviewlab — tool-call timeout policy for LLM reviewer-agent loops.

Bound every tool call by its per-tool timeout narrowed by the inherited
deadline, abandon the calls that outlive their bound, and measure what that
costs: run it for real, simulate it, replay recorded episodes under other
policies, sweep and tune policies.
"""

from reviewlab.deadline import (
    calendar_scope,
    clock_scope,
    deadline_remaining,
    execution_deadline_scope,
    monotonic_now,
)
from reviewlab.policy import (
    Bound,
    Narrowing,
    PolicyError,
    TimeoutPolicy,
    load_policy_file,
    resolve_bound,
    save_policy_file,
)
from reviewlab.receipts import (
    SOURCE_GAP_ABANDONED,
    Outcome,
    ToolReceipt,
    tool_timeout_text,
)
from reviewlab.recording.schema import Episode
from reviewlab.replay import ReplayResult, replay

__version__ = "0.1.0"

__all__ = [
    "SOURCE_GAP_ABANDONED",
    "Bound",
    "Episode",
    "Narrowing",
    "Outcome",
    "PolicyError",
    "ReplayResult",
    "TimeoutPolicy",
    "ToolReceipt",
    "calendar_scope",
    "clock_scope",
    "deadline_remaining",
    "execution_deadline_scope",
    "load_policy_file",
    "monotonic_now",
    "replay",
    "resolve_bound",
    "save_policy_file",
    "tool_timeout_text",
]
