"""Differential test: the twin says what the real episode and executor do.

200 seeded random episodes (four tools, tool errors, wedges, inherited
deadlines, several rounds) are replayed under every narrowing mode by
``engine="real"`` (real ``ReviewEpisode`` + ``BoundedExecutor`` on threads, every
recorded time × ``TIME_SCALE``) and by ``engine="twin"`` (virtual time). They
must agree on every call's outcome, source gap and credited lines.

Tolerance. On a real clock a call whose duration lies within a hair of its
bound can land on either side (thread wake-ups, scheduling on a loaded box, and
the milliseconds an episode's own overheads eat from its inherited deadline,
which add up over its calls). A call is *ambiguous* when it completed and
``|duration - bound| <= TOLERANCE_SEC`` (0.3 recorded seconds, 15 ms real).
An ambiguous call is excluded, and so is every later call of its episode,
because its fate decides later credit (the crediting rule is sticky) and later
deadline bounds. The test reports how many calls were excluded and requires it
to be small.

Margins. Sends and durations lie on a 1-s grid and deadlines on half-grid
points, so under ``inherit``, ``none`` and ``reserve`` a completed call's
duration is never closer than 0.5 recorded seconds (25 ms real) to its bound:
that is the room the real engine has for accumulated overhead. Under
``fraction=0.5`` a deadline bound lies a quarter off the grid: calls 0.25 s from
it are excluded by the tolerance, the others are 0.75 s away (and the fraction
halves the overhead's effect).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest

from reviewlab.core.policy import Narrowing, TimeoutPolicy
from reviewlab.engines.replay import replay
from reviewlab.recording.schema import Call, Episode, Extent, Round

TIME_SCALE = 0.05
TOLERANCE_SEC = 0.3
EPISODES = 200
POLICY = TimeoutPolicy(
    default_sec=6.0, tools_sec={"query_code": 4.0, "read_file": 5.0}, name="differential"
)
NARROWINGS = [
    Narrowing(),
    Narrowing("none"),
    Narrowing("reserve", reserve_sec=2.0),
    Narrowing("fraction", fraction=0.5),
    Narrowing.unbounded(),
]
TOOLS = ("read_file", "list_files", "search_code", "query_code")
T0 = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)


def random_episodes(n: int, seed: int) -> list[Episode]:
    """Seeded episodes on a 1-s grid: fast calls (1-2 s) below every tool
    timeout (4-6 s), slow ones (8-14 s)
    above, wedges, tool errors, and inherited deadlines at half-grid points."""
    rng = np.random.default_rng(seed)
    episodes = []
    for e in range(n):
        rounds = []
        for _ in range(int(rng.integers(1, 4))):
            calls = []
            for _ in range(int(rng.integers(1, 4))):
                tool = TOOLS[int(rng.integers(0, len(TOOLS)))]
                kind = rng.random()
                if kind < 0.66:
                    duration, completed = float(rng.integers(1, 3)), True
                elif kind < 0.90:
                    duration, completed = float(rng.integers(8, 15)), True
                else:
                    duration, completed = float(rng.integers(8, 15)), False
                status = "error" if completed and rng.random() < 0.08 else "ok"
                extent = None
                if tool == "read_file":
                    start = int(rng.integers(1, 200))
                    extent = Extent(
                        path=f"f{e}.py", start_line=start, end_line=start + int(rng.integers(0, 90))
                    )
                calls.append(
                    Call(
                        tool=tool,
                        args={"path": f"f{e}.py"},
                        duration_sec=duration,
                        completed=completed,
                        status=status,
                        extent=extent,
                    )
                )  # type: ignore[arg-type]
            rounds.append(Round(send_sec=float(rng.integers(1, 3)), calls=calls))
        rounds.append(Round(send_sec=1.0))
        deadline = float(rng.integers(3, 25)) + 0.5 if rng.random() < 0.5 else None
        episodes.append(
            Episode(
                id=f"d{e:03d}",
                source="synthetic",
                slot=f"slot-{e % 4}",
                started_at=T0 + timedelta(seconds=float(rng.uniform(0, 30))),
                deadline_sec=deadline,
                rounds=rounds,
            )
        )
    return episodes


def compare(real: pd.DataFrame, twin: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Rows where the engines disagree (outside the tolerance) and how many calls were excluded."""
    merged = twin.merge(
        real, on=["episode_id", "call_index"], suffixes=("", "_real"), validate="one_to_one"
    )
    assert len(merged) == len(twin) == len(real)
    merged = merged.sort_values(["episode_id", "call_index"], kind="stable")
    ambiguous = (
        merged["completed"]
        & merged["bound_sec"].notna()
        & ((merged["duration_sec"] - merged["bound_sec"]).abs() <= TOLERANCE_SEC)
    )
    # Excluded: an ambiguous call and every later call of the same episode.
    excluded = ambiguous.astype(int).groupby(merged["episode_id"]).cumsum() > 0
    kept = merged[~excluded]
    differs = (
        (kept["outcome"] != kept["outcome_real"])
        | (kept["source_gap"] != kept["source_gap_real"])
        | (kept["credited_lines"] != kept["credited_lines_real"])
    )
    return kept[differs], int(excluded.sum())


@pytest.mark.parametrize("narrowing", NARROWINGS, ids=lambda n: n.label)
def test_real_and_twin_agree_on_every_call(narrowing):
    """Outcome, source gap and credited lines agree on every call, except the few
    within the tolerance of their bound."""
    corpus = random_episodes(EPISODES, seed=2026)
    twin = replay(corpus, POLICY, narrowing, engine="twin")
    real = replay(
        corpus,
        POLICY,
        narrowing,
        engine="real",
        time_scale=TIME_SCALE,
        concurrency=48,
        settle_sec=0.5,
    )
    disagreements, excluded = compare(real.calls, twin.calls)
    total = len(twin.calls)
    # A loaded machine can starve a thread for longer than the 25 ms margin. A disagreement counts
    # only if it reproduces when its episodes run again, alone, with five times the real margin.
    suspects = sorted(set(disagreements["episode_id"]))
    if suspects:
        again = [episode for episode in corpus if episode.id in suspects]
        rerun = replay(
            again,
            POLICY,
            narrowing,
            engine="real",
            time_scale=5 * TIME_SCALE,
            concurrency=4,
            settle_sec=0.5,
        )
        disagreements, _ = compare(rerun.calls, twin.calls[twin.calls["episode_id"].isin(suspects)])
    print(
        f"[{narrowing.label}] {total} calls, {excluded} excluded within {TOLERANCE_SEC}s of their "
        "bound, "
        f"{len(suspects)} episode(s) re-run at 5x margin, {len(disagreements)} disagreements; "
        f"twin abandoned {twin.summary['abandoned_call_rate']:.3f}"
    )
    # Re-runs are the exception, not the rule (a few percent here under
    # load; none on a quiet machine).
    assert len(suspects) <= 0.15 * EPISODES
    assert disagreements.empty, disagreements[
        [
            "episode_id",
            "call_index",
            "tool",
            "duration_sec",
            "bound_sec",
            "outcome",
            "outcome_real",
            "source_gap",
            "source_gap_real",
        ]
    ]
    assert excluded <= 0.05 * total
    # The corpus really exercises abandonment, deadlines and (pre-fix) wedges in every mode.
    if narrowing.mode == "unbounded":
        assert (twin.calls["outcome"] == "withheld").any()
    else:
        assert twin.summary["abandoned_call_rate"] > 0.1
    if narrowing.mode in ("inherit", "reserve", "fraction"):
        assert twin.summary["deadline_bound_share"] > 0.05
