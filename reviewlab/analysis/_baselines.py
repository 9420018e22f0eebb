"""Baselines a recommendation must beat, compared on held-out episodes.

Three ways people choose timeouts without reviewlab, each fitted on the same training episodes
as the recommendation and replayed on episodes neither saw: the percentile rule
(:func:`percentile_rule`, ``factor`` × a quantile of the completed calls only), RFC 6298's
adaptive timer per tool (:func:`rfc6298_bounds`, run online over the calls in recorded order)
and the best preset within the recommendation's budget. :func:`compare_baselines` splits the
corpus (seeded), recommends on one part, replays everything on the other, and says per
baseline whether the recommendation dominates it or on which figures it does not. The rules:
docs/metrics.md, "Baselines".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.analysis._holdout import check_held_out, split_episodes
from reviewlab.analysis._presets import load_presets, preset_policy
from reviewlab.analysis._recommendation import Recommendation
from reviewlab.analysis._tune import recommend
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import DEFAULT_CENSORING, CensoringMode
from reviewlab.engines._censoring import effective_observation
from reviewlab.engines._corpus import CorpusSource, open_corpus
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Episode

CALL_KEY = "_reviewlab_call"
"""The argument :func:`compare_baselines` adds to each call so a per-call rule can find it."""
COMPARED = ("abandoned_call_rate", "timeout_coverage_loss_rate")
"""The figures (besides the objective) a recommendation must be no worse on to dominate."""


def percentile_rule(
    episodes: Sequence[Episode], *, q: float = 0.99, factor: float = 1.5
) -> dict[str, float]:
    """Per tool, ``factor`` × the ``q``-quantile of its completed calls' durations (censored
    calls dropped); a tool none of whose calls completed is absent."""
    if not 0.0 < q < 1.0 or not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"percentile_rule: expected 0 < q < 1 and factor > 0, got {q}, {factor}")
    done: dict[str, list[float]] = {}
    for episode in episodes:
        for call in episode.calls:
            duration, completed = effective_observation(call)
            if completed:
                done.setdefault(call.tool, []).append(duration)
    return {
        tool: max(float(np.quantile(values, q)) * factor, 1e-3) for tool, values in done.items()
    }


def rfc6298_bounds(
    durations: Sequence[float] | np.ndarray,
    completed: Sequence[bool] | np.ndarray,
    *,
    initial_sec: float = 1.0,
    min_sec: float = 1.0,
    max_sec: float = 600.0,
    granularity_sec: float = 0.001,
) -> np.ndarray:
    """The RTO each call of one tool gets when RFC 6298's timer runs over them in order (see
    the module docstring); a censored call counts as outliving any RTO."""
    alpha, beta, k = 1 / 8, 1 / 4, 4.0
    rto = min(max(initial_sec, min_sec), max_sec)
    srtt = rttvar = math.nan
    bounds = np.empty(len(durations))
    for i, (duration, done) in enumerate(zip(durations, completed, strict=True)):
        bounds[i] = rto
        if not done or duration > rto:
            rto = min(rto * 2, max_sec)  # back off; Karn: no sample from a timed-out call
            continue
        if math.isnan(srtt):
            srtt, rttvar = duration, duration / 2
        else:
            rttvar = (1 - beta) * rttvar + beta * abs(srtt - duration)
            srtt = (1 - alpha) * srtt + alpha * duration
        rto = min(max(srtt + max(granularity_sec, k * rttvar), min_sec), max_sec)
    return bounds


class PerCallTimeouts:
    """A timeout rule with one bound per call, found by the call's :data:`CALL_KEY` argument
    (a call without one gets ``default_sec``). Engines ask a custom rule call by call."""

    def __init__(self, bounds: Mapping[str, float], default_sec: float, name: str) -> None:
        self.bounds = dict(bounds)
        self.default_sec = float(default_sec)
        self.name = name

    def timeout_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float:
        """This call's bound."""
        key = (tool_args or {}).get(CALL_KEY)
        return self.bounds.get(str(key), self.default_sec)


def _keyed(episodes: Sequence[Episode]) -> list[Episode]:
    """The episodes with each call's :data:`CALL_KEY` argument set to ``episode#index``."""
    out = []
    for episode in episodes:
        index = 0
        rounds = []
        for rnd in episode.rounds:
            calls = []
            for call in rnd.calls:
                key = f"{episode.id}#{index}"
                calls.append(call.model_copy(update={"args": {**call.args, CALL_KEY: key}}))
                index += 1
            rounds.append(rnd.model_copy(update={"calls": calls}))
        out.append(episode.model_copy(update={"rounds": rounds}))
    return out


