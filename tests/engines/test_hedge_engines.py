"""Every engine replays hedged calls the same way: the twin and the vectorized engine give
identical frames (hypothesis over corpora and hedge rules, and the bundled corpus); the real
engine, with real threads, agrees with the twin up to timing noise on a corpus with wide margins.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.core._policy import Narrowing, Policy
from reviewlab.engines._censoring import completion_times, hedge_plan
from reviewlab.engines._replay import replay
from reviewlab.engines._result import ReplayResult
from reviewlab.engines.real import replay_real
from reviewlab.engines.vectorized import replay_vectorized
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.testing._strategies import corpora as shared_corpora

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def twin_result(
    corpus: list[Episode],
    policy: Policy,
    narrowing: Narrowing,
    censored: str,
    seed: int = 0,
) -> ReplayResult:
    """The twin's answer, through the public replay entry point."""
    policy = policy.replace(narrowing=narrowing)
    return replay(corpus, policy, engine="twin", censored=censored, seed=seed)


def assert_same_answers(twin: ReplayResult, fast: ReplayResult) -> None:
    """Every column of both frames and every summary figure are equal."""
    pd.testing.assert_frame_equal(twin.calls, fast.calls)
    pd.testing.assert_frame_equal(twin.episodes, fast.episodes)
    for key in SUMMARY_KEYS:
        a, b = twin.summary[key], fast.summary[key]
        assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), key


_duration = st.floats(0.01, 12.0)
_call = st.tuples(
    st.sampled_from(["read_file", "search_code", "list_files"]), _duration, st.booleans()
)


def corpora() -> st.SearchStrategy[list[Episode]]:
    """The shared strategy on the hedgeable inspection tools, one slot."""
    return shared_corpora(
        tools=("read_file", "search_code", "list_files"), max_rounds=3, max_calls=4, slots=("s1",)
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpora(),
    st.floats(0.05, 5.0),
    st.floats(0.05, 1.0),
    st.one_of(st.none(), st.floats(0.1, 15.0)),
    st.sampled_from(["wedge", "observed", "impute"]),
    st.sampled_from(["inherit", "unbounded"]),
    st.integers(0, 3),
)
def test_twin_and_vectorized_agree_exactly_on_hedged_replays(
    corpus: list[Episode],
    after: float,
    share: float,
    bound: float | None,
    censored: str,
    mode: str,
    seed: int,
) -> None:
    """For any corpus, delay, share, bound, censoring and narrowing: identical frames, every
    column (hedged and zombie_sec included), and identical summaries."""
    base = Policy.ouroboros() if bound is None else Policy.uniform(bound)
    policy = base.with_hedge("read_file", after_sec=after, max_share=share).with_hedge(
        "search_code", after_sec=after * 2, max_share=share
    )
    narrowing = Narrowing() if mode == "inherit" else Narrowing.unbounded()
    if censored == "impute" and not any(c.completed for e in corpus for c in e.calls):
        return  # nothing to estimate from: both engines refuse (tested elsewhere)
    twin = twin_result(corpus, policy, narrowing, censored, seed)
    fast = replay_vectorized(
        corpus, policy.replace(narrowing=narrowing), censored=censored, seed=seed
    )
    assert list(fast.calls.columns)[-2:] == ["hedged", "timeout_lost_lines"]
    assert_same_answers(twin, fast)


def test_twin_and_vectorized_agree_on_the_bundled_corpus_and_hedging_costs_extra_calls() -> None:
    """Ouroboros with read_file, search_code and query_code hedged at their p95: identical
    frames; the summary reports hedges and their share of calls."""
    from reviewlab.recording._files import load_episodes
    from reviewlab.resources import corpus_path

    corpus = load_episodes(corpus_path())
    policy = Policy.ouroboros()
    for tool in ("read_file", "search_code", "query_code"):
        durations = [c.duration_sec for e in corpus for c in e.calls if c.tool == tool]
        policy = policy.with_hedge(tool, after_sec=float(np.quantile(durations, 0.95)))
    for censored in ("wedge", "observed"):
        twin = twin_result(corpus, policy, Narrowing(), censored)
        fast = replay_vectorized(corpus, policy, Narrowing(), censored=censored, seed=0)
        assert_same_answers(twin, fast)
        assert fast.summary["hedges"] == int(fast.calls["hedged"].sum()) > 0
        assert 0 < fast.summary["extra_call_share"] <= 0.05


def test_a_compiled_corpus_refuses_a_hedging_policy_by_name() -> None:
    """Sweeps over a compiled corpus would silently ignore hedges: they are refused instead."""
    from reviewlab.engines.vectorized import compile_corpus

    corpus = [
        Episode(
            id="e",
            source="synthetic",
            slot="s1",
            started_at=T0,
            rounds=[Round(send_sec=1.0, calls=[Call(tool="read_file", duration_sec=1.0)])],
        )
    ]
    policy = Policy.uniform(5).with_hedge("read_file", after_sec=0.5)
    with pytest.raises(ValueError, match="hedges"):
        compile_corpus(corpus).summary(policy)
    with pytest.raises(ValueError, match="hedges"):
        replay_vectorized(compile_corpus(corpus), policy)


