"""The price of waiting: what a replay costs in model tokens, slot seconds and zombie seconds.

:func:`replay_cost` puts a replay's frames, the corpus's recorded token usage and a
:class:`~reviewlab.core._prices.PriceTable` together, one row per episode (:data:`COST_COLUMNS`):
tokens of every recorded round plus every round the replay added (priced like the round it
repeats), slot seconds (``wall_sec``), zombie seconds, and the second threads of hedged calls;
``cost = token_cost + slot_cost + zombie_cost + hedge_cost``. :func:`cost_summary` sums a frame
into :data:`COST_KEYS`.

Invariants: nothing is priced as 0 silently (unpriced rounds and zombies are counted); an
infinite wall or zombie costs infinitely much unless the table says otherwise; the cost is a
function of the frames, so engines that agree give the same cost. docs/metrics.md, "The price
of waiting" and "How a replay is priced".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core._prices import PriceTable
from reviewlab.engines._corpus import CorpusSource, open_corpus
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode

COST_COLUMNS = (
    "episode_id",
    "model",
    "priced_as",
    "rounds",
    "added_rounds",
    "priced_rounds",
    "unpriced_rounds",
    "input_tokens",
    "output_tokens",
    "token_cost",
    "wall_sec",
    "slot_cost",
    "zombie_sec",
    "wedged_zombies",
    "unpriced_zombies",
    "zombie_cost",
    "hedge_sec",
    "hedge_cost",
    "cost",
)
"""One row per episode of :func:`replay_cost` (``model``/``priced_as`` are ``""`` when none)."""
COST_KEYS = (
    "cost_per_episode",
    "cost_total",
    "token_cost",
    "slot_cost",
    "zombie_cost",
    "hedge_cost",
    "priced_rounds",
    "unpriced_rounds",
    "added_rounds",
    "unpriced_zombies",
)
"""What :func:`cost_summary` returns, and the cost columns a priced sweep appends."""


@dataclass
class ReplayCost:
    """The cost of one replay: per episode, summed, and what the figures rest on."""

    episodes: pd.DataFrame
    """One row per episode: :data:`COST_COLUMNS`."""
    summary: dict[str, Any]
    """:func:`cost_summary` of the frame."""
    assumptions: dict[str, Any] = field(default_factory=dict)
    """The replay's assumptions plus the currency and how unpriced items were counted."""


def episode_model(episode: Episode) -> str | None:
    """The model an episode was served by: ``Episode.model``, else ``meta["model"]``."""
    if episode.model is not None:
        return episode.model
    named = episode.meta.get("model")
    return named or None


def added_rounds(calls: pd.DataFrame, recorded_calls: dict[str, int]) -> dict[str, list[int]]:
    """Per episode id, the recorded rounds (1-based) after which the replay asked the model again.

    A row whose ``call_index`` is at least its episode's recorded call count is a call the
    replay added (a re-issue); each distinct ``round`` among an episode's added rows is one
    added model round, repeating that recorded round.
    """
    if calls.empty:
        return {}
    ids = calls["episode_id"].to_numpy()
    limit = np.fromiter((recorded_calls.get(i, 0) for i in ids), dtype=np.int64, count=ids.size)
    extra = calls.loc[calls["call_index"].to_numpy() >= limit, ["episode_id", "round"]]
    out: dict[str, list[int]] = {}
    for episode_id, rnd in extra.drop_duplicates().itertuples(index=False):
        out.setdefault(str(episode_id), []).append(int(rnd))
    return out


