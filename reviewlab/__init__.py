"""reviewlab — tool-call timeout policy for LLM reviewer-agent loops.

Bound every tool call by its per-tool timeout narrowed by the inherited
deadline, abandon the calls that outlive their bound, and measure what that
costs: run it for real, simulate it, replay recorded episodes under other
policies, sweep and tune policies.
"""

from reviewlab.core.deadline import (
    calendar_scope,
    clock_scope,
    deadline_remaining,
    execution_deadline_scope,
    monotonic_now,
)
from reviewlab.core.policy import (
    Bound,
    Narrowing,
    Policy,
    PolicyError,
    TimeoutPolicy,
    resolve_bound,
)
from reviewlab.core.receipts import Outcome, ToolReceipt, tool_timeout_text
from reviewlab.core.vocab import SOURCE_GAP_ABANDONED
from reviewlab.engines.corpus import Corpus, open_corpus
from reviewlab.engines.replay import ReplayBounds, replay, replay_bounds
from reviewlab.engines.result import ReplayResult
from reviewlab.live.aio import AsyncBoundedExecutor
from reviewlab.live.bounded import bounded_tool
from reviewlab.live.episode import EpisodeResult, ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.executor import BoundedExecutor, CallResult, CallStatus
from reviewlab.live.inspection import demo_workspace, inspection_registry
from reviewlab.live.mcp import MCPServer
from reviewlab.recording.files import load_episodes, save_episodes
from reviewlab.recording.schema import Episode
from reviewlab.recording.tool_log import ToolCallLog

__version__ = "0.1.0"

__all__ = [
    "SOURCE_GAP_ABANDONED",
    "AsyncBoundedExecutor",
    "Bound",
    "BoundedExecutor",
    "CallResult",
    "CallStatus",
    "Corpus",
    "Episode",
    "EpisodeResult",
    "MCPServer",
    "Narrowing",
    "Outcome",
    "Policy",
    "PolicyError",
    "ReplayBounds",
    "ReplayResult",
    "ReviewEpisode",
    "ScriptedModel",
    "TimeoutPolicy",
    "ToolCallLog",
    "ToolReceipt",
    "bounded_tool",
    "calendar_scope",
    "clock_scope",
    "deadline_remaining",
    "demo_workspace",
    "execution_deadline_scope",
    "inspection_registry",
    "load_episodes",
    "monotonic_now",
    "open_corpus",
    "replay",
    "replay_bounds",
    "resolve_bound",
    "save_episodes",
    "tool_call",
    "tool_timeout_text",
]
