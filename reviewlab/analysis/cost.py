"""The price of waiting: what a replay costs in model tokens, slot seconds and zombie seconds.

A replay (:class:`~reviewlab.engines.result.ReplayResult`) says how long each
episode held its reviewer slot and how long its loose workers ran; the corpus
says how many tokens each recorded round consumed (``reviewlab.episode/2``
usage); a :class:`~reviewlab.core.prices.PriceTable` prices all three.
:func:`replay_cost` puts them together, one row per episode
(:data:`COST_COLUMNS`):

* **tokens**: every recorded round of the episode, plus every round the
  replay *added* — under the ``reissue`` reaction
  (:mod:`reviewlab.engines.reaction`) the model is asked once more after a
  round whose calls were abandoned, and that re-asked round is priced like the
  round it repeats (same tokens). An added round is recognised in the call
  frame by its calls: rows whose ``call_index`` is past the episode's recorded
  calls, one added round per distinct ``round`` among them. A round is priced
  at its episode's model (:meth:`PriceTable.price_of`: ``Episode.model``, else
  ``meta["model"]``, else the table's default model) when both its token counts
  are known; any other round is *unpriced* and counted in
  ``unpriced_rounds`` — never priced as 0 silently.
* **slot**: the episode's ``wall_sec`` × the slot price (an infinite wall —
  an unbounded replay waiting on a wedge — costs infinitely much when the
  slot price is above 0).
* **zombies**: the finite zombie seconds of its calls × the zombie price; a
  zombie that never returns (``zombie_sec = inf``) is priced for the table's
  ``wedged_sec`` when it has one, else counted in ``unpriced_zombies``.

``cost = token_cost + slot_cost + zombie_cost``. Every recorded round is
priced, also in a replay that ended an episode early at its own deadline (an
upper bound there). The cost is a function of the replay's frames, so engines
whose frames agree (the twin and the vectorized engine) give the same cost.
:func:`cost_summary` sums the frame into :data:`COST_KEYS` (``cost_per_episode``
is the objective ``cost`` of sweeps and :func:`~reviewlab.analysis.tune.recommend`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core.prices import PriceTable
from reviewlab.engines.result import ReplayResult
from reviewlab.recording.schema import Episode

__all__ = [
    "COST_COLUMNS",
    "COST_KEYS",
    "ReplayCost",
    "added_rounds",
    "cost_summary",
    "episode_model",
    "replay_cost",
]

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
    "cost",
)
"""One row per episode of :func:`replay_cost` (``model``/``priced_as`` are ``""`` when none)."""
COST_KEYS = (
    "cost_per_episode",
    "cost_total",
    "token_cost",
    "slot_cost",
    "zombie_cost",
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


def replay_cost(
    result: ReplayResult, episodes: Iterable[Episode], prices: PriceTable
) -> ReplayCost:
    """The cost of ``result``, a replay of ``episodes``, at ``prices`` (see the module doc).

    ``episodes`` is the corpus as recorded (before any reaction rewrote it); every episode of
    the replay must be in it.
    """
    corpus = {episode.id: episode for episode in episodes}
    frame = result.episodes
    calls = result.calls
    missing = [i for i in frame["episode_id"] if i not in corpus]
    if missing:
        raise ValueError(
            f"episodes: the replay has episode {missing[0]!r}, which the corpus given lacks"
        )
    added = added_rounds(calls, {i: len(e.calls) for i, e in corpus.items()})
    zombie = calls["zombie_sec"].to_numpy(dtype=float)
    ids = calls["episode_id"].to_numpy()
    wedged = np.isinf(zombie)
    finite = pd.Series(np.where(wedged, 0.0, zombie)).groupby(ids).sum()
    never = pd.Series(wedged.astype(np.int64)).groupby(ids).sum()
    rows = []
    for episode_id, wall in zip(frame["episode_id"], frame["wall_sec"], strict=True):
        episode = corpus[episode_id]
        rows.append(
            _episode_cost(
                episode,
                added.get(episode_id, []),
                float(wall),
                float(finite.get(episode_id, 0.0)),
                int(never.get(episode_id, 0)),
                prices,
            )
        )
    table = pd.DataFrame(rows, columns=list(COST_COLUMNS))
    assumptions = {
        **result.assumptions,
        "currency": prices.currency,
        "reasked_round": "priced like the round it repeats",
        "wedged_zombie_sec": prices.wedged_zombie_sec,
    }
    return ReplayCost(episodes=table, summary=cost_summary(table), assumptions=assumptions)


def _episode_cost(
    episode: Episode,
    added: Sequence[int],
    wall_sec: float,
    zombie_sec: float,
    wedged: int,
    prices: PriceTable,
) -> dict[str, Any]:
    model = episode_model(episode)
    priced_as, price = prices.price_of(model)
    rounds = list(episode.rounds) + [episode.rounds[r - 1] for r in added]
    priced = [r for r in rounds if price is not None and r.usage_known]
    input_tokens = sum(r.input_tokens or 0 for r in priced)
    output_tokens = sum(r.output_tokens or 0 for r in priced)
    token_cost = price.of(input_tokens, output_tokens) if price is not None else 0.0
    slot_cost = _times(wall_sec, prices.slot_per_sec)
    unpriced_zombies = 0
    zombie_cost = zombie_sec * prices.zombie_per_sec
    if wedged and prices.zombie_per_sec > 0:
        if prices.wedged_zombie_sec is None:
            unpriced_zombies = wedged
        else:
            zombie_cost += wedged * prices.wedged_zombie_sec * prices.zombie_per_sec
    return {
        "episode_id": episode.id,
        "model": model or "",
        "priced_as": priced_as or "",
        "rounds": len(rounds),
        "added_rounds": len(added),
        "priced_rounds": len(priced),
        "unpriced_rounds": len(rounds) - len(priced),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "token_cost": token_cost,
        "wall_sec": wall_sec,
        "slot_cost": slot_cost,
        "zombie_sec": zombie_sec,
        "wedged_zombies": wedged,
        "unpriced_zombies": unpriced_zombies,
        "zombie_cost": zombie_cost,
        "cost": token_cost + slot_cost + zombie_cost,
    }


def _times(seconds: float, price: float) -> float:
    """``seconds × price``, 0 for a free resource even when held forever (no ``inf × 0``)."""
    return 0.0 if price == 0 else seconds * price


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
        "priced_rounds": int(frame["priced_rounds"].sum()) if n else 0,
        "unpriced_rounds": int(frame["unpriced_rounds"].sum()) if n else 0,
        "added_rounds": int(frame["added_rounds"].sum()) if n else 0,
        "unpriced_zombies": int(frame["unpriced_zombies"].sum()) if n else 0,
    }
