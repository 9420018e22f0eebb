"""reviewlab — tool-call timeout policy for LLM reviewer-agent loops.

Bound every tool call by its per-tool timeout narrowed by the inherited deadline, abandon the
calls that outlive their bound, and measure what that costs: run it for real, simulate it,
replay recorded episodes under other policies, sweep and tune policies. What a notebook user
needs, by topic (``tests/cross/test_exports.py`` checks this table against ``__all__``):

Policy:
    Policy, TimeoutPolicy, Narrowing, Bound, PolicyError, ParameterError, resolve_bound
Deadlines:
    execution_deadline_scope, calendar_scope, deadline_remaining, monotonic_now, clock_scope
Run live:
    ReviewEpisode, EpisodeResult, BoundedExecutor, AsyncBoundedExecutor, CallResult,
    CallStatus, bounded_tool, MCPServer, inspection_registry, ToolReceipt, Outcome,
    tool_timeout_text, SOURCE_GAP_ABANDONED, SOURCE_GAP_SKIPPED, SOURCE_GAP_WEDGED,
    SOURCE_GAP_WITHHELD
Record:
    Episode, Recorder, ToolCallLog, load_episodes, save_episodes
Open and replay:
    open_corpus, Corpus, replay, replay_bounds, ReplayResult, ReplayBounds, ReplaySummary,
    Twin, Vectorized, Real, Cluster
Analyse:
    sweep, make_grid, recommend, Recommendation, longest_silences
Test:
    ScriptedModel, tool_call, demo_workspace

The layers below (``core`` ← ``live`` ← ``recording`` ← ``engines`` ← ``analysis`` ← ``ui``)
are described in docs/architecture.md; ``reviewlab.testing`` holds builders and the
engine-conformance suite.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

# Registers how results show themselves in Jupyter (reviewlab.core._display); loads no pandas.
from reviewlab.ui import _rich_display as _rich_display  # noqa: F401

if TYPE_CHECKING:
    from reviewlab.analysis._incident import longest_silences
    from reviewlab.analysis._recommendation import Recommendation
    from reviewlab.analysis._tune import recommend
    from reviewlab.analysis.sweep import make_grid, sweep
    from reviewlab.core._deadline import (
        calendar_scope,
        clock_scope,
        deadline_remaining,
        execution_deadline_scope,
        monotonic_now,
    )
    from reviewlab.core._errors import ParameterError
    from reviewlab.core._policy import (
        Bound,
        Narrowing,
        Policy,
        PolicyError,
        TimeoutPolicy,
        resolve_bound,
    )
    from reviewlab.core._receipts import Outcome, ToolReceipt, tool_timeout_text
    from reviewlab.core._vocab import (
        SOURCE_GAP_ABANDONED,
        SOURCE_GAP_SKIPPED,
        SOURCE_GAP_WEDGED,
        SOURCE_GAP_WITHHELD,
    )
    from reviewlab.engines._corpus import Corpus, open_corpus
    from reviewlab.engines._engine import Cluster, Real, Twin, Vectorized
    from reviewlab.engines._replay import ReplayBounds, replay, replay_bounds
    from reviewlab.engines._result import ReplayResult, ReplaySummary
    from reviewlab.live._aio import AsyncBoundedExecutor
    from reviewlab.live._bounded import bounded_tool
    from reviewlab.live._call_results import CallResult, CallStatus
    from reviewlab.live._episode import EpisodeResult, ReviewEpisode, ScriptedModel, tool_call
    from reviewlab.live._executor import BoundedExecutor
    from reviewlab.live._inspection import demo_workspace, inspection_registry
    from reviewlab.live.mcp import MCPServer
    from reviewlab.recording._files import load_episodes, save_episodes
    from reviewlab.recording._schema import Episode
    from reviewlab.recording.capture import Recorder, ToolCallLog

_HOMES = {
    "AsyncBoundedExecutor": "reviewlab.live._aio",
    "Bound": "reviewlab.core._policy",
    "BoundedExecutor": "reviewlab.live._executor",
    "CallResult": "reviewlab.live._call_results",
    "CallStatus": "reviewlab.live._call_results",
    "Cluster": "reviewlab.engines._engine",
    "Corpus": "reviewlab.engines._corpus",
    "Episode": "reviewlab.recording._schema",
    "EpisodeResult": "reviewlab.live._episode",
    "MCPServer": "reviewlab.live.mcp",
    "Narrowing": "reviewlab.core._policy",
    "Outcome": "reviewlab.core._receipts",
    "ParameterError": "reviewlab.core._errors",
    "Policy": "reviewlab.core._policy",
    "PolicyError": "reviewlab.core._policy",
    "Real": "reviewlab.engines._engine",
    "Recommendation": "reviewlab.analysis._recommendation",
    "Recorder": "reviewlab.recording.capture",
    "ReplayBounds": "reviewlab.engines._replay",
    "ReplayResult": "reviewlab.engines._result",
    "ReplaySummary": "reviewlab.engines._result",
    "ReviewEpisode": "reviewlab.live._episode",
    "SOURCE_GAP_ABANDONED": "reviewlab.core._vocab",
    "SOURCE_GAP_SKIPPED": "reviewlab.core._vocab",
    "SOURCE_GAP_WEDGED": "reviewlab.core._vocab",
    "SOURCE_GAP_WITHHELD": "reviewlab.core._vocab",
    "ScriptedModel": "reviewlab.live._episode",
    "TimeoutPolicy": "reviewlab.core._policy",
    "ToolCallLog": "reviewlab.recording.capture",
    "ToolReceipt": "reviewlab.core._receipts",
    "Twin": "reviewlab.engines._engine",
    "Vectorized": "reviewlab.engines._engine",
    "bounded_tool": "reviewlab.live._bounded",
    "calendar_scope": "reviewlab.core._deadline",
    "clock_scope": "reviewlab.core._deadline",
    "deadline_remaining": "reviewlab.core._deadline",
    "demo_workspace": "reviewlab.live._inspection",
    "execution_deadline_scope": "reviewlab.core._deadline",
    "inspection_registry": "reviewlab.live._inspection",
    "load_episodes": "reviewlab.recording._files",
    "longest_silences": "reviewlab.analysis._incident",
    "make_grid": "reviewlab.analysis.sweep",
    "monotonic_now": "reviewlab.core._deadline",
    "open_corpus": "reviewlab.engines._corpus",
    "recommend": "reviewlab.analysis._tune",
    "replay": "reviewlab.engines._replay",
    "replay_bounds": "reviewlab.engines._replay",
    "resolve_bound": "reviewlab.core._policy",
    "save_episodes": "reviewlab.recording._files",
    "sweep": "reviewlab.analysis.sweep",
    "tool_call": "reviewlab.live._episode",
    "tool_timeout_text": "reviewlab.core._receipts",
}
"""Where each public name lives: imported on first use, so ``import reviewlab`` (and every
CLI command) loads only the layers it touches."""

__version__ = "0.1.0"

__all__ = [
    "SOURCE_GAP_ABANDONED",
    "SOURCE_GAP_SKIPPED",
    "SOURCE_GAP_WEDGED",
    "SOURCE_GAP_WITHHELD",
    "AsyncBoundedExecutor",
    "Bound",
    "BoundedExecutor",
    "CallResult",
    "CallStatus",
    "Cluster",
    "Corpus",
    "Episode",
    "EpisodeResult",
    "MCPServer",
    "Narrowing",
    "Outcome",
    "ParameterError",
    "Policy",
    "PolicyError",
    "Real",
    "Recommendation",
    "Recorder",
    "ReplayBounds",
    "ReplayResult",
    "ReplaySummary",
    "ReviewEpisode",
    "ScriptedModel",
    "TimeoutPolicy",
    "ToolCallLog",
    "ToolReceipt",
    "Twin",
    "Vectorized",
    "bounded_tool",
    "calendar_scope",
    "clock_scope",
    "deadline_remaining",
    "demo_workspace",
    "execution_deadline_scope",
    "inspection_registry",
    "load_episodes",
    "longest_silences",
    "make_grid",
    "monotonic_now",
    "open_corpus",
    "recommend",
    "replay",
    "replay_bounds",
    "resolve_bound",
    "save_episodes",
    "sweep",
    "tool_call",
    "tool_timeout_text",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
