"""Calls seen on a timeline, grouped into the rounds of the recorded format.

Some sources know each call's start and end but not the model sends between them (a trace
without model spans, the calls of a wrapped tool). Their rounds are inferred by one rule:
calls are taken in start order; a call that starts before every call of the current round has
ended joins it (the model asked for them together); one that starts after opens a new round,
whose ``send_sec`` is the gap since the previous round's last end.

Invariant: a round's calls run one after the other in the format, so when they overlapped
:func:`offsets_meta` keeps each call's start under ``meta["call_offsets_sec"]`` and the overlap
survives a round trip (:func:`read_offsets`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from reviewlab.recording._schema import Call, Round

OFFSETS_KEY = "call_offsets_sec"
"""The ``Episode.meta`` key holding each round's call start offsets (JSON)."""


@dataclass(frozen=True)
class TimedCall:
    """A recorded call and where it sat on the timeline (seconds on one clock)."""

    call: Call
    start_sec: float
    end_sec: float


def group_rounds(calls: Sequence[TimedCall], episode_start_sec: float) -> list[list[TimedCall]]:
    """The calls split into rounds by the overlap rule of the module docstring."""
    rounds: list[list[TimedCall]] = []
    horizon = episode_start_sec
    for timed in sorted(calls, key=lambda item: item.start_sec):
        if rounds and timed.start_sec < horizon:
            rounds[-1].append(timed)
        else:
            rounds.append([timed])
        horizon = max(horizon, timed.end_sec)
    return rounds


def inferred_rounds(
    calls: Sequence[TimedCall], episode_start_sec: float
) -> tuple[list[Round], list[list[float]]]:
    """Rounds (with the gap before each as ``send_sec``) and each call's offset in its round."""
    result: list[Round] = []
    offsets: list[list[float]] = []
    last_end = episode_start_sec
    for group in group_rounds(calls, episode_start_sec):
        send_end = group[0].start_sec
        result.append(Round(send_sec=max(0.0, send_end - last_end), calls=[t.call for t in group]))
        offsets.append([max(0.0, t.start_sec - send_end) for t in group])
        last_end = max(last_end, *(t.end_sec for t in group))
    return result, offsets


def offsets_meta(rounds: Sequence[Round], offsets: Sequence[Sequence[float]]) -> dict[str, str]:
    """``{OFFSETS_KEY: json}`` when some round's calls overlapped, else ``{}``.

    Calls that ran one after the other need no offsets: the recorded format
    already lays them end to end.
    """
    for rnd, starts in zip(rounds, offsets, strict=True):
        clock = 0.0
        for call, start in zip(rnd.calls, starts, strict=True):
            if start < clock - 1e-9:
                rounded = [[round(value, 9) for value in row] for row in offsets]
                return {OFFSETS_KEY: json.dumps(rounded, separators=(",", ":"))}
            clock = start + call.duration_sec
    return {}


def read_offsets(meta: dict[str, str], rounds: Sequence[Round]) -> list[list[float]] | None:
    """The offsets kept by :func:`offsets_meta`, or ``None`` when absent or not matching."""
    text = meta.get(OFFSETS_KEY)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, list) or len(value) != len(rounds):
        return None
    rows: list[list[float]] = []
    for row, rnd in zip(value, rounds, strict=True):
        if not isinstance(row, list) or len(row) != len(rnd.calls):
            return None
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in row):
            return None
        rows.append([float(v) for v in row])
    return rows
