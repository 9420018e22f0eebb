"""Censoring-aware duration estimates per tool, and the seeded draws every engine shares.

A call with ``completed=False`` is right-censored: all we know is that it had not returned
after ``duration_sec``. :class:`KaplanMeier` estimates each tool's survival function with
censoring taken into account. Under ``censored="impute"`` a censored call gets a completion
time drawn from ``T | T > c`` (:func:`impute_durations`, :func:`completion_times`); a hedged
call's second attempt runs a duration drawn unconditionally (:func:`hedge_plan`, a
:class:`HedgePlan` carried to rewritten calls by origin).

Invariants: the same corpus and seed give the same draws, one uniform per censored call (per
planned hedge, on a stream of its own) in corpus order; an imputed draw is finite and beyond
``c`` (a constant-hazard tail past the last event); a tool with no completed call borrows the
pooled estimate for imputation, but never returns on a second try. The draw rules:
docs/architecture.md, "Censoring and the seeded draws".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from reviewlab.core._errors import ParameterError
from reviewlab.core._hedge import plan_budget
from reviewlab.core._policy import Policy
from reviewlab.recording._schema import Call, Episode

# Seed stream of the second attempts' durations, kept apart from the imputation draws.
_HEDGE_STREAM = 0x4ED6E


def effective_observation(call: Call) -> tuple[float, bool]:
    """The call's true ``(duration_sec, completed)`` as far as the recording knows it.

    A call the recording abandoned whose loose worker was later seen coming back
    (``returned_after_sec``) did complete, at that time; otherwise the recorded
    pair stands.
    """
    if call.returned_after_sec is not None:
        return call.returned_after_sec, True
    return call.duration_sec, call.completed


class KaplanMeier:
    """The Kaplan–Meier estimate of one duration distribution from right-censored observations.

    ``times`` are observed durations, ``events`` is True where the call
    completed (False: censored at that time). At an event time a call censored
    at the same instant still counts as at risk (the usual convention).
    """

    def __init__(
        self, times: Sequence[float] | np.ndarray, events: Sequence[bool] | np.ndarray
    ) -> None:
        durations = np.asarray(times, dtype=float)
        completed = np.asarray(events, dtype=bool)
        if durations.shape != completed.shape or durations.ndim != 1:
            raise ValueError("KaplanMeier: times and events must be 1-D and of equal length")
        if durations.size and (not np.all(np.isfinite(durations)) or np.any(durations < 0)):
            raise ValueError("KaplanMeier: times must be finite, non-negative seconds")
        self.observations = int(durations.size)
        self.events = int(completed.sum())
        event_times, deaths = np.unique(durations[completed], return_counts=True)
        sorted_all = np.sort(durations)
        # At risk at t: observations with duration >= t (a call censored at t was still running
        # then).
        at_risk = sorted_all.size - np.searchsorted(sorted_all, event_times, side="left")
        self.event_times = event_times
        self.survival_after = (
            np.cumprod(1.0 - deaths / at_risk) if event_times.size else np.empty(0)
        )
        # Summed in sorted order: the same multiset of durations gives the same bits whatever
        # order a caller passes them in (the column compiler and the episode reader differ).
        total = float(sorted_all.sum())
        # Constant-hazard tail beyond the last event time (MLE of an exponential rate).
        self.tail_hazard = self.events / total if self.events and total > 0 else math.inf

    @property
    def estimable(self) -> bool:
        """Whether at least one observation completed (otherwise nothing can be drawn)."""
        return self.events > 0

    def survival(self, t: float) -> float:
        """``S(t) = P(T > t)`` from the step estimate (1.0 before the first event)."""
        index = int(np.searchsorted(self.event_times, t, side="right"))
        return 1.0 if index == 0 else float(self.survival_after[index - 1])

    def draw(self, u: float) -> float:
        """A duration from ``T`` itself for the uniform ``u`` in ``[0, 1)``: the smallest event
        time with ``S(t) <= u``, or ``inf`` when ``u`` falls in the mass beyond the last observed
        return (an attempt that never returns)."""
        if not 0.0 <= u < 1.0:
            raise ParameterError("u", f"expected a uniform number in [0, 1), got {u!r}")
        hit = int(np.searchsorted(-self.survival_after, -u, side="left"))
        return float(self.event_times[hit]) if hit < self.event_times.size else math.inf

    def quantile(self, q: float) -> float:
        """The ``q``-quantile of the duration: the smallest event time with ``S(t) <= 1 - q``;
        ``inf`` when the estimate never falls that low (past the last observed return)."""
        if not 0.0 <= q < 1.0:
            raise ParameterError("q", f"expected a quantile in [0, 1), got {q!r}")
        return self.draw(1.0 - q) if q > 0.0 else self.draw(math.nextafter(1.0, 0.0))

    def draw_beyond(self, censored_at: float, u: float) -> float:
        """A completion time from ``T | T > censored_at`` for the uniform ``u`` in ``[0, 1)``;
        always ``> censored_at``."""
        if not self.estimable:
            raise ValueError(
                "KaplanMeier: no completed observation; the distribution cannot be estimated"
            )
        if not 0.0 <= u < 1.0:
            raise ParameterError("u", f"expected a uniform number in [0, 1), got {u!r}")
        s_c = self.survival(censored_at)
        target = u * s_c
        floor = math.nextafter(censored_at, math.inf)
        # survival_after is non-increasing: the first index at or below target is the draw.
        hit = int(np.searchsorted(-self.survival_after, -target, side="left"))
        if hit < self.event_times.size:
            return max(float(self.event_times[hit]), floor)
        s_last = float(self.survival_after[-1])
        anchor = max(censored_at, float(self.event_times[-1]))
        if target <= 0.0 or math.isinf(self.tail_hazard):
            # S reaches 0 only at an observed event, handled above; a zero target needs the tail's
            # limit.
            return max(anchor + 1.0 / max(self.tail_hazard, 1e-300), floor)
        return max(anchor + math.log(s_last / target) / self.tail_hazard, floor)


def censored_calls(episodes: Iterable[Episode]) -> list[tuple[str, int, Call]]:
    """``(episode_id, call_index, call)`` of every call still censored after ``returned_after_sec``,
    in corpus order."""
    out = []
    for episode in episodes:
        for index, call in enumerate(episode.calls):
            if not effective_observation(call)[1]:
                out.append((episode.id, index, call))
    return out


def estimates_by_tool(episodes: Sequence[Episode]) -> tuple[dict[str, KaplanMeier], KaplanMeier]:
    """One :class:`KaplanMeier` per tool, and the estimate pooled over all tools."""
    observed: dict[str, tuple[list[float], list[bool]]] = {}
    for episode in episodes:
        for call in episode.calls:
            duration, completed = effective_observation(call)
            times, events = observed.setdefault(call.tool, ([], []))
            times.append(duration)
            events.append(completed)
    per_tool = {tool: KaplanMeier(times, events) for tool, (times, events) in observed.items()}
    all_times = [t for times, _ in observed.values() for t in times]
    all_events = [e for _, events in observed.values() for e in events]
    return per_tool, KaplanMeier(all_times, all_events)


def completion_times(
    episodes: Sequence[Episode], censored: str, seed: int = 0
) -> dict[tuple[str, int], float] | None:
    """When each still-censored call returns under the replay's censoring assumption
    (docs/semantics.md, "What a replay assumes").

    ``{(episode_id, call_index): seconds}``, or ``None`` under ``"wedge"``, where
    a censored call never returns. ``"observed"``: it returns at its recorded
    censoring time (the optimistic end: it cannot have returned earlier).
    ``"impute"``: at a seeded Kaplan–Meier draw (:func:`impute_durations`). Every
    engine calls this one function, so they replay the very same times.
    """
    if censored == "wedge":
        return None
    if censored == "observed":
        return {
            (episode_id, index): call.duration_sec
            for episode_id, index, call in censored_calls(episodes)
        }
    if censored == "impute":
        return impute_durations(episodes, seed)
    raise ParameterError("censored", f"expected one of wedge, observed, impute, got {censored!r}")


def impute_durations(episodes: Sequence[Episode], seed: int = 0) -> dict[tuple[str, int], float]:
    """Seeded completion times for every still-censored call: ``{(episode_id, call_index):
    seconds}``.

    ``call_index`` is the 0-based index of the call within its episode (the
    replay frames' ``call_index``). Each value is strictly greater than the
    call's observed ``duration_sec``. Calls that completed (or whose loose worker
    was seen returning) are absent: their effective duration is known.
    """
    episodes = list(episodes)
    pending = censored_calls(episodes)
    if not pending:
        return {}
    per_tool, pooled = estimates_by_tool(episodes)
    if not pooled.estimable:
        raise ParameterError(
            "impute",
            "no call in the corpus ever completed, so no duration distribution can be "
            "estimated; replay with censored='wedge'",
        )
    rng = np.random.default_rng(seed)
    draws = rng.random(len(pending))
    imputed: dict[tuple[str, int], float] = {}
    for (episode_id, index, call), u in zip(pending, draws, strict=True):
        estimate = per_tool[call.tool]
        if not estimate.estimable:
            estimate = pooled
        imputed[(episode_id, index)] = estimate.draw_beyond(call.duration_sec, float(u))
    return imputed


@dataclass(frozen=True)
class HedgePlan:
    """Which calls of a corpus may hedge, and how long their second attempts run.

    Arrays by call row in corpus order (episode order, then call order):
    ``planned`` (the budget let this call hedge, :func:`~reviewlab.core._hedge.plan_budget`),
    ``after_sec`` (its tool's delay; NaN where not planned), ``second_sec``
    (the second attempt's drawn duration; ``inf`` never returns, NaN where not
    planned) and ``first_sec`` (the first attempt's effective duration under
    the replay's censoring assumption, ``inf`` for a wedge).
    """

    planned: np.ndarray
    after_sec: np.ndarray
    second_sec: np.ndarray
    first_sec: np.ndarray

    @property
    def hedges(self) -> int:
        """How many calls may hedge."""
        return int(np.count_nonzero(self.planned))

    def carried(self, rows: np.ndarray, may_hedge: np.ndarray) -> HedgePlan:
        """The plan of a rewritten corpus: its row ``i`` is this plan's row ``rows[i]`` (the
        call it comes from), and hedges only where ``may_hedge[i]`` (a re-issued copy does
        not). Nothing is re-planned or re-drawn: which calls hedge, and their second
        attempts, stay those of the corpus as recorded."""
        rows = np.asarray(rows, dtype=np.intp)
        keep = np.asarray(may_hedge, dtype=bool) & self.planned[rows]
        return HedgePlan(
            keep,
            np.where(keep, self.after_sec[rows], math.nan),
            np.where(keep, self.second_sec[rows], math.nan),
            self.first_sec[rows],
        )


def hedge_plan(
    episodes: Sequence[Episode],
    policy: Policy,
    completion: Mapping[tuple[str, int], float] | None,
    seed: int = 0,
) -> HedgePlan | None:
    """The one hedge plan of a replay (``None`` when ``policy`` hedges nothing): the budget of
    ``policy.hedges`` over ``episodes`` as recorded.

    ``completion`` is :func:`completion_times` of the same corpus and censoring
    mode (``None``: ``wedge``, a censored call never returns). Every engine
    calls this one function, so the twin, the vectorized and the real engine
    hedge the same calls with the same second-attempt durations.
    """
    rules = policy.hedges
    if not rules:
        return None
    tools: list[str] = []
    first: list[float] = []
    for episode in episodes:
        for index, call in enumerate(episode.calls):
            duration, completed = effective_observation(call)
            if not completed:
                duration = math.inf if completion is None else completion[(episode.id, index)]
            tools.append(call.tool)
            first.append(duration)
    first_sec = np.asarray(first, dtype=float)
    planned = plan_budget(tools, first_sec, rules)
    after = np.full(first_sec.size, math.nan)
    second = np.full(first_sec.size, math.nan)
    rows = np.flatnonzero(planned)
    if rows.size:
        per_tool, _ = estimates_by_tool(episodes)
        draws = np.random.default_rng((seed, _HEDGE_STREAM)).random(rows.size)
        for row, u in zip(rows.tolist(), draws.tolist(), strict=True):
            tool = tools[row]
            after[row] = rules[tool].after_sec
            estimate = per_tool[tool]
            second[row] = estimate.draw(u) if estimate.estimable else math.inf
    return HedgePlan(planned, after, second, first_sec)