def _rfc_policy(
    train: Sequence[Episode], held: Sequence[Episode], base: Policy, name: str
) -> Policy:
    """The adaptive timer warmed on ``train`` and run over ``held``, as a per-call rule."""
    calls: dict[str, list[tuple[str, float, bool]]] = {}
    for part, episodes in (("train", train), ("held", held)):
        ordered = sorted(episodes, key=lambda e: e.started_at)
        for episode in ordered:
            for call in episode.calls:
                duration, done = effective_observation(call)
                key = str(call.args.get(CALL_KEY, "")) if part == "held" else ""
                calls.setdefault(call.tool, []).append((key, duration, done))
    bounds: dict[str, float] = {}
    for tool, seen in calls.items():
        ceiling = max(base.timeout_for(None, tool, remaining_sec=None), 60.0)
        rto = rfc6298_bounds([d for _, d, _ in seen], [c for _, _, c in seen], max_sec=ceiling)
        bounds.update({key: float(b) for (key, _, _), b in zip(seen, rto, strict=True) if key})
    rule = PerCallTimeouts(bounds, base.timeout_for(None, "", remaining_sec=None), name)
    return Policy(timeouts=rule, narrowing=base.narrowing, name=name)


@dataclass(frozen=True)
class BaselineComparison:
    """What :func:`compare_baselines` found: the table, the verdicts, the split."""

    table: pd.DataFrame
    """One row per policy: ``policy``, ``fitted``, the :data:`COMPARED` figures and the
    objective on the held-out episodes, ``verdict``."""
    recommendation: Recommendation
    """The recommendation made on the training episodes."""
    objective: str
    train_episodes: int
    held_out_episodes: int
    assumptions: dict[str, Any]
    held_out_ids: tuple[str, ...] = ()
    """The ids of the held-out episodes, in corpus order."""

    @property
    def dominated(self) -> bool:
        """Whether the recommendation dominates every baseline on the held-out episodes."""
        return bool((self.table["verdict"].iloc[1:] == "dominated").all())


def _verdict(ours: Mapping[str, float], theirs: Mapping[str, float], keys: Sequence[str]) -> str:
    """``dominated`` when the recommendation is no worse on every figure, else where it is
    worse (and where better)."""
    worse = [key for key in keys if ours[key] > theirs[key] + 1e-12]
    if not worse:
        return "dominated"
    better = [key for key in keys if ours[key] < theirs[key] - 1e-12]
    return (
        "recommendation worse on "
        + ", ".join(worse)
        + (f"; better on {', '.join(better)}" if better else "")
    )


def compare_baselines(
    corpus: CorpusSource,
    *,
    held_out: float = 0.5,
    seed: int = 0,
    censored: CensoringMode = DEFAULT_CENSORING,
    **recommend_options: Any,
) -> BaselineComparison:
    """Recommend on a seeded ``1 - held_out`` share of the episodes, fit the baselines there,
    replay all on the rest (see the module docstring). ``recommend_options`` go to
    :func:`~reviewlab.analysis._tune.recommend` (its ``base`` is the baselines' base too)."""
    check_held_out(held_out)  # before the corpus is read
    episodes = open_corpus(corpus).episodes(reason="baselines: a split of the episodes")
    train, rest = split_episodes(episodes, held_out, seed)
    held = _keyed(rest)
    rec = recommend(train, censored=censored, **recommend_options)
    key = rec.objective
    base = Policy.of(recommend_options.get("base"), recommend_options.get("narrowing"))
    tools = sorted({call.tool for ep in episodes for call in ep.calls})
    percentile = base.replace(
        timeouts=base.timeouts.with_tool_timeouts("p99x1.5", **percentile_rule(train)),
        name="percentile rule (p99 x 1.5, completed only)",
    )
    budget = float(rec.budgets.set_index("budget").loc["timeout_coverage_loss_rate", "limit"])
    best_name, best_policy, best_value = "", None, math.inf
    for name, preset in load_presets().items():
        policy = preset_policy(preset, tools)
        summary = replay(train, policy, engine="vectorized", censored=censored).summary
        if summary["timeout_coverage_loss_rate"] <= budget and summary[key] < best_value:
            best_name, best_policy, best_value = name, policy, summary[key]
    candidates: list[tuple[str, str, Policy]] = [
        ("recommended", "recommend() on the training episodes", rec.policy),
        (percentile.name, "completed training calls", percentile),
        (
            "adaptive timer (RFC 6298)",
            "online: training calls, then held-out calls in order",
            _rfc_policy(train, held, base, "adaptive timer (RFC 6298)"),
        ),
    ]
    if best_policy is not None:
        candidates.append((f"best preset: {best_name}", f"best {key} on training", best_policy))
    rows = []
    for name, fitted, policy in candidates:
        summary = replay(held, policy, engine="vectorized", censored=censored).summary
        rows.append({"policy": name, "fitted": fitted, **{k: summary[k] for k in (*COMPARED, key)}})
    ours = rows[0]
    for row in rows:
        row["verdict"] = "" if row is ours else _verdict(ours, row, (*COMPARED, key))
    return BaselineComparison(
        table=pd.DataFrame(rows),
        recommendation=rec,
        objective=key,
        train_episodes=len(train),
        held_out_episodes=len(held),
        held_out_ids=tuple(episode.id for episode in held),
        assumptions={
            "held_out": held_out,
            "seed": seed,
            "censored": censored,
            "engine": "vectorized",
            "reaction": "as_recorded",
        },
    )