# -- the real engine -----------------------------------------------------------------------------


def _wide_margin_corpus() -> list[Episode]:
    """Reads of 0.2 s, 3 s and wedged ones: with a 1 s delay every answer time is at least 0.8
    recorded seconds from every bound and delay, so real timing noise cannot flip a fate."""
    episodes = []
    pattern = [(0.2, True), (3.0, True), (0.2, True), (9.0, False), (3.0, True), (0.2, True)]
    for i in range(6):
        calls = [
            Call(
                tool="read_file",
                args={"path": f"f{i}_{k}.py"},
                duration_sec=duration,
                completed=completed,
                extent=Extent(path=f"f{i}_{k}.py", start_line=1, end_line=10),
            )
            for k, (duration, completed) in enumerate(pattern[i:] + pattern[:i])
        ][:3]
        episodes.append(
            Episode(
                id=f"r{i}",
                source="synthetic",
                slot="s1",
                started_at=T0 + timedelta(seconds=i),
                rounds=[Round(send_sec=0.5, calls=calls), Round(send_sec=0.5)],
            )
        )
    return episodes


@pytest.mark.parametrize("bound", [6.0, 2.5])
def test_the_real_engine_hedges_on_real_threads_as_the_twin_does(bound: float) -> None:
    """Real attempts on real threads: the same hedged calls, outcomes and credits as the twin,
    waits and walls within timing noise, and the loose losers in the zombie column."""
    corpus = _wide_margin_corpus()
    policy = Policy.uniform(bound).with_hedge("read_file", after_sec=1.0, max_share=1.0)
    plan = hedge_plan(corpus, policy, completion_times(corpus, "wedge"), 0)
    assert plan is not None and plan.hedges >= 4
    twin = twin_result(corpus, policy, Narrowing(), "wedge")
    real = replay_real(corpus, policy, time_scale=0.2, seed=0, settle_sec=2.0)
    key = ["episode_id", "call_index"]
    t = twin.calls.sort_values(key).reset_index(drop=True)
    r = real.calls.sort_values(key).reset_index(drop=True)
    for column in ("hedged", "outcome", "source_gap", "credited_lines", "completed"):
        assert t[column].tolist() == r[column].tolist(), column
    # 0.3 recorded seconds are 60 ms of real scheduling noise at this scale; fates have 0.8.
    np.testing.assert_allclose(r["wait_sec"], t["wait_sec"], atol=0.3)
    finite = np.isfinite(t["zombie_sec"].to_numpy())
    assert (np.isfinite(r["zombie_sec"].to_numpy()) == finite).all()
    np.testing.assert_allclose(r["zombie_sec"][finite], t["zombie_sec"][finite], atol=0.5)
    np.testing.assert_allclose(real.episodes["wall_sec"], twin.episodes["wall_sec"], atol=0.8)
    assert real.summary["hedges"] == twin.summary["hedges"] > 0


@pytest.mark.parametrize("reaction", ["as_recorded", "reissue", "skip_target"])
@pytest.mark.parametrize("breaker", [False, True])
def test_twin_and_vectorized_agree_on_hedges_under_every_reaction_and_a_breaker(
    reaction: str, breaker: bool
) -> None:
    """Hedging composes with the reaction models and the breaker (censored="wedge"): identical
    frames."""
    rng = np.random.default_rng(11)
    corpus = [
        Episode(
            id=f"e{i}",
            source="synthetic",
            slot="s1",
            started_at=T0 + timedelta(seconds=2 * i),
            rounds=[
                Round(
                    send_sec=0.5,
                    calls=[
                        Call(
                            tool="read_file",
                            args={"path": f"f{i % 3}.py"},
                            duration_sec=float(rng.lognormal(-0.5, 1.2)),
                            completed=bool(rng.random() > 0.1),
                            extent=Extent(path=f"f{i % 3}.py", start_line=1, end_line=9),
                        )
                        for _ in range(3)
                    ],
                ),
                Round(
                    send_sec=0.5,
                    calls=[
                        Call(
                            tool="read_file",
                            args={"path": f"f{i % 3}.py"},
                            duration_sec=0.3,
                            extent=Extent(path=f"f{i % 3}.py", start_line=1, end_line=9),
                        )
                    ],
                ),
                Round(send_sec=0.25),
            ],
        )
        for i in range(30)
    ]
    policy = Policy.uniform(1.0).with_hedge("read_file", after_sec=0.4, max_share=0.3)
    if breaker:
        policy = policy.with_breaker(2, cooldown_rounds=1)
    twin = replay(corpus, policy, engine="twin", reaction=reaction, seed=2)
    fast = replay(corpus, policy, engine="vectorized", reaction=reaction, seed=2)
    assert_same_answers(twin, fast)
    assert twin.summary["hedges"] > 0
