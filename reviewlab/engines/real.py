"""``engine="real"``: replay recorded episodes through the real :class:`ReviewEpisode` and :class:`BoundedExecutor`.

Each recorded episode runs, on its own thread, as a real episode on the real
monotonic clock with every recorded time multiplied by ``time_scale``:

* a :class:`_ReplayModel` (a :class:`~reviewlab.live.episode.ScriptedModel`) answers
  the n-th send with the n-th recorded round's calls after waiting its
  ``send_sec × time_scale``; the last send is a final answer;
* a :class:`_ReplayRegistry` runs each call by waiting its effective recorded
  duration × ``time_scale`` (``threading.Event.wait``), stamps the reader view
  with the recorded extent for a ``read_file`` (after the wait, as the real
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
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from reviewlab.core import metrics
from reviewlab.core.deadline import deadline_remaining, execution_deadline_scope, monotonic_now
from reviewlab.core.policy import Narrowing, SupportsTimeoutFor, TimeoutPolicy
from reviewlab.core.receipts import Outcome
from reviewlab.core.vocab import CENSORING_MODES, SOURCE_GAP_WEDGED, CensoringMode
from reviewlab.engines.censoring import completion_times, effective_observation
from reviewlab.engines.result import ReplayResult, assemble
from reviewlab.engines.twin.engine import arrival_times, calls_frame
from reviewlab.live.episode import CallTrace, EpisodeResult, ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.executor import BoundedExecutor, CallStatus
from reviewlab.recording.schema import Episode

__all__ = ["CALL_ARG", "replay_real"]

CALL_ARG = "_replay_call"
"""The extra argument naming a call's index within its episode."""


class _LogEnded(Exception):
    """Raised by a censored call under the pre-fix policy: the recorded log ends with it."""


class _ScaledPolicy:
    """A policy whose every timeout is the wrapped policy's times ``scale``, resolved at recorded scale."""

    def __init__(self, inner: SupportsTimeoutFor, scale: float) -> None:
        self.inner = inner
        self.scale = scale
        self.name = f"{getattr(inner, 'name', type(inner).__name__)}x{scale:g}"

    def timeout_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float:
        args = {k: v for k, v in (tool_args or {}).items() if k != CALL_ARG}
        remaining = deadline_remaining()
        if isinstance(self.inner, TimeoutPolicy):
            # tools=None, as in every replay: the recorded registry declared nothing.
            recorded_rem = None if remaining is None else remaining / self.scale
            seconds = self.inner.timeout_for(None, tool_name, args, remaining_sec=recorded_rem)
        else:
            seconds = self.inner.timeout_for(None, tool_name, args)
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

    def execute(self, name: str, args: Mapping[str, Any]) -> str:
        index = int(args[CALL_ARG])
        call = self.plan.calls[index]
        if self.ended_at_call is not None:
            return ""  # the recorded log has ended: this call never ran
        if not call.completed:
            if self.unbounded:
                # Never returns and nothing bounds the wait: recorded as infinite, not waited on.
                self.ended_at_call = index
                raise _LogEnded(f"call {index} was still running when the recorded log ended")
            self.release.wait()
            return ""
        self._never.wait(call.duration_sec * self.scale)
        if call.tool == "read_file" and call.extent is not None:
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
    """Replays the recorded sends: waits ``send_sec × scale``, then answers with that round's calls."""

    def __init__(self, plan: _Plan, registry: _ReplayRegistry, scale: float) -> None:
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
            # The recording ended mid-episode (a wedge, a log end): the replay still ends with an answer.
            script.append({"content": "replayed final answer"})
        super().__init__(script)
        self.sends = [send for send, _ in plan.rounds] + [0.0]
        self.registry = registry
        self.scale = scale
        self._never = threading.Event()

    def chat(self, **kwargs: Any) -> dict[str, Any]:
        if self.registry.ended_at_call is not None:
            self.calls.append(kwargs)
            return {"content": "the recorded log ended"}
        send = self.sends[len(self.calls)] if len(self.calls) < len(self.sends) else 0.0
        if send:
            self._never.wait(send * self.scale)
        return super().chat(**kwargs)


