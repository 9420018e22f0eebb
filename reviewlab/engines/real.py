"""``engine="real"``: replay recorded episodes through the real :class:`ReviewEpisode` and
:class:`BoundedExecutor`.

Each recorded episode runs, on its own thread, as a real episode on the real
monotonic clock with every recorded time multiplied by ``time_scale``:

* a :class:`_ReplayModel` (a :class:`~reviewlab.live.episode.ScriptedModel`) answers
  the n-th send with the n-th recorded round's calls after waiting its
  ``send_sec × time_scale``; the last send is a final answer;
* a :class:`_ReplayRegistry` runs each call by waiting its effective recorded
  duration × ``time_scale`` (``threading.Event.wait``), stamps the reader view
  with the recorded extent for a read (any call recorded with one; after the wait, as the real
  reader stamps after rendering), and raises for a call recorded as a tool
  error. A censored call under ``censored="wedge"`` blocks until the run ends
  and releases it; under ``"impute"`` it waits its imputed duration (the same
  seeded draws as the twin's, :func:`~reviewlab.engines.censoring.impute_durations`);
* bounds are the policy's bounds scaled by ``time_scale`` (:class:`_ScaledPolicy`
  resolves the wrapped policy at recorded scale with the remaining time read
  on the real clock and divided by ``time_scale``; a ``reserve`` narrowing has
  its reserve scaled too);
* the inherited deadline is an ``execution_deadline_scope`` ending
  ``deadline_sec × time_scale`` after the episode starts.

Calls are told apart by an extra argument ``_replay_call`` (the call's index),
because after an abandonment two calls of one episode may reach the registry
out of order. The wrapped policy never sees it.

The pre-fix ``unbounded`` narrowing and a call that never returns (a censored
call under ``censored="wedge"``): the real loop would wait on it forever, which
no finite run can show. The registry stops the episode at that call at once
(the rest of the calls of that round return at once, the model answers its
next send with a final answer) and the engine records what the wait would be:
an infinite wait, wall time and silence, the later calls ``withheld`` and
"started" at ``inf`` — as in the twin.

The frames are the twin's (:data:`~reviewlab.core.metrics.CALL_COLUMNS`) with every
measured time divided by ``time_scale``: ``duration_sec`` is the measured
duration of a call that returned or raised (for an abandoned one whose worker
came back: measured wait + zombie time; still censored: as recorded);
``zombie_sec`` is measured when the loose worker returned before the run ended
(waiting at most ``settle_sec`` real seconds for it), else the recorded
``duration - bound``, and ``inf`` for a wedge. The timing columns
(:data:`~reviewlab.core.metrics.CALL_TIMING_COLUMNS`) are measured too:
``start_sec`` is the call's dispatch wall time minus the episode's start,
``wait_sec`` the measured wait (for a withheld call: 0, starting when the
wedged call's wait ended). Real runs carry scheduling noise:
calls whose duration lies within a few milliseconds (real) of their bound can
go either way, which the differential test accounts for.

Hedged calls: the replay's one :class:`~reviewlab.engines.censoring.HedgePlan`
(the twin's and the vectorized engine's) is injected into the executor as its
admission object (:class:`_PlannedHedges`, with every delay × ``time_scale``):
a planned call that has gone ``after_sec`` unanswered gets a second REAL
attempt, which the registry runs for the plan's ``d2`` (blocking until the run
ends when ``d2`` is infinite); the first answer wins and the loser is a loose
worker of the real ledger. The frame's ``hedged`` is what the executor really
did; each loose attempt's zombie time is measured when it came back before the
run ended, else its planned remainder. Hedging is replayed under
``reaction="as_recorded"`` only.

The breaker (a policy's :class:`~reviewlab.core.breaker.BreakerRule`) is the real episode's
own: each episode gets the rule with its ``cooldown_sec`` scaled (a fresh state per episode),
or, for a slot-scoped rule, one shared :class:`~reviewlab.core.breaker.BreakerState` per slot
(``Episode.slot``; ``""`` is a slot of its own), whose episodes then run one after another in
start order (arrival, then corpus order) — each starting no earlier than its scaled arrival
when the cool-down is in seconds, so the slot's clock is the corpus clock the other engines
read. A withheld call's row is the twin's: no bound, wait 0, ``start_sec`` the moment the
episode withheld it.
"""

from __future__ import annotations

