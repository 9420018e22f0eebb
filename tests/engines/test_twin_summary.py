"""The twin's summary is computed from its decided columns without building a frame, and is
the summary of the frames it builds on demand, to the bit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reviewlab.core import _metrics as metrics
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.engines._result import FramesOnDemand
from reviewlab.engines.twin import simulate
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Extent, Round
from reviewlab.recording.synth import synth_corpus

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

POLICIES = [
    Policy.ouroboros(),
    Policy(timeouts=TimeoutPolicy.ouroboros().scaled(0.05)),
    Policy.uniform(1.0),
    Policy(timeouts=TimeoutPolicy.ouroboros(), idle_sec={"read_file": 0.5, "run_command": 3.0}),
    Policy.ouroboros()
    .with_idempotent("read_file", "search_code")
    .with_hedge("read_file", after_sec=0.3, max_share=0.5)
    .with_hedge("search_code", after_sec=1.0)
    .replace(name="hedged"),
]
NARROWINGS = [
    Narrowing(),
    Narrowing("none"),
    Narrowing.unbounded(),
    Narrowing("reserve", reserve_sec=30.0),
    Narrowing("fraction", fraction=0.5),
]


def _hand_corpus() -> list[Episode]:
    """Deadlines, a wedge, a loose worker seen returning, progress times and a cancel stop."""
    read = Call(
        tool="read_file",
        args={"path": "a.py"},
        duration_sec=4.0,
        extent=Extent(path="a.py", start_line=1, end_line=40),
        progress_sec=[0.2, 0.4, 3.0],
    )
    slow = Call(tool="run_command", args={"timeout_sec": 5}, duration_sec=90.0)
    wedge = Call(tool="search_code", args={}, duration_sec=700.0, completed=False)
    back = Call(
        tool="web_search", args={}, duration_sec=50.0, completed=False, returned_after_sec=80.0
    )
    stops = Call(tool="query_code", args={}, duration_sec=400.0, cancel_honoured_sec=2.0)
    failed = Call(tool="read_file", args={"path": "b.py"}, duration_sec=0.5, status="error")
    rounds = [
        [Round(send_sec=1.0, calls=[read, slow]), Round(send_sec=2.0, calls=[failed])],
        [Round(send_sec=0.5, calls=[back, read]), Round(send_sec=1.0, calls=[wedge, read])],
        [Round(send_sec=3.0, calls=[stops, read, slow]), Round(send_sec=1.0)],
        [Round(send_sec=1.0)],
    ]
    deadlines = [None, 60.0, 130.0, 10.0]
    return [
        Episode(
            schema=SCHEMA_VERSION_2,
            id=f"e{i}",
            source="synthetic",
            slot=f"s{i % 2}",
            started_at=T0 + timedelta(seconds=7.5 * i),
            deadline_sec=deadline,
            rounds=episode_rounds,
        )
        for i, (episode_rounds, deadline) in enumerate(zip(rounds, deadlines, strict=True))
    ]


CORPORA = {"hand": _hand_corpus(), "synthetic": synth_corpus(300, seed=5)}


@pytest.mark.parametrize("censored", ["wedge", "observed", "impute"])
@pytest.mark.parametrize("narrowing", NARROWINGS, ids=lambda n: n.mode)
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.label)
@pytest.mark.parametrize("corpus", list(CORPORA), ids=str)
def test_summary_without_frames_is_the_summary_of_the_frames(corpus, policy, narrowing, censored):
    """``summarize`` of the frames built on demand equals the summary computed before them."""
    result = simulate(
        CORPORA[corpus], policy.replace(narrowing=narrowing), censored=censored, seed=1
    )
    assert isinstance(result, FramesOnDemand) and not result.frames_built
    before = dict(result.summary)
    from_frames = metrics.summarize(
        result.calls, result.episodes, peak_loose_workers=before["peak_loose_workers"]
    )
    assert result.frames_built
    assert list(before) == list(from_frames)
    assert before == from_frames
    assert result.summary == before  # reading the frames does not change it


def test_a_pool_run_still_builds_its_frames_at_once():
    """Reviewer-pool runs keep their queue figures: the result is built whole, as before."""
    result = simulate(CORPORA["synthetic"], slots=2)
    assert not isinstance(result, FramesOnDemand)
    assert "queue_wait_mean_sec" in result.summary


def test_the_assumptions_are_those_of_a_built_result():
    """Engine, reaction, censoring and seed, in the order a built result lists them."""
    lazy = simulate(CORPORA["hand"], censored="impute", seed=3)
    pooled = simulate(CORPORA["hand"], censored="impute", seed=3, slots=1)
    assert list(lazy.assumptions.items()) == list(pooled.assumptions.items())
    assert lazy.assumptions == {
        "engine": "twin",
        "reaction": "as_recorded",
        "censored": "impute",
        "seed": 3,
    }


def test_a_reaction_replay_reads_the_frames_it_needs():
    """``skip_target`` rebuilds the corpus from the frames; the lazy twin result serves it."""
    corpus = CORPORA["synthetic"]
    policy = TimeoutPolicy.ouroboros().scaled(0.05)
    twin = replay(corpus, policy, engine="twin", reaction="skip_target")
    fast = replay(corpus, policy, engine="vectorized", reaction="skip_target")
    assert twin.summary == fast.summary
