"""What a reaction changes in an episode: its plan, the episode rewritten by it, the next plan.

Lifecycle of one episode in the rewrite fixed point (:func:`reviewlab.engines._reaction.react`):
:class:`Plan` (empty at first) → :func:`rewrite` (the episode as the model would have run it,
with each call's :class:`Origin`) → replayed → :func:`next_plan` from its abandonments → until
the plan stops changing. The fixed point, the rows and the combinations: docs/architecture.md,
"Reactions and the rewrite fixed point".

Invariants: a rewrite never changes a recorded call but by the plan (skipped, withheld, or
re-issued once after its round with no read lines of its own); an empty plan returns the
episode itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reviewlab.engines._censoring import completion_times, effective_observation
from reviewlab.engines._withholding import CallKey
from reviewlab.recording._schema import Call, Episode, Round


@dataclass(frozen=True)
class Plan:
    """What a reaction changes in one episode, by recorded call index (0-based, episode order)."""

    reissue_after: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """Recorded round index (0-based) → the recorded calls re-issued right after that round."""
    skipped: frozenset[int] = frozenset()
    """Recorded calls the model does not issue."""
    withheld: frozenset[CallKey] = frozenset()
    """Calls the breaker withholds: ``(recorded index, is a re-issued copy)``."""

    def __bool__(self) -> bool:
        return bool(self.reissue_after) or bool(self.skipped) or bool(self.withheld)


@dataclass(frozen=True)
class Origin:
    """Where a call of a rewritten episode comes from."""

    index: int
    """Its recorded call index."""
    reissue: bool
    """Whether it is a re-issued copy."""


def settle_censored(episodes: Sequence[Episode], censored: str, seed: int = 0) -> list[Episode]:
    """The corpus with every censored call's return settled by the censoring assumption.

    Under ``"wedge"`` the corpus is returned as it is. Otherwise each
    still-censored call becomes a completed call of the duration
    :func:`~reviewlab.engines._censoring.completion_times` gives it; a replay of
    the result under ``"wedge"`` equals the replay of ``episodes`` under
    ``censored`` (the engines apply the same times the same way).
    """
    return settled_with(episodes, completion_times(episodes, censored, seed))


def settled_with(
    episodes: Sequence[Episode], times: Mapping[tuple[str, int], float] | None
) -> list[Episode]:
    """:func:`settle_censored` with the completion times already drawn."""
    if not times:
        return list(episodes)
    out = []
    for episode in episodes:
        index = 0
        rounds = []
        changed = False
        for rnd in episode.rounds:
            calls = []
            for call in rnd.calls:
                duration, completed = effective_observation(call)
                if not completed and (episode.id, index) in times:
                    call = call.model_copy(
                        update={
                            "duration_sec": times[(episode.id, index)],
                            "completed": True,
                            "returned_after_sec": None,
                        }
                    )
                    changed = True
                calls.append(call)
                index += 1
            rounds.append(rnd.model_copy(update={"calls": calls}) if changed else rnd)
        out.append(episode.model_copy(update={"rounds": rounds}) if changed else episode)
    return out


def rewrite(episode: Episode, plan: Plan) -> tuple[Episode, list[Origin]]:
    """``episode`` as the model would have run it under ``plan``, and the origin of each call."""
    if not plan:
        return episode, [Origin(i, False) for i in range(len(episode.calls))]
    recorded = list(episode.calls)
    origins: list[Origin] = []
    rounds: list[Round] = []
    index = 0
    for number, rnd in enumerate(episode.rounds):
        kept = []
        for call in rnd.calls:
            if index not in plan.skipped and (index, False) not in plan.withheld:
                kept.append(call)
                origins.append(Origin(index, False))
            index += 1
        rounds.append(Round(send_sec=rnd.send_sec, calls=kept))
        again = plan.reissue_after.get(number, ())
        if again:
            sent = [i for i in again if (i, True) not in plan.withheld]
            copies = [reissued_copy(recorded[i]) for i in sent]
            rounds.append(Round(send_sec=rnd.send_sec, calls=copies))
            origins.extend(Origin(i, True) for i in sent)
    return episode.model_copy(update={"rounds": rounds}), origins


def issued_rounds(episode: Episode, plan: Plan) -> list[tuple[float, list[tuple[CallKey, str]]]]:
    """The rounds of ``rewrite(episode, plan)`` with the withheld calls put back (for the
    breaker's walk): per round its ``send_sec`` and its issued calls ``(key, tool)``."""
    recorded = list(episode.calls)
    out: list[tuple[float, list[tuple[CallKey, str]]]] = []
    index = 0
    for number, rnd in enumerate(episode.rounds):
        issued = []
        for call in rnd.calls:
            if index not in plan.skipped:
                issued.append(((index, False), call.tool))
            index += 1
        out.append((rnd.send_sec, issued))
        again = plan.reissue_after.get(number, ())
        if again:
            out.append((rnd.send_sec, [((i, True), recorded[i].tool) for i in again]))
    return out


def reissued_copy(call: Call) -> Call:
    # No read lines of its own: the original already counts them as asked for.
    return call.model_copy(update={"extent": None})


def next_plan(
    episode: Episode, origins: Sequence[Origin], abandoned: Sequence[bool], reaction: str
) -> Plan:
    """The plan that the abandonments of a replay of ``rewrite(episode, plan)`` call for.

    ``abandoned`` is per call of the rewritten episode (its call order).
    """
    fate = {
        origin.index: bool(gone)
        for origin, gone in zip(origins, abandoned, strict=True)
        if not origin.reissue
    }
    round_of = [number for number, rnd in enumerate(episode.rounds) for _ in rnd.calls]
    if reaction == "reissue":
        after: dict[int, list[int]] = {}
        for index, gone in sorted(fate.items()):
            if gone:
                after.setdefault(round_of[index], []).append(index)
        return Plan(reissue_after={r: tuple(v) for r, v in after.items()})
    if reaction == "skip_target":
        given_up: set[str] = set()
        skipped: set[int] = set()
        index = 0
        for rnd in episode.rounds:
            abandoned_here: set[str] = set()
            for call in rnd.calls:
                path = call.args.get("path")
                if call.tool == "read_file" and isinstance(path, str) and path in given_up:
                    skipped.add(index)
                elif fate.get(index) and isinstance(path, str):
                    abandoned_here.add(path)
                index += 1
            given_up |= abandoned_here  # only LATER rounds react to this round's abandonments
        return Plan(skipped=frozenset(skipped))
    return Plan()