@dataclass
class PricedCorpus:
    """A corpus's token prices, worked out once, for pricing many replays of it.

    Per episode: its model and the name it is priced as, the token cost and counts of its
    recorded rounds, how many of them are priced, and per round what a re-ask of it costs
    (``None``: unpriced). :meth:`cost` then prices a replay with array operations, except
    for the episodes that have added rounds.
    """

    ids: list[str]
    recorded_calls: dict[str, int]
    models: list[str]
    priced_as: list[str]
    rounds: np.ndarray
    priced_rounds: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    token_cost: np.ndarray
    round_prices: list[list[tuple[int, int, float] | None]]
    prices: PriceTable

    @classmethod
    def of(cls, episodes: Iterable[Episode], prices: PriceTable) -> PricedCorpus:
        """Work out the token prices of every recorded round of ``episodes`` at ``prices``."""
        ids: list[str] = []
        models: list[str] = []
        priced_as: list[str] = []
        round_prices: list[list[tuple[int, int, float] | None]] = []
        recorded: dict[str, int] = {}
        for episode in episodes:
            if episode.id in recorded:
                raise ValueError(f"episodes: episode id {episode.id!r} appears twice")
            model = episode_model(episode)
            name, price = prices.price_of(model)
            per_round: list[tuple[int, int, float] | None] = []
            for rnd in episode.rounds:
                if price is None or rnd.input_tokens is None or rnd.output_tokens is None:
                    per_round.append(None)
                else:
                    cost = price.of(rnd.input_tokens, rnd.output_tokens)
                    per_round.append((rnd.input_tokens, rnd.output_tokens, cost))
            ids.append(episode.id)
            recorded[episode.id] = len(episode.calls)
            models.append(model or "")
            priced_as.append(name or "")
            round_prices.append(per_round)
        known = [[p for p in rounds if p is not None] for rounds in round_prices]
        return cls(
            ids=ids,
            recorded_calls=recorded,
            models=models,
            priced_as=priced_as,
            rounds=np.array([len(r) for r in round_prices], dtype=np.int64),
            priced_rounds=np.array([len(k) for k in known], dtype=np.int64),
            input_tokens=np.array([sum(p[0] for p in k) for k in known], dtype=np.int64),
            output_tokens=np.array([sum(p[1] for p in k) for k in known], dtype=np.int64),
            token_cost=np.array([sum(p[2] for p in k) for k in known], dtype=float),
            round_prices=round_prices,
            prices=prices,
        )

    def cost(self, result: ReplayResult) -> ReplayCost:
        """The cost of ``result``, a replay of this corpus (see the module docstring)."""
        prices = self.prices
        frame = result.episodes
        calls = result.calls
        where = {episode_id: k for k, episode_id in enumerate(self.ids)}
        replayed = frame["episode_id"].tolist()
        missing = [i for i in replayed if i not in where]
        if missing:
            raise ValueError(
                f"episodes: the replay has episode {missing[0]!r}, which the corpus given lacks"
            )
        k = np.fromiter((where[i] for i in replayed), dtype=np.intp, count=len(replayed))
        rounds = self.rounds[k].copy()
        priced = self.priced_rounds[k].copy()
        input_tokens = self.input_tokens[k].copy()
        output_tokens = self.output_tokens[k].copy()
        token_cost = self.token_cost[k].copy()
        added = np.zeros(len(k), dtype=np.int64)
        position = {episode_id: n for n, episode_id in enumerate(replayed)}
        for episode_id, again in added_rounds(calls, self.recorded_calls).items():
            n = position[episode_id]
            added[n] = len(again)
            rounds[n] += len(again)
            for rnd in again:
                price = self.round_prices[where[episode_id]][rnd - 1]
                if price is not None:  # a re-asked round is priced like the round it repeats
                    priced[n] += 1
                    input_tokens[n] += price[0]
                    output_tokens[n] += price[1]
                    token_cost[n] += price[2]
        zombie = calls["zombie_sec"].to_numpy(dtype=float)
        ids = calls["episode_id"].to_numpy()
        wedged = np.isinf(zombie)
        finite = pd.Series(np.where(wedged, 0.0, zombie)).groupby(ids).sum()
        never = pd.Series(wedged.astype(np.int64)).groupby(ids).sum()
        zombie_sec = finite.reindex(replayed, fill_value=0.0).to_numpy(dtype=float)
        wedged_count = never.reindex(replayed, fill_value=0).to_numpy(dtype=np.int64)
        wall = frame["wall_sec"].to_numpy(dtype=float)
        slot_cost = _times(wall, prices.slot_per_sec)
        zombie_cost = zombie_sec * prices.zombie_per_sec
        unpriced_zombies = np.zeros(len(k), dtype=np.int64)
        if prices.zombie_per_sec > 0:
            if prices.wedged_zombie_sec is None:
                unpriced_zombies = wedged_count
            else:
                zombie_cost = zombie_cost + (
                    wedged_count * prices.wedged_zombie_sec * prices.zombie_per_sec
                )
        hedge_sec = _hedge_seconds(result, replayed)
        hedge_cost = hedge_sec * prices.zombie_per_sec
        table = pd.DataFrame(
            {
                "episode_id": replayed,
                "model": [self.models[i] for i in k],
                "priced_as": [self.priced_as[i] for i in k],
                "rounds": rounds,
                "added_rounds": added,
                "priced_rounds": priced,
                "unpriced_rounds": rounds - priced,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "token_cost": token_cost,
                "wall_sec": wall,
                "slot_cost": slot_cost,
                "zombie_sec": zombie_sec,
                "wedged_zombies": wedged_count,
                "unpriced_zombies": unpriced_zombies,
                "zombie_cost": zombie_cost,
                "hedge_sec": hedge_sec,
                "hedge_cost": hedge_cost,
                "cost": token_cost + slot_cost + zombie_cost + hedge_cost,
            },
            columns=list(COST_COLUMNS),
        )
        assumptions = {
            **result.assumptions,
            "currency": prices.currency,
            "reasked_round": "priced like the round it repeats",
            "wedged_zombie_sec": prices.wedged_zombie_sec,
        }
        return ReplayCost(episodes=table, summary=cost_summary(table), assumptions=assumptions)