import contextvars
import copy
import gc
import json
import math
import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core import metrics
from reviewlab.core.breaker import BreakerRule, BreakerState, breaker_rule
from reviewlab.core.deadline import deadline_remaining, execution_deadline_scope, monotonic_now
from reviewlab.core.hedge import HedgeRule, hedge_rules
from reviewlab.core.policy import Narrowing, SupportsTimeoutFor, TimeoutPolicy, timeout_at
from reviewlab.core.receipts import Outcome
from reviewlab.core.vocab import (
    CENSORING_MODES,
    SOURCE_GAP_SKIPPED,
    SOURCE_GAP_WEDGED,
    SOURCE_GAP_WITHHELD,
    CensoringMode,
    Reaction,
)
from reviewlab.engines.censoring import (
    HedgePlan,
    completion_times,
    effective_observation,
    hedge_plan,
)
from reviewlab.engines.reaction import check_reaction, skipped_start
from reviewlab.engines.result import ReplayResult, assemble
from reviewlab.engines.twin.engine import arrival_times, calls_frame
from reviewlab.live.episode import CallTrace, EpisodeResult, ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.executor import BoundedExecutor, CallStatus
from reviewlab.recording.files import paused_gc
from reviewlab.recording.schema import Episode

__all__ = [
    "CALL_ARG",
    "OVERHEAD_SHARE_GOAL",
    "REISSUE_ARG",
    "default_time_scale",
    "measure_overhead_sec",
    "replay_real",
]

OVERHEAD_SHARE_GOAL = 0.01
"""The default ``time_scale`` keeps the engine's own overhead under this share of wall time."""
_SCALE_RANGE = (1e-4, 1.0)
_overhead_cache: list[float] = []

CALL_ARG = "_replay_call"
REISSUE_ARG = "_replay_reissue"
"""Marks a call the replay model re-issued (``reaction="reissue"``); the policy never sees it."""
_TIMEOUT_PREFIX = "⚠️ TOOL_TIMEOUT ("
"""The extra argument naming a call's index within its episode."""


class _LogEnded(Exception):
    """Raised by a censored call under the pre-fix policy: the recorded log ends with it."""


class _ScaledPolicy:
    """A policy whose every timeout is the wrapped policy's times ``scale``, resolved at recorded
    scale."""

    def __init__(self, inner: SupportsTimeoutFor, scale: float) -> None:
        self.inner = inner
        self.scale = scale
        self.name = f"{getattr(inner, 'name', type(inner).__name__)}x{scale:g}"

    def timeout_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float:
        args = {k: v for k, v in (tool_args or {}).items() if k not in (CALL_ARG, REISSUE_ARG)}
        remaining = deadline_remaining()
        # tools=None, as in every replay: the recorded registry declared nothing. The time left is
        # read on the real clock and handed to the policy at recorded scale.
        recorded_rem = None if remaining is None else remaining / self.scale
        seconds = timeout_at(self.inner, None, tool_name, args, recorded_rem)
        return float(seconds) * self.scale


def _scaled_narrowing(narrowing: Narrowing, scale: float) -> Narrowing:
    if narrowing.mode == "reserve":
        return Narrowing(
            "reserve", reserve_sec=narrowing.reserve_sec * scale, fraction=narrowing.fraction
        )
    return narrowing


@dataclass
class _ReaderContext:
    last_read_view: dict[str, Any] | None = None


@dataclass
class _PlannedCall:
    tool: str
    args: dict[str, Any]
    round: int
    duration_sec: float
    completed: bool
    failed: bool
    requested_lines: int
    extent: tuple[int, int] | None
    planned: bool = False
    """The replay's hedge plan lets this call hedge."""
    after_sec: float = math.nan
    second_sec: float = math.nan
    """The second attempt's duration (recorded scale; ``inf`` never returns)."""

    @property
    def first_end_sec(self) -> float:
        """When the first attempt returns, from dispatch (recorded scale; ``inf``: never)."""
        return self.duration_sec if self.completed else math.inf

    @property
    def second_end_sec(self) -> float:
        """When a second attempt returns, from dispatch (recorded scale; ``inf``: never)."""
        return self.after_sec + self.second_sec


@dataclass
class _Plan:
    episode: Episode
    arrival_sec: float
    calls: list[_PlannedCall]
    rounds: list[tuple[float, list[int]]]
    """Per send: its (merged) send time and the indices of the calls it asks for."""


