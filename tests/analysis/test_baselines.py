"""Baselines beside a recommendation: the completed-only percentile rule, RFC 6298's adaptive
timer, the best preset, all compared on held-out episodes (reviewlab/analysis/_baselines.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviewlab.analysis._baselines import (
    CALL_KEY,
    COMPARED,
    PerCallTimeouts,
    compare_baselines,
    percentile_rule,
    rfc6298_bounds,
)
from reviewlab.core._policy import Policy
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.resources import corpus_path

START = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)


def test_the_percentile_rule_drops_censored_calls():
    """p99 x 1.5 of the completed calls 1..100 s is 1.5 x 99.01 s; five calls that never
    returned after 1,000 s change nothing (that is the rule's bias)."""
    calls = [Call(tool="q", duration_sec=float(s)) for s in range(1, 101)]
    calls += [Call(tool="q", duration_sec=1000.0, completed=False) for _ in range(5)]
    episode = Episode(
        id="e", source="synthetic", started_at=START, rounds=[Round(calls=calls), Round()]
    )
    assert percentile_rule([episode]) == {"q": pytest.approx(1.5 * 99.01)}


def test_the_adaptive_timer_follows_rfc_6298_by_hand():
    """RTOs worked by hand: 1 s first; SRTT = R, RTTVAR = R/2 after the first sample; a call
    that outlives its RTO doubles it and gives no sample (Karn); RTO never below 1 s."""
    bounds = rfc6298_bounds([0.5, 0.5, 3.0, 0.4, 0.4], [True] * 5)
    # 1 -> 0.5 + 4 x 0.25 = 1.5 -> 0.5 + 4 x 0.1875 = 1.25 -> timeout: 2.5
    # -> RTTVAR 0.165625, SRTT 0.4875: 0.4875 + 0.6625 = 1.15
    assert bounds.tolist() == pytest.approx([1.0, 1.5, 1.25, 2.5, 1.15])
    censored = rfc6298_bounds([5.0, 5.0, 5.0], [False, False, False], max_sec=3.0)
    assert censored.tolist() == [1.0, 2.0, 3.0]  # doubling, capped


def test_a_per_call_rule_is_replayed_call_by_call_in_every_engine():
    """Each call gets the bound keyed by its argument in the twin and the vectorized engine."""
    calls = [Call(tool="q", args={CALL_KEY: f"e#{i}"}, duration_sec=i + 1.0) for i in range(4)]
    episode = Episode(
        id="e", source="synthetic", started_at=START, rounds=[Round(calls=calls), Round()]
    )
    bounds = {"e#0": 0.5, "e#1": 5.0, "e#2": 2.5, "e#3": 9.0}
    policy = Policy(timeouts=PerCallTimeouts(bounds, 60.0, "per-call"))
    for engine in ("twin", "vectorized"):
        frame = replay([episode], policy, engine=engine).calls
        assert frame["bound_sec"].tolist() == [0.5, 5.0, 2.5, 9.0], engine
        assert frame["source_gap"].tolist()[:3] == [
            "native_tool_abandoned",
            "",
            "native_tool_abandoned",
        ]


@pytest.fixture(scope="module")
def comparison():
    """The bundled corpus, half held out."""
    return compare_baselines(corpus_path(), held_out=0.5, seed=1)


def test_every_baseline_is_replayed_on_the_held_out_half(comparison):
    """Four policies on 500 held-out episodes; the recommendation's figures equal a twin replay
    of its policy on those episodes."""
    table = comparison.table.set_index("policy")
    assert comparison.held_out_episodes == 500 and comparison.train_episodes == 500
    assert list(table.index)[:3] == [
        "recommended",
        "percentile rule (p99 x 1.5, completed only)",
        "adaptive timer (RFC 6298)",
    ]
    assert any(name.startswith("best preset: ") for name in table.index)
    from reviewlab.engines._corpus import open_corpus

    held = set(comparison.held_out_ids)
    episodes = [e for e in open_corpus(corpus_path()).episodes() if e.id in held]
    assert len(episodes) == 500
    twin = replay(episodes, comparison.recommendation.policy, engine="twin").summary
    for key in (*COMPARED, comparison.objective):
        assert table.loc["recommended", key] == pytest.approx(twin[key])


def test_the_verdicts_say_where_the_recommendation_does_not_dominate(comparison):
    """A baseline is 'dominated' exactly when the recommendation is no worse on the abandoned
    rate, the coverage lost to timeouts and the objective; otherwise the verdict names each
    figure where it is worse."""
    table = comparison.table
    ours = table.iloc[0]
    keys = (*COMPARED, comparison.objective)
    for _, row in table.iloc[1:].iterrows():
        worse = [k for k in keys if ours[k] > row[k] + 1e-12]
        if worse:
            assert row["verdict"].startswith("recommendation worse on " + ", ".join(worse))
        else:
            assert row["verdict"] == "dominated"
    assert comparison.dominated == all(table["verdict"].iloc[1:] == "dominated")


def test_a_held_out_share_outside_zero_and_one_is_refused():
    """held_out must leave both parts non-empty."""
    with pytest.raises(ValueError, match=r"^held_out: expected a share strictly between"):
        compare_baselines(corpus_path(), held_out=1.0)


def test_a_call_returning_exactly_at_its_rto_is_a_sample_not_a_timeout():
    """RFC 6298 backs off only when the timer expires first: a 1 s call under the 1 s initial
    RTO is a sample (SRTT 1, RTTVAR 0.5, RTO 1 + 4 x 0.5 = 3), not a doubling to 2."""
    assert rfc6298_bounds([1.0, 0.5], [True, True]).tolist() == [1.0, 3.0]


def test_the_variance_term_takes_the_absolute_error():
    """A call slower than SRTT raises RTTVAR by a quarter of |SRTT - R|: 0.5 then 1.0 s with a
    0.01 s floor give RTO 1.5, then RTTVAR 0.75 x 0.25 + 0.25 x 0.5 = 0.3125 and SRTT
    0.5625, RTO 0.5625 + 1.25 = 1.8125 (a signed error would give 0.8125)."""
    bounds = rfc6298_bounds([0.5, 1.0, 0.1], [True] * 3, min_sec=0.01)
    assert bounds.tolist() == pytest.approx([1.0, 1.5, 1.8125])


def test_the_clock_granularity_floors_the_variance_term():
    """RTO = SRTT + max(G, 4 RTTVAR): with G = 0.5 s and steady 0.2 s calls (4 RTTVAR 0.4,
    then 0.3) the RTO is 0.2 + 0.5 = 0.7 both times, not 0.6 and 0.5."""
    bounds = rfc6298_bounds([0.2, 0.2, 0.2], [True] * 3, min_sec=0.01, granularity_sec=0.5)
    assert bounds.tolist() == pytest.approx([1.0, 0.7, 0.7])
