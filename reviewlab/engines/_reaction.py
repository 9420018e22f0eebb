"""The model's reaction after an abandonment: a swappable assumption of every replay.

A replay abandons calls the recording saw return, so what the model does next is an
assumption, named in ``ReplayResult.assumptions``: ``as_recorded`` (the later rounds replay
unchanged), ``reissue`` (abandoned calls re-issued once after their round) or ``skip_target``
(no later read of a path whose call was abandoned); docs/semantics.md, "What a replay
assumes". The twin and the vectorized engine replay a reaction, a breaker and hedges through
one fixed point over a rewritten corpus (:func:`react`): a :class:`Plan` per episode, the
corpus rewritten and replayed as recorded, the abandonments giving the next plan, until it
stops changing.

Invariants: a call's fate depends only on earlier calls of its episode (or slot), so each pass
settles one more decision, capped at :data:`MAX_PASSES` plus three per recorded call; hedges
are planned once from the corpus as recorded and carried by origin. The fixed point, the rows
and the combinations: docs/architecture.md, "Reactions and the rewrite fixed point".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import REACTIONS, SOURCE_GAP_ABANDONED, Reaction
from reviewlab.engines._censoring import HedgePlan, completion_times, hedge_plan
from reviewlab.engines._remap import remap
from reviewlab.engines._result import ReplayResult
from reviewlab.engines._rewrite import Origin, Plan, issued_rounds, next_plan, rewrite, settled_with
from reviewlab.engines._withholding import CallKey, episode_walks, withheld_calls
from reviewlab.recording._schema import Episode

MAX_PASSES = 64
"""Rewrite passes :func:`react` makes, beyond three per recorded call, before it gives up."""

Run = Callable[[list[Episode], HedgePlan | None], ReplayResult]
"""An engine as :func:`react` drives it: an ``as_recorded``, ``censored="wedge"`` replay of a
rewritten corpus, with the replay's hedge plan carried to its calls (``None``: no hedges)."""


def check_reaction(reaction: Any) -> Reaction:
    """``reaction`` if it names a reaction model, else a ``ValueError`` naming the parameter."""
    if reaction not in REACTIONS:
        raise ParameterError(
            "reaction", f"expected one of {', '.join(REACTIONS)}, got {reaction!r}"
        )
    return reaction  # type: ignore[no-any-return]


def needs_rewrite(policy: Policy, reaction: str) -> bool:
    """Whether a replay of ``policy`` under ``reaction`` must run the rewrite fixed point
    (:func:`react`): a reaction other than ``as_recorded``, or a breaker. Engines replaying
    ``as_recorded`` on their own (a sweep's fast path) would miss what it changes."""
    return reaction != "as_recorded" or policy.breaker is not None


def react(
    run: Run,
    episodes: Sequence[Episode],
    reaction: str,
    *,
    censored: str,
    seed: int,
    policy: Policy,
) -> ReplayResult:
    """Replay ``episodes`` with ``run`` under ``reaction`` and the breaker and hedges of
    ``policy`` (the policy the result names; ``run`` replays it without its breaker).

    ``run`` gets the corpus rewritten by the current plans and the replay's one hedge plan
    carried to it; see the module docstring for the fixed point, its bound and the frames.
    """
    check_reaction(reaction)
    if not isinstance(policy, Policy):
        raise TypeError(f"policy: expected a Policy (Policy.of), got {policy!r}")
    breaker = policy.breaker
    completion = completion_times(episodes, censored, seed)
    corpus = settled_with(episodes, completion)
    hedges = hedge_plan(episodes, policy, completion, seed)  # once, from the corpus as recorded
    plans: dict[str, Plan] = {}
    held_at: dict[tuple[str, CallKey], float] = {}
    passes = MAX_PASSES + 3 * sum(len(episode.calls) for episode in corpus)
    for _ in range(passes):
        rewritten, origins = [], {}
        for episode in corpus:
            copy, origin = rewrite(episode, plans.get(episode.id, Plan()))
            rewritten.append(copy)
            origins[episode.id] = origin
        result = run(rewritten, None if hedges is None else _carried(hedges, corpus, origins))
        gone = result.calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy()
        ids = result.calls["episode_id"].to_numpy()
        bounds = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if ids.size else np.empty(0, int)
        per_episode = dict(
            zip(ids[bounds].tolist(), np.split(gone, bounds[1:]) if ids.size else [], strict=True)
        )
        fresh = {}
        for episode in corpus:
            plan = next_plan(
                episode,
                origins[episode.id],
                per_episode.get(episode.id, np.zeros(0, bool)).tolist(),
                reaction,
            )
            fresh[episode.id] = plan
        if breaker is not None:
            walks = episode_walks(
                result,
                corpus,
                {key: [(o.index, o.reissue) for o in value] for key, value in origins.items()},
                {e.id: issued_rounds(e, fresh.get(e.id, Plan())) for e in corpus},
            )
            withheld, held_at = withheld_calls(breaker, walks)
            for episode_id, keys in withheld.items():
                fresh[episode_id] = replace(fresh[episode_id], withheld=keys)
        fresh = {episode_id: plan for episode_id, plan in fresh.items() if plan}
        if fresh == plans:
            return remap(
                result,
                corpus,
                origins,
                plans,
                held_at,
                policy=policy,
                assumptions={"censored": censored, "seed": seed, "reaction": reaction},
            )
        plans = fresh
    raise RuntimeError(
        f"reaction {reaction!r}: the replay did not settle after {passes} rewrite passes"
    )


def _carried(
    hedges: HedgePlan, corpus: Sequence[Episode], origins: Mapping[str, list[Origin]]
) -> HedgePlan:
    """The replay's hedge plan carried to the calls of the rewritten corpus, by origin: a
    recorded call keeps its row's plan, a re-issued copy never hedges."""
    rows: list[int] = []
    may_hedge: list[bool] = []
    row = 0
    for episode in corpus:
        for origin in origins[episode.id]:
            rows.append(row + origin.index)
            may_hedge.append(not origin.reissue)
        row += len(episode.calls)
    return hedges.carried(np.array(rows, dtype=np.intp), np.array(may_hedge, dtype=bool))