class _ReplayRegistry:
    """The tools of one replayed episode: each call waits its recorded duration (scaled)."""

    def __init__(
        self, plan: _Plan, scale: float, release: threading.Event, unbounded: bool
    ) -> None:
        self.plan = plan
        self.scale = scale
        self.release = release
        self.unbounded = unbounded
        self.ctx = _ReaderContext()
        self.ended_at_call: int | None = None
        self._never = threading.Event()
        self._attempts: dict[int, int] = {}
        self._attempts_lock = threading.Lock()
        self.read_tools = frozenset(c.tool for c in plan.calls if c.extent is not None)
        """Tools with a recorded read: the round loop credits them by the rule for reads."""

    def _attempt(self, index: int, call: _PlannedCall, args: Mapping[str, Any]) -> int:
        """Which attempt of call ``index`` this is (a planned call's second run is its hedge)."""
        if not call.planned or args.get(REISSUE_ARG):
            return 1
        with self._attempts_lock:
            number = self._attempts[index] = self._attempts.get(index, 0) + 1
        return number

    def execute(self, name: str, args: Mapping[str, Any]) -> str:
        index = int(args[CALL_ARG])
        call = self.plan.calls[index]
        attempt = self._attempt(index, call, args)
        if self.ended_at_call is not None:
            return ""  # the recorded log has ended: this call never ran
        if attempt > 1:
            # The hedge: the plan's second attempt.
            if math.isinf(call.second_sec):
                self.release.wait()
                return ""
            self._never.wait(call.second_sec * self.scale)
        elif not call.completed:
            hedge_returns = call.planned and math.isfinite(call.second_sec)
            if self.unbounded and not hedge_returns:
                # Never returns and nothing bounds the wait: recorded as infinite, not waited on.
                self.ended_at_call = index
                raise _LogEnded(f"call {index} was still running when the recorded log ended")
            self.release.wait()
            return ""
        else:
            self._never.wait(call.duration_sec * self.scale)
        if call.extent is not None:  # a recorded read (crediting.py), whatever its tool
            first, end = call.extent
            self.ctx.last_read_view = {
                "target": str(call.args.get("path", "")),
                "opened_path": str(call.args.get("path", "")),
                "opened_root": "replay",
                "first_line": first,
                "end_line": end,
                "total_lines": end,
                "body_start": 0,
                "line_ends": [],
            }
        if call.failed:
            raise RuntimeError(f"recorded tool error ({call.tool})")
        return f"replayed {call.tool} #{index}"

    def factory(self, root: Any, drive_root: Any = None, task_id: str = "") -> tuple[Any, Any, Any]:
        names = sorted({c.tool for c in self.plan.calls})
        schemas = [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in names
        ]
        return self, self.ctx, schemas


class _ReplayModel(ScriptedModel):
    """Replays the recorded sends: waits ``send_sec × scale``, then answers with that round's calls.

    Under a reaction other than ``as_recorded`` it reads the tool results it is
    sent, as a model would: a ``TOOL_TIMEOUT`` text for one of its recorded
    calls makes it re-issue that call in an extra send (``reissue``), or give
    up on the call's ``path`` so that later ``read_file`` calls on it are not
    issued (``skip_target``; recorded in :attr:`skipped`).
    """

    def __init__(
        self, plan: _Plan, registry: _ReplayRegistry, scale: float, reaction: str = "as_recorded"
    ) -> None:
        script: list[dict[str, Any]] = []
        for _send, indices in plan.rounds:
            if indices:
                calls = [
                    tool_call(plan.calls[i].tool, {**plan.calls[i].args, CALL_ARG: i}, f"c{i}")
                    for i in indices
                ]
                script.append({"content": "", "tool_calls": calls})
            else:
                script.append({"content": "replayed final answer"})
        if not script or "tool_calls" in script[-1]:
            # The recording ended mid-episode (a wedge, a log end): the replay still ends with an
            # answer.
            script.append({"content": "replayed final answer"})
        super().__init__(script)
        self.plan = plan
        self.sends = [send for send, _ in plan.rounds] + [0.0]
        self.registry = registry
        self.scale = scale
        self.reaction = reaction
        self.skipped: set[int] = set()
        """Recorded calls not issued under ``skip_target``."""
        self.reissued: list[int] = []
        """Recorded calls re-issued under ``reissue``, in dispatch order."""
        self._given_up: set[str] = set()
        self._step = 0
        self._last_send = 0.0
        self._never = threading.Event()

    def _timed_out(self, messages: Any) -> list[int]:
        """The recorded calls whose results in the latest tool messages are timeout texts."""
        out = []
        for message in reversed(list(messages or [])):
            if message.get("role") != "tool":
                break
            call_id = str(message.get("tool_call_id", ""))
            if call_id.startswith("c") and str(message.get("content", "")).startswith(
                _TIMEOUT_PREFIX
            ):
                out.append(int(call_id[1:]))
        return sorted(out)

    def chat(self, **kwargs: Any) -> dict[str, Any]:
        if self.registry.ended_at_call is not None:
            self.calls.append(kwargs)
            return {"content": "the recorded log ended"}
        timed_out = self._timed_out(kwargs.get("messages"))
        if self.reaction == "reissue" and timed_out:
            # The model asks again for what timed out, once, in a send as long as the last one.
            self.calls.append(kwargs)
            if self._last_send:
                self._never.wait(self._last_send * self.scale)
            self.reissued.extend(timed_out)
            again = [
                tool_call(
                    self.plan.calls[i].tool,
                    {**self.plan.calls[i].args, CALL_ARG: i, REISSUE_ARG: True},
                    f"r{i}",
                )
                for i in timed_out
            ]
            return {"content": "", "tool_calls": again}
        if self.reaction == "skip_target":
            for i in timed_out:
                path = self.plan.calls[i].args.get("path")
                if isinstance(path, str):
                    self._given_up.add(path)
        carried = 0.0
        while True:
            step = self._step
            self._step += 1
            send = self.sends[step] if step < len(self.sends) else 0.0
            carried += send
            answer = self.script[step] if step < len(self.script) else self.script[-1]
            calls = answer.get("tool_calls")
            if calls and self.reaction == "skip_target":
                kept = []
                for call in calls:
                    index = int(json.loads(call["function"]["arguments"])[CALL_ARG])
                    path = self.plan.calls[index].args.get("path")
                    if self.plan.calls[index].tool == "read_file" and path in self._given_up:
                        self.skipped.add(index)
                    else:
                        kept.append(call)
                if not kept and self._step < len(self.script):
                    continue  # every call given up: the model's next recorded send follows at once
                answer = {**answer, "tool_calls": kept} if kept else {"content": "replayed answer"}
            break
        self.calls.append(kwargs)
        self._last_send = send
        if carried:
            self._never.wait(carried * self.scale)
        return copy.deepcopy(answer)