def replay_cost(result: ReplayResult, episodes: CorpusSource, prices: PriceTable) -> ReplayCost:
    """The cost of ``result``, a replay of ``episodes``, at ``prices`` (see the module doc).

    ``episodes`` is the corpus as recorded (before any reaction rewrote it), anything
    :func:`~reviewlab.engines._corpus.open_corpus` takes; every episode of the replay must be in
    it. To price many replays of one corpus, build a :class:`PricedCorpus` once and call its
    :meth:`~PricedCorpus.cost`.
    """
    recorded = open_corpus(episodes).episodes(reason="prices: the token counts of every round")
    return PricedCorpus.of(recorded, prices).cost(result)


def _hedge_seconds(result: ReplayResult, replayed: list[str]) -> np.ndarray:
    """Per episode, the seconds second attempts of hedged calls ran while it waited."""
    calls = result.calls
    if "hedged" not in calls.columns or not calls["hedged"].any():
        return np.zeros(len(replayed), dtype=float)
    rules = result.policy.hedges
    hedged = calls.loc[calls["hedged"].to_numpy(dtype=bool)]
    after = hedged["tool"].map(lambda tool: rules[tool].after_sec if tool in rules else np.nan)
    if after.isna().any():
        tool = hedged["tool"][after.isna()].iloc[0]
        raise ValueError(
            f"result: a call of {tool!r} is hedged, but the policy has no hedge for it"
        )
    overlap = np.maximum(hedged["wait_sec"].to_numpy(dtype=float) - after.to_numpy(float), 0.0)
    per_episode = pd.Series(overlap).groupby(hedged["episode_id"].to_numpy()).sum()
    return per_episode.reindex(replayed, fill_value=0.0).to_numpy(dtype=float)


def _times(seconds: np.ndarray, price: float) -> np.ndarray:
    """``seconds × price``, 0 for a free resource even when held forever (no ``inf × 0``)."""
    return np.zeros_like(seconds) if price == 0 else seconds * price


def cost_summary(frame: pd.DataFrame) -> dict[str, Any]:
    """The :data:`COST_KEYS` of a :func:`replay_cost` frame (sums; the mean cost per episode)."""
    n = len(frame)
    total = float(frame["cost"].sum()) if n else 0.0
    return {
        "cost_per_episode": total / n if n else 0.0,
        "cost_total": total,
        "token_cost": float(frame["token_cost"].sum()) if n else 0.0,
        "slot_cost": float(frame["slot_cost"].sum()) if n else 0.0,
        "zombie_cost": float(frame["zombie_cost"].sum()) if n else 0.0,
        "hedge_cost": float(frame["hedge_cost"].sum()) if n else 0.0,
        "priced_rounds": int(frame["priced_rounds"].sum()) if n else 0,
        "unpriced_rounds": int(frame["unpriced_rounds"].sum()) if n else 0,
        "added_rounds": int(frame["added_rounds"].sum()) if n else 0,
        "unpriced_zombies": int(frame["unpriced_zombies"].sum()) if n else 0,
    }
