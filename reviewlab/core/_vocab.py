"""Every closed vocabulary of reviewlab, in one place.

Each vocabulary is a ``Literal`` alias (for type checkers and pydantic) and a
tuple derived from it with :func:`typing.get_args` (for validation, argument
parsers and loops). No other module retypes these strings: it imports the
alias, the tuple, or one of the named constants below.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

OutcomeName = Literal["executed", "error", "refused", "withheld"]
"""What a receipt says became of a call (docs/semantics.md, "Receipts")."""
OUTCOMES: Final = get_args(OutcomeName)
OUTCOME_EXECUTED: Final[OutcomeName] = "executed"
OUTCOME_ERROR: Final[OutcomeName] = "error"
OUTCOME_REFUSED: Final[OutcomeName] = "refused"
OUTCOME_WITHHELD: Final[OutcomeName] = "withheld"
OUTCOMES_ANSWERED: Final = (OUTCOME_EXECUTED, OUTCOME_ERROR)
"""The outcomes of a call that ran and answered (with a result or an error)."""

SourceGap = Literal[
    "native_tool_abandoned", "native_tool_wedged", "native_tool_withheld", "native_tool_skipped"
]
"""Why a receipt (and its episode) has a gap in what the model saw.

``native_tool_abandoned``: the call outlived its bound. ``native_tool_wedged``
(replay only): under the pre-fix policy a censored call never returned and the
episode ended there. ``native_tool_withheld``: a breaker withheld the tool.
``native_tool_skipped`` (replay only): under the ``skip_target`` reaction the model
never issued the call, having given up on its path after an abandonment.
"""
SOURCE_GAPS: Final = get_args(SourceGap)
SOURCE_GAP_ABANDONED: Final[SourceGap] = "native_tool_abandoned"
SOURCE_GAP_WEDGED: Final[SourceGap] = "native_tool_wedged"
SOURCE_GAP_WITHHELD: Final[SourceGap] = "native_tool_withheld"
SOURCE_GAP_SKIPPED: Final[SourceGap] = "native_tool_skipped"
SOURCE_GAPS_HELD_BACK: Final = (SOURCE_GAP_SKIPPED, SOURCE_GAP_WITHHELD)
"""Calls never started because of earlier abandonments (skipped by the model, withheld by a
breaker): their requested lines are lost to the timeout."""

BoundBy = Literal["tool_timeout", "deadline", "idle", "unbounded"]
"""Which term of the bound fired: the per-tool timeout, the inherited deadline, an idle timeout
reset by progress, or none (the pre-fix policy)."""
BOUND_BY: Final = get_args(BoundBy)

NarrowingMode = Literal["inherit", "none", "reserve", "fraction", "unbounded"]
"""How the inherited deadline narrows a tool timeout (:class:`reviewlab.Narrowing`)."""
NARROWING_MODES: Final = get_args(NarrowingMode)

CensoringMode = Literal["wedge", "observed", "impute"]
"""What a replay assumes of a right-censored call (docs/semantics.md, "What a replay assumes")."""
CENSORING_MODES: Final = get_args(CensoringMode)
DEFAULT_CENSORING: Final[CensoringMode] = "wedge"
"""What every replay assumes unless told: a call the recording never saw return never returns
(the pessimistic end). Every signature and the command line read this one constant."""

CensoringChoice = Literal[CensoringMode, "bounds"]
"""What ``reviewlab replay --censored`` takes: one assumption, or ``bounds`` (both ends, the
optimistic ``observed`` and the pessimistic ``wedge``: :func:`reviewlab.replay_bounds`)."""
CENSORING_CHOICES: Final = get_args(CensoringChoice)

Reaction = Literal["as_recorded", "reissue", "skip_target"]
"""What a replay assumes the model does after an abandonment (docs/semantics.md, "What a
replay assumes")."""
REACTIONS: Final = get_args(Reaction)
DEFAULT_REACTION: Final[Reaction] = "as_recorded"
"""What every replay assumes of the model unless told: later rounds as recorded."""

BreakerScope = Literal["episode", "slot"]
"""Where a breaker's count and cool-down live: one episode, or a reviewer slot (carried across
the slot's episodes in start order)."""
BREAKER_SCOPES: Final = get_args(BreakerScope)

ToolKind = Literal["read_only", "side_effect"]
"""What a tool does to the world. ``read_only``: it only observes, so abandoning or repeating a
call loses at most its answer. ``side_effect``: it changes something (a file, a process, a page),
so an abandoned call may still act, or act twice when the model retries. A tool of neither kind
is *unknown*, and tuning treats it as side-effecting (docs/metrics.md, "What tune may tighten")."""
TOOL_KINDS: Final = get_args(ToolKind)

EngineName = Literal["twin", "vectorized", "real"]
"""The replay engines."""
ENGINES: Final = get_args(EngineName)
SWEEP_ENGINES: Final[tuple[EngineName, ...]] = ("vectorized", "twin")
"""The engines a sweep replays its points with (the real engine runs in real time: not a
sweep's)."""

ArrivalMode = Literal["recorded", "poisson"]
"""How a simulated reviewer pool receives its review requests."""
ARRIVAL_MODES: Final = get_args(ArrivalMode)

SlotState = Literal["busy", "silent", "idle"]
"""A reviewer slot's state on a pool timeline."""
SLOT_STATES: Final = get_args(SlotState)

CallState = Literal["pending", "running", "returned", "raised", "abandoned", "refused"]
"""Where a live call is in its lifecycle (the executor's view)."""
CALL_STATES: Final = get_args(CallState)

CallStatusName = Literal["ok", "error"]
"""How a recorded call that returned ended."""
CALL_STATUSES: Final = get_args(CallStatusName)

Source = Literal[
    "live",
    "synthetic",
    "incident",
    "openhands",
    "inspect",
    "replay",
    "otel",
    "swe_agent",
    "mini_swe_agent",
    "openai_agents",
]
"""Where a recorded episode came from (``otel``: an OpenTelemetry trace; ``swe_agent``: a
SWE-agent ``.traj``; ``mini_swe_agent``: a mini-swe-agent ``.traj.json``; ``openai_agents``: the
OpenAI Agents SDK's exported trace)."""
SOURCES: Final = get_args(Source)

ImportFormat = Literal[
    "openhands", "inspect", "swe_agent", "mini_swe_agent", "openai_agents", "otel"
]
"""The foreign log formats ``reviewlab import`` reads (``auto`` detects one of them)."""
IMPORT_FORMATS: Final = get_args(ImportFormat)

ImportChoice = Literal[ImportFormat, "auto"]
"""What ``reviewlab import`` takes: a format, or ``auto`` (detected from the content)."""
IMPORT_CHOICES: Final = get_args(ImportChoice)

ExportFormat = Literal["otel"]
"""The foreign formats ``reviewlab export`` writes (``otel``: OTLP/JSON, a trace per episode)."""
EXPORT_FORMATS: Final = get_args(ExportFormat)

OnError = Literal["raise", "skip"]
"""What a reader does with a defective line or row: stop with its error, or skip and record it."""
ON_ERROR_MODES: Final = get_args(OnError)

FrameName = Literal["calls", "episodes", "tools"]
"""The frames of a replay a command writes: per call, per episode, per tool."""
FRAME_NAMES: Final = get_args(FrameName)

EndReason = Literal["final_answer", "deadline_exhausted", "model_error", "wedged", "log_end"]
"""Why a recorded episode ended."""
END_REASONS: Final = get_args(EndReason)

Transport = Literal["thread", "async", "mcp"]
"""How a live call reached its tool."""
TRANSPORTS: Final = get_args(Transport)

CapRule = Literal["hard", "checked_on_progress"]
"""How a call's bound holds while the call reports progress. ``hard``: reviewlab's rule, the
bound is a true total cap (an idle timeout re-armed on progress is re-armed at ``min(idle, cap -
elapsed)``). ``checked_on_progress``: the MCP TypeScript SDK's ``maxTotalTimeout`` with
``resetTimeoutOnProgress``: the full idle timeout re-armed on each progress report, the cap
checked only when a report arrives (docs/mcp.md, "Which clock fired")."""
CAP_RULES: Final = get_args(CapRule)

ClockName = Literal[
    "returned", "tool_timeout", "deadline", "idle", "total_cap", "transport", "host_ceiling"
]
"""What ended a call: it ``returned`` before any clock, or the clock that fired first — the
tool's timeout, the inherited deadline's remainder, an idle timeout, a total cap, a transport's
own timeout (an HTTP read timeout), or a host's ceiling (a preset's)."""
CLOCK_NAMES: Final = get_args(ClockName)

TaskAction = Literal["cancel", "detach"]
"""What an MCP host does with a task-augmented call at its bound: ``cancel`` the task
(``tasks/cancel``, acknowledged or not) and abandon it, or ``detach`` it (the model gets the
server's immediate-response text and the task runs on, its end still watched)."""
TASK_ACTIONS: Final = get_args(TaskAction)

TaskState = Literal[
    "working", "input_required", "completed", "failed", "cancelled", "running_after_cancel"
]
"""A task's states as a call records them: the protocol's five, and ``running_after_cancel``
(``tasks/get`` still said ``working`` after the cancel was acknowledged or refused)."""
TASK_STATES: Final = get_args(TaskState)
