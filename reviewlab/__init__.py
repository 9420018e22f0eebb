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

from typing import TYPE_CHECKING, Any

# Registers how results show themselves in Jupyter (reviewlab.core.display); loads no pandas.
from reviewlab.ui import rich_display as _rich_display  # noqa: F401

if TYPE_CHECKING:
    from reviewlab.analysis.incident import longest_silences
    from reviewlab.analysis.sweep import make_grid, sweep
    from reviewlab.analysis.tune import Recommendation, recommend
    from reviewlab.core.deadline import (
        calendar_scope,
        clock_scope,
        deadline_remaining,
        execution_deadline_scope,
        monotonic_now,
    )
    from reviewlab.core.errors import ParameterError
    from reviewlab.core.policy import (
        Bound,
        Narrowing,
        Policy,
        PolicyError,
        TimeoutPolicy,
        resolve_bound,
    )
    from reviewlab.core.receipts import Outcome, ToolReceipt, tool_timeout_text
    from reviewlab.core.vocab import (
        SOURCE_GAP_ABANDONED,
        SOURCE_GAP_SKIPPED,
        SOURCE_GAP_WEDGED,
        SOURCE_GAP_WITHHELD,
    )
    from reviewlab.engines.corpus import Corpus, open_corpus
    from reviewlab.engines.engine import Cluster, Real, Twin, Vectorized
    from reviewlab.engines.replay import ReplayBounds, replay, replay_bounds
    from reviewlab.engines.result import ReplayResult, ReplaySummary
    from reviewlab.live.aio import AsyncBoundedExecutor
    from reviewlab.live.bounded import bounded_tool
    from reviewlab.live.episode import EpisodeResult, ReviewEpisode, ScriptedModel, tool_call
    from reviewlab.live.executor import BoundedExecutor, CallResult, CallStatus
    from reviewlab.live.inspection import demo_workspace, inspection_registry
    from reviewlab.live.mcp import MCPServer
    from reviewlab.recording.capture import Recorder, ToolCallLog
    from reviewlab.recording.files import load_episodes, save_episodes
    from reviewlab.recording.schema import Episode

_HOMES = {
    "AsyncBoundedExecutor": "reviewlab.live.aio",
    "Bound": "reviewlab.core.policy",
    "BoundedExecutor": "reviewlab.live.executor",
    "CallResult": "reviewlab.live.executor",
    "CallStatus": "reviewlab.live.executor",
    "Cluster": "reviewlab.engines.engine",
    "Corpus": "reviewlab.engines.corpus",
    "Episode": "reviewlab.recording.schema",
    "EpisodeResult": "reviewlab.live.episode",
    "MCPServer": "reviewlab.live.mcp",
    "Narrowing": "reviewlab.core.policy",
    "Outcome": "reviewlab.core.receipts",
    "ParameterError": "reviewlab.core.errors",
    "Policy": "reviewlab.core.policy",
    "PolicyError": "reviewlab.core.policy",
    "Real": "reviewlab.engines.engine",
    "Recommendation": "reviewlab.analysis.tune",
    "Recorder": "reviewlab.recording.capture",
    "ReplayBounds": "reviewlab.engines.replay",
    "ReplayResult": "reviewlab.engines.result",
    "ReplaySummary": "reviewlab.engines.result",
    "ReviewEpisode": "reviewlab.live.episode",
    "SOURCE_GAP_ABANDONED": "reviewlab.core.vocab",
    "SOURCE_GAP_SKIPPED": "reviewlab.core.vocab",
    "SOURCE_GAP_WEDGED": "reviewlab.core.vocab",
    "SOURCE_GAP_WITHHELD": "reviewlab.core.vocab",
    "ScriptedModel": "reviewlab.live.episode",
    "TimeoutPolicy": "reviewlab.core.policy",
    "ToolCallLog": "reviewlab.recording.capture",
    "ToolReceipt": "reviewlab.core.receipts",
    "Twin": "reviewlab.engines.engine",
    "Vectorized": "reviewlab.engines.engine",
    "bounded_tool": "reviewlab.live.bounded",
    "calendar_scope": "reviewlab.core.deadline",
    "clock_scope": "reviewlab.core.deadline",
    "deadline_remaining": "reviewlab.core.deadline",
    "demo_workspace": "reviewlab.live.inspection",
    "execution_deadline_scope": "reviewlab.core.deadline",
    "inspection_registry": "reviewlab.live.inspection",
    "load_episodes": "reviewlab.recording.files",
    "longest_silences": "reviewlab.analysis.incident",
    "make_grid": "reviewlab.analysis.sweep",
    "monotonic_now": "reviewlab.core.deadline",
    "open_corpus": "reviewlab.engines.corpus",
    "recommend": "reviewlab.analysis.tune",
    "replay": "reviewlab.engines.replay",
    "replay_bounds": "reviewlab.engines.replay",
    "resolve_bound": "reviewlab.core.policy",
    "save_episodes": "reviewlab.recording.files",
    "sweep": "reviewlab.analysis.sweep",
    "tool_call": "reviewlab.live.episode",
    "tool_timeout_text": "reviewlab.core.receipts",
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


def __getattr__(name: str) -> Any:
    """A public name, imported from its home on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'reviewlab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
