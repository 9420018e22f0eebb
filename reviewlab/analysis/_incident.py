"""Post-incident analysis: the longest silences of a recorded corpus, and what a policy makes of
them.

A *silence* is the time a reviewer slot spends between two model sends: the calls of one
round, run in order (docs/metrics.md, "Silence"). :func:`longest_silences` answers the on-call
questions about the longest ones: where (slot, episode, round), what (the tool and arguments
of the call that took most of the round), when it began (read off the recording), how long it
really was (a lower bound when a call was still running), and what each candidate policy would
have bounded it to, under one stated censoring assumption.

Lifecycle: the recorded silences come from the episodes alone; only the top ``top`` episodes
are replayed, once per candidate; a pool-free replay treats every episode on its own, so the
subset answers exactly what the whole corpus would.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

import pandas as pd

from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import PRE_FIX_LABEL, Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core._vocab import CENSORING_MODES, DEFAULT_CENSORING, CensoringMode, EngineName
from reviewlab.engines._corpus import CorpusSource, open_corpus
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Episode

PRE_FIX = PRE_FIX_LABEL
"""The name the candidate tables give the pre-fix behaviour (the same name in every chart)."""

SILENCE_COLUMNS = (
    "rank",
    "slot",
    "episode_id",
    "round",
    "tool",
    "args",
    "round_calls",
    "began_at",
    "silence_sec",
    "completed",
)
"""The columns of :func:`recorded_silences`; :func:`longest_silences`
adds ``bounded_sec.<policy>``."""

Candidate = Policy | SupportsTimeoutFor | tuple[SupportsTimeoutFor, Narrowing]


def default_candidates() -> dict[str, Policy]:
    """The pre-fix behaviour and the ``ouroboros`` policy, under their labels."""
    return {policy.label: policy for policy in (Policy.unbounded(), Policy.ouroboros())}


def recorded_silences(episodes: Iterable[Episode]) -> pd.DataFrame:
    """Every round with calls of every episode, as it was recorded, longest silence first.

    Columns :data:`SILENCE_COLUMNS`; ``rank`` starts at 1, ties are ordered by
    ``began_at`` then corpus order. ``args`` is the JSON of the arguments of the
    round's longest call (its ``tool``), keys sorted.
    """
    rows: list[dict[str, Any]] = []
    for episode in episodes:
        clock = 0.0
        for number, rnd in enumerate(episode.rounds, start=1):
            clock += rnd.send_sec
            if not rnd.calls:
                continue
            longest = max(rnd.calls, key=lambda call: call.duration_sec)
            silence = 0.0
            for call in rnd.calls:
                silence += call.duration_sec
            rows.append(
                {
                    "slot": episode.slot,
                    "episode_id": episode.id,
                    "round": number,
                    "tool": longest.tool,
                    "args": json.dumps(longest.args, sort_keys=True),
                    "round_calls": len(rnd.calls),
                    "began_at": pd.Timestamp(episode.started_at + timedelta(seconds=clock)),
                    "silence_sec": silence,
                    "completed": all(call.completed for call in rnd.calls),
                }
            )
            clock += silence
    frame = pd.DataFrame(rows, columns=[c for c in SILENCE_COLUMNS if c != "rank"])
    if len(frame):
        frame["began_at"] = pd.to_datetime(frame["began_at"], utc=True)
    frame = frame.sort_values(["silence_sec", "began_at"], ascending=[False, True], kind="stable")
    frame.insert(0, "rank", range(1, len(frame) + 1))
    return frame.reset_index(drop=True)


def _candidate_parts(name: str, value: Candidate) -> tuple[Any, Narrowing | None]:
    """One candidate as the ``(rule, narrowing)`` that :meth:`Policy.of` converts, checked."""
    if isinstance(value, tuple):
        if len(value) != 2 or not isinstance(value[1], Narrowing):
            raise TypeError(f"policies[{name!r}]: expected a policy or (policy, Narrowing)")
        return value[0], value[1]
    if not isinstance(value, Policy) and not hasattr(value, "timeout_for"):
        raise TypeError(
            f"policies[{name!r}]: expected a Policy (or a timeout rule), got {type(value).__name__}"
        )
    return value, None


def longest_silences(
    corpus: CorpusSource,
    policies: Mapping[str, Candidate] | None = None,
    *,
    top: int = 5,
    censored: CensoringMode = DEFAULT_CENSORING,
    engine: EngineName = "vectorized",
    seed: int = 0,
) -> pd.DataFrame:
    """The ``top`` longest recorded silences and what each candidate policy bounds them to.

    ``corpus``: anything :func:`~reviewlab.engines._corpus.open_corpus` takes. ``policies``:
    name → policy or ``(policy, narrowing)`` (default :func:`default_candidates`). Returns
    :func:`recorded_silences`'s first ``top`` rows plus one ``bounded_sec.<name>`` column per
    candidate: that round's silence replayed under the candidate (``math.inf`` when the replay
    waits forever, e.g. the pre-fix policy on a call that never returns under
    ``censored="wedge"``). ``frame.attrs`` holds ``assumptions`` (censoring, engine, seed) and
    ``episodes`` (how many were searched).
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ParameterError("top", f"expected a positive number of silences, got {top!r}")
    if censored not in CENSORING_MODES:
        raise ParameterError(
            "censored", f"expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    # The recorded silences are read off each round's calls and arguments: the episodes.
    episodes = open_corpus(corpus).episodes(reason="recorded silences: each round's calls")
    if not episodes:
        raise ValueError("longest_silences: no episodes to search")
    candidates = {
        name: Policy.of(*_candidate_parts(name, value))
        for name, value in (default_candidates() if policies is None else policies).items()
    }
    frame = recorded_silences(episodes).head(top).reset_index(drop=True)
    chosen = set(frame["episode_id"])
    subset = [episode for episode in episodes if episode.id in chosen]
    assumptions: dict[str, Any] = {"censored": censored, "engine": engine, "seed": seed}
    keys = list(zip(frame["episode_id"], frame["round"], strict=True))
    for name, policy in candidates.items():
        result = replay(subset, policy, engine=engine, censored=censored, seed=seed)
        for key, value in result.assumptions.items():
            assumptions.setdefault(key, value)
        waits = result.calls.groupby(["episode_id", "round"], sort=False)["wait_sec"].sum()
        frame[f"bounded_sec.{name}"] = [float(waits.get(key, math.nan)) for key in keys]
    frame.attrs["assumptions"] = assumptions
    frame.attrs["episodes"] = len(episodes)
    return frame


def duration_words(seconds: float) -> str:
    """``26160`` → ``"26,160 s (7 h 16 min)"``; ``inf`` → ``"∞ (never returns)"``."""
    if math.isnan(seconds):
        return "-"
    if math.isinf(seconds):
        return "∞ (never returns)"
    plain = f"{seconds:,.0f} s" if seconds >= 100 else f"{seconds:.3g} s"
    if seconds < 120:
        return plain
    hours, minutes = divmod(int(round(seconds / 60)), 60)
    return f"{plain} ({hours} h {minutes} min)" if hours else f"{plain} ({minutes} min)"


def describe_silence(row: Mapping[str, Any]) -> str:
    """One sentence for one row of :func:`longest_silences`: where, what,
    when, how long, and the bounds."""
    began = pd.Timestamp(row["began_at"]).tz_convert("UTC")
    still = "" if row["completed"] else ", still running when the log ended"
    text = (
        f"{row['slot'] or '(unknown slot)'} was silent {duration_words(float(row['silence_sec']))}"
        f"{still}, from {began.strftime('%Y-%m-%d %H:%M:%S')} UTC: episode {row['episode_id']}, "
        f"round {row['round']}, {row['tool']} {row['args']}"
    )
    bounds = [
        f"{key.removeprefix('bounded_sec.')} {duration_words(float(value))}"
        for key, value in row.items()
        if str(key).startswith("bounded_sec.")
    ]
    return text + (f"; replayed: {'; '.join(bounds)}" if bounds else "")