class _PlannedHedges:
    """The executor's admission object in a real replay: the static hedge plan, per episode.

    The episode being run on the calling thread is in :data:`_CURRENT_RUN`; a call
    may hedge when the plan lets its row hedge. Delays are real seconds
    (recorded × ``time_scale``).
    """

    def __init__(self, policy: Any, scale: float) -> None:
        self.rules = {
            tool: HedgeRule(rule.after_sec * scale, rule.max_share)
            for tool, rule in hedge_rules(policy).items()
        }

    def rule_for(self, tool: str) -> HedgeRule | None:
        """The tool's rule, its delay on the real clock."""
        return self.rules.get(tool)

    def note_call(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        """Nothing to count: the budget was spent when the plan was made."""

    def admit(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
        """Whether the plan lets this call (``args = (name, call_args)``) hedge."""
        run = _CURRENT_RUN.get()
        call_args = args[1] if len(args) > 1 and isinstance(args[1], Mapping) else {}
        if run is None or CALL_ARG not in call_args or call_args.get(REISSUE_ARG):
            return False
        return run.plan.calls[int(call_args[CALL_ARG])].planned


def _plan(
    episode: Episode,
    arrival_sec: float,
    imputed: Mapping[tuple[str, int], float] | None,
    hedges: HedgePlan | None = None,
    first_row: int = 0,
) -> _Plan:
    calls: list[_PlannedCall] = []
    rounds: list[tuple[float, list[int]]] = []
    pending_send = 0.0
    for round_no, rnd in enumerate(episode.rounds, 1):
        indices = []
        for call in rnd.calls:
            duration, completed = effective_observation(call)
            if not completed and imputed is not None:
                duration, completed = imputed[(episode.id, len(calls))], True
            extent = None if call.extent is None else (call.extent.start_line, call.extent.end_line)
            indices.append(len(calls))
            planned = _PlannedCall(
                call.tool,
                dict(call.args),
                round_no,
                duration,
                completed,
                call.status == "error",
                call.requested_lines,
                extent,
            )
            row = first_row + len(calls)
            if hedges is not None and hedges.planned[row]:
                planned.planned = True
                planned.after_sec = float(hedges.after_sec[row])
                planned.second_sec = float(hedges.second_sec[row])
            calls.append(planned)
        pending_send += rnd.send_sec
        if indices or round_no == len(episode.rounds):
            # A recorded round without calls before the end would end a real episode: its send
            # time is carried into the next send instead.
            rounds.append((pending_send, indices))
            pending_send = 0.0
    return _Plan(episode, arrival_sec, calls, rounds)


@dataclass
class _Run:
    plan: _Plan
    registry: _ReplayRegistry
    result: EpisodeResult | None = None
    started: float = 0.0
    started_wall: float = 0.0
    ended: float = 0.0
    error: BaseException | None = None
    traces: dict[int, Any] = field(default_factory=dict)
    model: _ReplayModel | None = None


_CURRENT_RUN: contextvars.ContextVar[_Run | None] = contextvars.ContextVar(
    "reviewlab_real_replay_run", default=None
)
"""The run whose episode the current thread is executing (read by :class:`_PlannedHedges`)."""


def replay_real(
    episodes: Iterable[Episode],
    policy: SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    censored: CensoringMode = "wedge",
    reaction: Reaction = "as_recorded",
    time_scale: float | None = None,
    seed: int = 0,
    concurrency: int = 32,
    settle_sec: float = 2.0,
) -> ReplayResult:
    """Replay ``episodes`` through the real episode and executor on threads (see the module
    docstring).

    ``concurrency`` episodes run at once; ``settle_sec`` is how long (real
    seconds) to wait at the end for loose workers that will return.
    """
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    check_reaction(reaction)
    if time_scale is not None and (
        isinstance(time_scale, bool)
        or not isinstance(time_scale, int | float)
        or not (math.isfinite(time_scale) and time_scale > 0)
    ):
        raise ValueError(f"time_scale: expected a positive finite factor, got {time_scale!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(
            f"concurrency: expected a positive number of episode threads, got {concurrency!r}"
        )
    policy = policy if policy is not None else TimeoutPolicy.ouroboros()
    narrowing = narrowing or Narrowing()
    corpus = list(episodes)
    ids = [e.id for e in corpus]
    if len(set(ids)) != len(ids):
        raise ValueError("episodes: episode ids must be unique within a replayed corpus")
    arrival = arrival_times(corpus)
    imputed = completion_times(corpus, censored, seed)
    hedges = hedge_plan(corpus, policy, imputed, seed)
    if hedges is not None and reaction != "as_recorded":
        raise ValueError(
            f"hedges: the real engine replays hedged calls under reaction='as_recorded' only, "
            f"not {reaction!r}"
        )
    scale = float(time_scale) if time_scale is not None else default_time_scale(corpus)
    scaled_policy = _ScaledPolicy(policy, scale)
    scaled_narrowing = _scaled_narrowing(narrowing, scale)
    release = threading.Event()
    executor = BoundedExecutor(
        loose_cap=None,
        name="replay-real",
        hedging=None if hedges is None else _PlannedHedges(policy, scale),
    )
    runs = []
    first_row = 0
    for episode, arrival_sec in zip(corpus, arrival.tolist(), strict=True):
        plan = _plan(episode, arrival_sec, imputed, hedges, first_row)
        first_row += len(plan.calls)
        runs.append(
            _Run(plan, _ReplayRegistry(plan, scale, release, narrowing.mode == "unbounded"))
        )

    rule = breaker_rule(policy)
    scaled_rule = None if rule is None else rule.scaled(scale)
    chains = _chains(runs, scaled_rule)
    clock_zero = monotonic_now()

    def run_chain(chain: list[_Run]) -> None:
        # A slot-scoped breaker: one state, the slot's episodes in start order.
        shared = (
            BreakerState(scaled_rule)
            if scaled_rule is not None and scaled_rule.scope == "slot"
            else None
        )
        for run in chain:
            if shared is not None and shared.rule.cooldown_sec is not None:
                # A cool-down in seconds runs on the corpus clock: start at the scaled arrival.
                pause = clock_zero + run.plan.arrival_sec * scale - monotonic_now()
                if pause > 0:
                    threading.Event().wait(pause)
            run_one(run, shared if shared is not None else scaled_rule)

    def run_one(run: _Run, breaker: BreakerRule | BreakerState | None) -> None:
        _CURRENT_RUN.set(run)
        registry = run.registry
        model = run.model = _ReplayModel(run.plan, registry, scale, reaction)
        episode = ReviewEpisode(
            ".",
            model,
            policy=scaled_policy,
            narrowing=scaled_narrowing,
            registry_factory=registry.factory,
            executor=executor,
            breaker=breaker,
        )
        deadline = run.plan.episode.deadline_sec
        run.started_wall = time.time()
        run.started = monotonic_now()
        try:
            with execution_deadline_scope(
                None if deadline is None else run.started + deadline * scale
            ):
                run.result = episode.execute()
        except BaseException as exc:  # noqa: BLE001 - reported after every thread has finished
            run.error = exc
        run.ended = monotonic_now()

    try:
        # The run is a measurement on the real clock: a full collection of the caller's heap
        # (hundreds of ms in a big process) would stop every episode thread at once and show up
        # as latency. Collect once before, then keep the collector off while the clock runs.
        gc.collect()
        with (
            paused_gc(),
            ThreadPoolExecutor(
                max_workers=concurrency, thread_name_prefix="replay-episode"
            ) as pool,
        ):
            list(pool.map(run_chain, chains))
        for run in runs:
            if run.error is not None:
                raise RuntimeError(
                    f"episode {run.plan.episode.id!r}: real replay failed: {run.error!r}"
                ) from run.error
        _settle(runs, settle_sec)
        replayed = _result(runs, policy, narrowing, scale, censored, seed, hedging=bool(hedges))
        replayed.assumptions["reaction"] = reaction
        replayed.assumptions.update(_overhead(replayed, runs, scale))
        return replayed
    finally:
        release.set()
        executor.shutdown()


def _chains(runs: list[_Run], rule: BreakerRule | None) -> list[list[_Run]]:
    """The runs as chains run one after another: a slot's episodes in start order under a
    slot-scoped breaker (slot ``""``: a chain of its own), else every run alone."""
    if rule is None or rule.scope != "slot":
        return [[run] for run in runs]
    chains: dict[object, list[tuple[float, int, _Run]]] = {}
    for position, run in enumerate(runs):
        slot = run.plan.episode.slot
        key: object = slot if slot else ("alone", position)
        chains.setdefault(key, []).append((run.plan.arrival_sec, position, run))
    return [[run for _, _, run in sorted(chain, key=lambda c: c[:2])] for chain in chains.values()]


def _settle(runs: list[_Run], settle_sec: float) -> None:
    """Wait (at most ``settle_sec`` in all) for loose workers whose calls complete."""
    give_up_at = time.monotonic() + settle_sec
    for run in runs:
        assert run.result is not None
        for rnd in run.result.trace:
            for trace in rnd.calls:
                result = trace.result
                if result is None or result.settled is None:
                    continue
                index = int((trace.args or {}).get(CALL_ARG, -1))
                if index < 0:
                    continue
                call = run.plan.calls[index]
                if result.hedged:
                    # Wait only if every attempt still loose will come back.
                    ends = [call.first_end_sec, call.second_end_sec]
                    if result.status is not CallStatus.ABANDONED:
                        ends = [ends[1] if result.winner == 1 else ends[0]]
                    comes_back = all(math.isfinite(end) for end in ends)
                else:
                    comes_back = result.status is CallStatus.ABANDONED and call.completed
                if comes_back:
                    result.settled.wait(max(0.0, give_up_at - time.monotonic()))


def _log_end(run: _Run, wedged: CallTrace | None, scale: float) -> float:
    """When a withheld call of ``run`` "started" (recorded seconds from the episode's start): the
    wedge's end.

    That is when the recorded log ended; without a measured wedge, the episode's own end.
    """
    if wedged is not None:
        return math.inf  # the wedge is waited on forever
    return (run.ended - run.started) / scale


def measure_overhead_sec(samples: int = 64) -> float:
    """This machine's real overhead per replayed call, in seconds: executor handoff and timer
    overshoot.

    Runs ``samples`` calls that each wait 0.5 ms through a fresh
    :class:`BoundedExecutor` and returns the mean time beyond 0.5 ms (measured
    once per process, then cached).
    """
    if _overhead_cache:
        return _overhead_cache[0]
    executor = BoundedExecutor(loose_cap=None, name="replay-calibrate")
    pause = threading.Event()
    try:
        extra = []
        for _ in range(samples):
            started = time.perf_counter()
            executor.run(lambda: pause.wait(0.0005), bound=5.0)
            extra.append(time.perf_counter() - started - 0.0005)
    finally:
        executor.shutdown()
    _overhead_cache.append(max(float(np.mean(extra)), 1e-6))
    return _overhead_cache[0]


def default_time_scale(episodes: Iterable[Episode], overhead_sec: float | None = None) -> float:
    """The ``time_scale`` at which the engine's overhead is about 1 % of the corpus's wall time.

    Every send and call costs about ``overhead_sec`` real seconds
    (:func:`measure_overhead_sec` by default) on top of its scaled recorded
    time, so the share is ``events × overhead / (scale × recorded seconds)``;
    solved for :data:`OVERHEAD_SHARE_GOAL`, clipped to ``[1e-4, 1]``. The
    recorded seconds are the sends plus each call's effective duration (its
    observed time if censored); under a bounded policy the replayed wall is
    shorter, which ``assumptions["overhead_share"]`` then reports as measured.
    """
    corpus = list(episodes)
    per_event = measure_overhead_sec() if overhead_sec is None else overhead_sec
    events = sum(len(ep.rounds) + len(ep.calls) for ep in corpus)
    seconds = sum(
        sum(r.send_sec for r in ep.rounds) + sum(effective_observation(c)[0] for c in ep.calls)
        for ep in corpus
    )
    if events == 0 or seconds <= 0:
        return _SCALE_RANGE[1]
    scale = events * per_event / (OVERHEAD_SHARE_GOAL * seconds)
    return float(min(max(scale, _SCALE_RANGE[0]), _SCALE_RANGE[1]))


def _overhead(result: ReplayResult, runs: list[_Run], scale: float) -> dict[str, float]:
    """The engine's own measured overhead: per call (real seconds) and as a share of wall time.

    A dispatched call should have waited its bound if abandoned, else its
    recorded duration; what it waited beyond that (back on the recorded scale)
    is overhead. The share is that sum over the finite wall time of the corpus.
    """
    planned = {
        (run.plan.episode.id, index): call.duration_sec
        for run in runs
        for index, call in enumerate(run.plan.calls)
    }
    answers = {
        (run.plan.episode.id, index): min(call.first_end_sec, call.second_end_sec)
        for run in runs
        for index, call in enumerate(run.plan.calls)
        if call.planned
    }
    calls = result.calls
    ran = calls[calls["outcome"].isin(("executed", "error")) & np.isfinite(calls["wait_sec"])]
    hedged = ran["hedged"] if "hedged" in ran else pd.Series(False, index=ran.index)
    extra = []
    for episode_id, index, wait, bound, gap, was_hedged in zip(
        ran["episode_id"],
        ran["call_index"],
        ran["wait_sec"],
        ran["bound_sec"],
        ran["source_gap"],
        hedged,
        strict=True,
    ):
        should = planned.get((episode_id, int(index)), wait)
        if was_hedged:
            should = answers.get((episode_id, int(index)), should)
        if gap == "native_tool_abandoned":
            should = bound
        extra.append(wait - should)
    walls = result.episodes["wall_sec"].to_numpy()
    finite_wall = float(walls[np.isfinite(walls)].sum())
    total = float(np.sum(extra)) if extra else 0.0
    return {
        "time_scale": scale,
        "overhead_per_call_sec": (total / len(extra)) * scale if extra else 0.0,
        "overhead_share": total / finite_wall if finite_wall > 0 else 0.0,
    }


def _unrun_row(
    episode_id: str, index: int, call: _PlannedCall, gap: str, start: float
) -> tuple[Any, ...]:
    """The row of a call that never ran: withheld after the log ended, or skipped by the model."""
    return (
        episode_id,
        call.round,
        index,
        call.tool,
        call.duration_sec,
        call.completed,
        math.nan,
        "unbounded",
        str(Outcome.WITHHELD),
        gap,
        call.requested_lines,
        0,
        0.0,
        start,
        0.0,
        False,
    )


def _withheld_row(
    run: _Run, call_index: int, call: _PlannedCall, trace: CallTrace, scale: float, requested: int
) -> tuple[Any, ...]:
    """The row of a call the breaker withheld: "started" when the episode withheld it."""
    withheld_at = datetime.fromisoformat(trace.receipt.started_at).timestamp()
    start = (withheld_at - run.started_wall) / scale
    row = _unrun_row(run.plan.episode.id, call_index, call, SOURCE_GAP_WITHHELD, start)
    return (*row[:10], requested, *row[11:])


def _is_withheld(trace: CallTrace | None) -> bool:
    return trace is not None and trace.receipt.source_gap == SOURCE_GAP_WITHHELD


def _ran_row(
    run: _Run,
    call_index: int,
    index: int,
    call: _PlannedCall,
    trace: CallTrace,
    ended_at: int | None,
    scale: float,
    round_silence: dict[tuple[int, bool], float],
    loose_starts: list[float],
    loose_ends: list[float],
    *,
    requested: int,
) -> tuple[Any, ...]:
    """The row of a call the real episode dispatched, its times back on the recorded scale (and,
    last, whether it was hedged)."""
    episode_id = run.plan.episode.id
    if trace.result is None:
        raise RuntimeError(
            f"episode {episode_id!r} call {index}: the real episode refused it "
            f"({trace.receipt.error}); a replayed call should always reach the executor"
        )
    receipt, measured = trace.receipt, trace.result
    waited = measured.duration_sec / scale
    bound_sec = math.nan if receipt.bound_sec is None else receipt.bound_sec / scale
    gap = receipt.source_gap or ""
    started = (measured.started_wall - run.started_wall) / scale
    duration, zombie = waited, 0.0
    hedged = measured.hedged
    if ended_at == index and requested == call.requested_lines:
        gap, duration, waited = SOURCE_GAP_WEDGED, call.duration_sec, math.inf
        # Unbounded and never answered: the plan's hedge started (and never returned either).
        hedged = call.planned and receipt.bound_sec is None
    elif hedged:
        duration = call.duration_sec
        back = run.plan.arrival_sec + started + waited
        for attempt, end, measured_sec in (
            (1, call.first_end_sec, measured.zombie_sec),
            (2, call.second_end_sec, measured.second_zombie_sec),
        ):
            if measured.status is not CallStatus.ABANDONED and attempt == measured.winner:
                continue
            if measured_sec is not None:
                loose = measured_sec / scale
            else:
                loose = max(0.0, end - waited) if math.isfinite(end) else math.inf
            if loose:
                zombie += loose
                loose_starts.append(back)
                loose_ends.append(back + loose)
    elif measured.status is CallStatus.ABANDONED:
        if not call.completed:
            duration, zombie = call.duration_sec, math.inf
        elif measured.zombie_sec is not None:
            zombie = measured.zombie_sec / scale
            duration = waited + zombie
        else:
            duration, zombie = call.duration_sec, max(0.0, call.duration_sec - waited)
        start = run.plan.arrival_sec + started + waited
        loose_starts.append(start)
        loose_ends.append(start + zombie)
    # A re-issue is its own send: its waits make a silence of their own.
    key = (call.round, call_index >= len(run.plan.calls))
    round_silence[key] = round_silence.get(key, 0.0) + waited
    extent = receipt.extent or {}
    credited = 0
    if extent.get("start_line") is not None and extent.get("end_line") is not None:
        credited = int(extent["end_line"]) - int(extent["start_line"]) + 1
    return (
        episode_id,
        call.round,
        call_index,
        call.tool,
        duration,
        call.completed,
        bound_sec,
        receipt.bound_by,
        str(receipt.outcome),
        gap,
        requested,
        credited,
        zombie,
        started,
        waited,
        hedged,
    )


def _result(
    runs: list[_Run],
    policy: Any,
    narrowing: Narrowing,
    scale: float,
    censored: str,
    seed: int,
    *,
    hedging: bool = False,
) -> ReplayResult:
    rows: list[tuple[Any, ...]] = []
    loose_starts: list[float] = []
    loose_ends: list[float] = []
    wall, silence = [], []
    for run in runs:
        plan, result = run.plan, run.result
        assert result is not None and run.model is not None
        traces: dict[int, CallTrace] = {}
        reissues: dict[int, CallTrace] = {}
        round_silence: dict[tuple[int, bool], float] = {}
        for rnd in result.trace:
            for ran in rnd.calls:
                args = ran.args or {}
                (reissues if args.get(REISSUE_ARG) else traces)[int(args.get(CALL_ARG, -1))] = ran
        ended_at = run.registry.ended_at_call
        log_end = _log_end(run, traces.get(ended_at) if ended_at is not None else None, scale)
        episode_wall = math.inf if ended_at is not None else (run.ended - run.started) / scale
        mine: list[tuple[Any, ...]] = []
        reissued = run.model.reissued
        n = len(plan.calls)
        for index, call in enumerate(plan.calls):
            trace = traces.get(index)
            if _is_withheld(trace) and (ended_at is None or index < ended_at):
                assert trace is not None
                mine.append(_withheld_row(run, index, call, trace, scale, call.requested_lines))
            elif trace is None or (ended_at is not None and index > ended_at):
                skipped = index in run.model.skipped
                gap = SOURCE_GAP_SKIPPED if skipped else ""
                start = math.nan if skipped else log_end
                mine.append(_unrun_row(plan.episode.id, index, call, gap, start))
            else:
                mine.append(
                    _ran_row(
                        run,
                        index,
                        index,
                        call,
                        trace,
                        ended_at,
                        scale,
                        round_silence,
                        loose_starts,
                        loose_ends,
                        requested=call.requested_lines,
                    )
                )
            last_of_round = index + 1 == n or plan.calls[index + 1].round != call.round
            if last_of_round:
                for k, again in enumerate(reissued):
                    if plan.calls[again].round == call.round and _is_withheld(reissues.get(again)):
                        mine.append(
                            _withheld_row(run, n + k, plan.calls[again], reissues[again], scale, 0)
                        )
                    elif plan.calls[again].round == call.round and again in reissues:
                        mine.append(
                            _ran_row(
                                run,
                                n + k,
                                again,
                                plan.calls[again],
                                reissues[again],
                                ended_at,
                                scale,
                                round_silence,
                                loose_starts,
                                loose_ends,
                                requested=0,
                            )
                        )
        if run.model.skipped:
            starts = np.array([row[13] for row in mine], dtype=float)
            dispatched = np.array([row[9] != SOURCE_GAP_SKIPPED for row in mine], dtype=bool)
            fixed = skipped_start(starts, dispatched, episode_wall)
            mine = [(*row[:13], start, *row[14:]) for row, start in zip(mine, fixed, strict=True)]
        rows.extend(mine)
        wall.append(episode_wall)
        silence.append(max(round_silence.values(), default=0.0))
    calls = calls_frame([row[:-1] for row in rows])
    if hedging:
        calls["hedged"] = np.array([row[-1] for row in rows], dtype=bool)
    return assemble(
        calls,
        episode_ids=[run.plan.episode.id for run in runs],
        slot_ids=[run.plan.episode.slot for run in runs],
        wall_sec=wall,
        max_silence_sec=silence,
        peak_loose_workers=metrics.peak_overlap(loose_starts, loose_ends),
        engine="real",
        policy=policy,
        narrowing=narrowing,
        assumptions={"censored": censored, "seed": seed, "time_scale": scale},
    )
