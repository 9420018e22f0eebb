"""Hedged calls in the vectorized engine: the twin's answers, from one settling pass.

Under the replay's one :class:`~reviewlab.engines._censoring.HedgePlan` a planned call's wait
and fate depend on ``w = min(d1, after_sec + d2)`` alone, so a corpus in which every planned
call takes ``w`` settles to exactly the twin's clocks, bounds, outcomes and credits
(:func:`replay_hedged`, the policy replayed with its ``hedges`` part emptied); who is loose
afterwards is :func:`~reviewlab.core._hedge.hedge_fate_array` of the plan and the settled
bounds, and ``duration_sec``/``completed`` are put back to the first attempt's.

Refused by name: a compiled corpus (no episodes to rewrite), and a planned call with recorded
progress or a recorded cancel stop. Why one pass suffices: docs/architecture.md, "Hedges in
the vectorized engine".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from reviewlab.core import _metrics as metrics
from reviewlab.core._hedge import hedge_fate_array
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import DEFAULT_CENSORING, OUTCOMES_ANSWERED
from reviewlab.engines._censoring import (
    HedgePlan,
    completion_times,
    effective_observation,
    hedge_plan,
)
from reviewlab.engines._result import EpisodeArrays, ReplayResult, assemble
from reviewlab.recording._schema import Episode


def replay_hedged(
    compile_corpus: Callable[..., Any],
    episodes: Sequence[Episode] | Any,
    policy: Policy,
    *,
    censored: str = DEFAULT_CENSORING,
    seed: int = 0,
    plan: HedgePlan | None = None,
    **options: Any,
) -> ReplayResult:
    """Replay ``episodes`` under a hedging ``policy`` (see the module docstring).

    ``compile_corpus`` is :func:`reviewlab.engines.vectorized.compile_corpus`
    (passed in, so this module does not import its package). ``plan``: the replay's hedge plan
    carried to ``episodes`` by the rewrite fixed point; by default planned from them.
    """
    if options:
        raise ValueError(f"replay_vectorized: unsupported option(s) {', '.join(sorted(options))}")
    if not isinstance(episodes, list | tuple):
        raise ValueError(
            "hedges: the vectorized engine replays hedged calls from Episode objects, not a "
            "compiled corpus; pass the episodes"
        )
    corpus = list(episodes)
    completion = completion_times(corpus, censored, seed)
    if plan is None:
        plan = hedge_plan(corpus, policy, completion, seed)
    assert plan is not None, "replay_hedged needs a policy that hedges"
    if plan.planned.size != sum(len(episode.calls) for episode in corpus):
        raise ValueError(
            f"hedges: the plan has {plan.planned.size} rows for a corpus of "
            f"{sum(len(episode.calls) for episode in corpus)} calls"
        )
    rewritten, observed_sec, observed_done = _rewrite(corpus, plan, completion)
    compiled = compile_corpus(rewritten, censored="wedge", seed=seed)
    settled = compiled.result(policy.replace(hedges={}))
    calls = settled.calls[list(metrics.ENGINE_CALL_COLUMNS)].copy()
    calls["duration_sec"] = observed_sec
    calls["completed"] = observed_done
    bound = calls["bound_sec"].to_numpy(dtype=float)
    dispatched = calls["outcome"].isin(OUTCOMES_ANSWERED).to_numpy()
    planned = plan.planned & dispatched
    hedged, _, _, _, first_loose, second_loose = hedge_fate_array(
        plan.first_sec, plan.second_sec, plan.after_sec, bound
    )
    zombie = calls["zombie_sec"].to_numpy(dtype=float).copy()
    zombie[planned] = first_loose[planned] + second_loose[planned]
    calls["zombie_sec"] = zombie
    calls["hedged"] = hedged & planned
    episodes_frame = settled.episodes
    return assemble(
        calls,
        EpisodeArrays(
            list(episodes_frame["episode_id"]),
            list(episodes_frame["slot_id"]),
            episodes_frame["wall_sec"].to_numpy(dtype=float),
            episodes_frame["max_silence_sec"].to_numpy(dtype=float),
        ),
        peak_loose_workers=_peak_loose(compiled, calls, planned, first_loose, second_loose, zombie),
        engine="vectorized",
        policy=policy,
        assumptions={"reaction": "as_recorded", "censored": censored, "seed": seed},
    )


def _rewrite(
    corpus: list[Episode], plan: HedgePlan, completion: dict[tuple[str, int], float] | None
) -> tuple[list[Episode], np.ndarray, np.ndarray]:
    """The corpus with every planned call taking ``w`` and every censored call its completion
    time (so it settles under ``wedge``), and the first attempts' effective observations."""
    observed_sec = np.empty(plan.planned.size)
    observed_done = np.empty(plan.planned.size, dtype=bool)
    rewritten = []
    row = 0
    for episode in corpus:
        rounds = []
        index = 0
        changed = False
        for rnd in episode.rounds:
            calls = []
            for call in rnd.calls:
                duration, completed = effective_observation(call)
                if not completed and completion is not None:
                    duration, completed = completion[(episode.id, index)], True
                observed_sec[row], observed_done[row] = duration, completed
                update: dict[str, Any] | None = None
                if plan.planned[row]:
                    if call.progress_sec is not None or call.cancel_honoured_sec is not None:
                        raise ValueError(
                            f"hedges: episode {episode.id!r} call {index} ({call.tool}) may "
                            "hedge and has recorded progress or a cancel stop; the vectorized "
                            "engine does not replay those hedged (use the twin)"
                        )
                    answer = min(
                        float(plan.first_sec[row]),
                        float(plan.after_sec[row] + plan.second_sec[row]),
                    )
                    if math.isfinite(answer):
                        update = {"duration_sec": answer, "completed": True}
                    else:
                        update = {"completed": False}
                    update["returned_after_sec"] = None
                elif completed and (not call.completed or call.returned_after_sec is not None):
                    update = {"duration_sec": duration, "completed": True}
                    update["returned_after_sec"] = None
                if update is not None:
                    call = call.model_copy(update=update)
                    changed = True
                calls.append(call)
                row += 1
                index += 1
            rounds.append(rnd.model_copy(update={"calls": calls}) if changed else rnd)
        rewritten.append(episode.model_copy(update={"rounds": rounds}) if changed else episode)
    return rewritten, observed_sec, observed_done


def _peak_loose(
    compiled: Any,
    calls: Any,
    planned: np.ndarray,
    first_loose: np.ndarray,
    second_loose: np.ndarray,
    zombie: np.ndarray,
) -> int:
    """The most loose workers at one instant: each loose attempt from the moment control came
    back (dispatch + wait) to its own end."""
    arrival = np.asarray(compiled.arrival_sec, dtype=float)[compiled.episode_index]
    back = arrival + calls["start_sec"].to_numpy(dtype=float) + calls["wait_sec"].to_numpy()
    plain = ~planned & (zombie != 0)
    starts = [back[plain]]
    ends = [back[plain] + zombie[plain]]
    for loose in (first_loose, second_loose):
        mask = planned & (loose != 0)
        starts.append(back[mask])
        ends.append(back[mask] + loose[mask])
    return metrics.peak_overlap(np.concatenate(starts), np.concatenate(ends))
