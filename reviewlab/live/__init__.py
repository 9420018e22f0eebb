"""The real thing: the bounded executor on threads (and its asyncio twin), the review-episode
loop, the read-only inspection registry, model adapters and OpenTelemetry spans.

Imports only :mod:`reviewlab.core`. Its modules are private; what users need is exported here and
imported on first use.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.live._aio import AsyncBoundedExecutor, AsyncCallResult
    from reviewlab.live._bounded import BoundedCall, bounded_tool
    from reviewlab.live._call_notes import current_notes, report_progress
    from reviewlab.live._call_results import CallResult, CallStatus
    from reviewlab.live._confine import ToolError
    from reviewlab.live._doubles import ManualClock, WedgedRegistry, manual_clock, wedged_factory
    from reviewlab.live._episode import DEFAULT_TASK, ReviewEpisode, ScriptedModel, tool_call
    from reviewlab.live._executor import BoundedExecutor
    from reviewlab.live._inspection import (
        TOOL_NAMES,
        InspectionRegistry,
        demo_workspace,
        inspection_registry,
    )
    from reviewlab.live._openai_model import (
        AsyncOpenAIChatModel,
        ModelEndpointError,
        OpenAIChatModel,
    )
    from reviewlab.live._otel import tracer_provider_scope
    from reviewlab.live._otlp_json import OtlpJsonFileExporter
    from reviewlab.live._traces import CallTrace, EpisodeResult, RoundTrace

_HOMES = {
    "AsyncBoundedExecutor": "reviewlab.live._aio",
    "AsyncCallResult": "reviewlab.live._aio",
    "AsyncOpenAIChatModel": "reviewlab.live._openai_model",
    "BoundedCall": "reviewlab.live._bounded",
    "BoundedExecutor": "reviewlab.live._executor",
    "CallResult": "reviewlab.live._call_results",
    "CallStatus": "reviewlab.live._call_results",
    "CallTrace": "reviewlab.live._traces",
    "DEFAULT_TASK": "reviewlab.live._episode",
    "EpisodeResult": "reviewlab.live._traces",
    "InspectionRegistry": "reviewlab.live._inspection",
    "ManualClock": "reviewlab.live._doubles",
    "ModelEndpointError": "reviewlab.live._openai_model",
    "OpenAIChatModel": "reviewlab.live._openai_model",
    "OtlpJsonFileExporter": "reviewlab.live._otlp_json",
    "ReviewEpisode": "reviewlab.live._episode",
    "RoundTrace": "reviewlab.live._traces",
    "ScriptedModel": "reviewlab.live._episode",
    "TOOL_NAMES": "reviewlab.live._inspection",
    "ToolError": "reviewlab.live._confine",
    "WedgedRegistry": "reviewlab.live._doubles",
    "bounded_tool": "reviewlab.live._bounded",
    "current_notes": "reviewlab.live._call_notes",
    "demo_workspace": "reviewlab.live._inspection",
    "inspection_registry": "reviewlab.live._inspection",
    "manual_clock": "reviewlab.live._doubles",
    "report_progress": "reviewlab.live._call_notes",
    "tool_call": "reviewlab.live._episode",
    "tracer_provider_scope": "reviewlab.live._otel",
    "wedged_factory": "reviewlab.live._doubles",
}
"""Where each public name lives: imported on first use, so importing ``reviewlab.live`` loads
only what is asked for."""

__all__ = [
    "DEFAULT_TASK",
    "TOOL_NAMES",
    "AsyncBoundedExecutor",
    "AsyncCallResult",
    "AsyncOpenAIChatModel",
    "BoundedCall",
    "BoundedExecutor",
    "CallResult",
    "CallStatus",
    "CallTrace",
    "EpisodeResult",
    "InspectionRegistry",
    "ManualClock",
    "ModelEndpointError",
    "OpenAIChatModel",
    "OtlpJsonFileExporter",
    "ReviewEpisode",
    "RoundTrace",
    "ScriptedModel",
    "ToolError",
    "WedgedRegistry",
    "bounded_tool",
    "current_notes",
    "demo_workspace",
    "inspection_registry",
    "manual_clock",
    "report_progress",
    "tool_call",
    "tracer_provider_scope",
    "wedged_factory",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