def _plan(
    episode: Episode, arrival_sec: float, imputed: Mapping[tuple[str, int], float] | None
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
            calls.append(
                _PlannedCall(
                    call.tool,
                    dict(call.args),
                    round_no,
                    duration,
                    completed,
                    call.status == "error",
                    call.requested_lines,
                    extent,
                )
            )
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


def replay_real(
    episodes: Iterable[Episode],
    policy: SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    censored: CensoringMode = "wedge",
    time_scale: float = 0.001,
    seed: int = 0,
    concurrency: int = 32,
    settle_sec: float = 2.0,
) -> ReplayResult:
    """Replay ``episodes`` through the real episode and executor on threads (see the module docstring).

    ``concurrency`` episodes run at once; ``settle_sec`` is how long (real
    seconds) to wait at the end for loose workers that will return.
    """
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    if (
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
    scale = float(time_scale)
    scaled_policy = _ScaledPolicy(policy, scale)
    scaled_narrowing = _scaled_narrowing(narrowing, scale)
    release = threading.Event()
    executor = BoundedExecutor(loose_cap=None, name="replay-real")
    runs = []
    for episode, arrival_sec in zip(corpus, arrival.tolist(), strict=True):
        plan = _plan(episode, arrival_sec, imputed)
        runs.append(
            _Run(plan, _ReplayRegistry(plan, scale, release, narrowing.mode == "unbounded"))
        )

    def run_one(run: _Run) -> None:
        registry = run.registry
        model = _ReplayModel(run.plan, registry, scale)
        episode = ReviewEpisode(
            ".",
            model,
            policy=scaled_policy,
            narrowing=scaled_narrowing,
            registry_factory=registry.factory,
            executor=executor,
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
        with ThreadPoolExecutor(
            max_workers=concurrency, thread_name_prefix="replay-episode"
        ) as pool:
            list(pool.map(run_one, runs))
        for run in runs:
            if run.error is not None:
                raise RuntimeError(
                    f"episode {run.plan.episode.id!r}: real replay failed: {run.error!r}"
                ) from run.error
        _settle(runs, settle_sec)
        return _result(runs, policy, narrowing, scale, censored, seed)
    finally:
        release.set()
        executor.shutdown()


def _settle(runs: list[_Run], settle_sec: float) -> None:
    """Wait (at most ``settle_sec`` in all) for loose workers whose calls complete."""
    give_up_at = time.monotonic() + settle_sec
    for run in runs:
        assert run.result is not None
        for rnd in run.result.trace:
            for trace in rnd.calls:
                result = trace.result
                if (
                    result is None
                    or result.status is not CallStatus.ABANDONED
                    or result.settled is None
                ):
                    continue
                index = int((trace.args or {}).get(CALL_ARG, -1))
                if index >= 0 and run.plan.calls[index].completed:
                    result.settled.wait(max(0.0, give_up_at - time.monotonic()))


def _log_end(run: _Run, wedged: CallTrace | None, scale: float) -> float:
    """When a withheld call of ``run`` "started" (recorded seconds from the episode's start): the wedge's end.

    That is when the recorded log ended; without a measured wedge, the episode's own end.
    """
    if wedged is not None:
        return math.inf  # the wedge is waited on forever
    return (run.ended - run.started) / scale


def _result(
    runs: list[_Run], policy: Any, narrowing: Narrowing, scale: float, censored: str, seed: int
) -> ReplayResult:
    rows: list[tuple[Any, ...]] = []
    loose_starts: list[float] = []
    loose_ends: list[float] = []
    wall, silence = [], []
    for run in runs:
        plan, result = run.plan, run.result
        assert result is not None
        episode_id = plan.episode.id
        traces: dict[int, CallTrace] = {}
        round_silence: dict[int, float] = {}
        for rnd in result.trace:
            for ran in rnd.calls:
                traces[int((ran.args or {}).get(CALL_ARG, -1))] = ran
        ended_at = run.registry.ended_at_call
        log_end = _log_end(run, traces.get(ended_at) if ended_at is not None else None, scale)
        for index, call in enumerate(plan.calls):
            trace = traces.get(index)
            if trace is None or (ended_at is not None and index > ended_at):
                rows.append(
                    (
                        episode_id,
                        call.round,
                        index,
                        call.tool,
                        call.duration_sec,
                        call.completed,
                        math.nan,
                        "unbounded",
                        str(Outcome.WITHHELD),
                        "",
                        call.requested_lines,
                        0,
                        0.0,
                        log_end,
                        0.0,
                    )
                )
                continue
            if trace.result is None:
                raise RuntimeError(
                    f"episode {episode_id!r} call {index}: the real episode refused it "
                    f"({trace.receipt.error}); a replayed call should always reach the executor"
                )
            receipt, measured = trace.receipt, trace.result
            waited = measured.duration_sec / scale
            round_silence[call.round] = round_silence.get(call.round, 0.0) + waited
            bound_sec = math.nan if receipt.bound_sec is None else receipt.bound_sec / scale
            gap = receipt.source_gap or ""
            outcome = str(receipt.outcome)
            started = (measured.started_wall - run.started_wall) / scale
            duration, zombie = waited, 0.0
            if ended_at == index:
                gap, duration, waited = SOURCE_GAP_WEDGED, call.duration_sec, math.inf
                round_silence[call.round] = math.inf
            elif measured.status is CallStatus.ABANDONED:
                if not call.completed:
                    duration, zombie = call.duration_sec, math.inf
                elif measured.zombie_sec is not None:
                    zombie = measured.zombie_sec / scale
                    duration = waited + zombie
                else:
                    duration, zombie = call.duration_sec, max(0.0, call.duration_sec - waited)
                start = plan.arrival_sec + started + waited
                loose_starts.append(start)
                loose_ends.append(start + zombie)
            extent = receipt.extent or {}
            credited = 0
            if extent.get("start_line") is not None and extent.get("end_line") is not None:
                credited = int(extent["end_line"]) - int(extent["start_line"]) + 1
            rows.append(
                (
                    episode_id,
                    call.round,
                    index,
                    call.tool,
                    duration,
                    call.completed,
                    bound_sec,
                    receipt.bound_by,
                    outcome,
                    gap,
                    call.requested_lines,
                    credited,
                    zombie,
                    started,
                    waited,
                )
            )
        wall.append(math.inf if ended_at is not None else (run.ended - run.started) / scale)
        silence.append(max(round_silence.values(), default=0.0))
    calls = calls_frame(rows)
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
