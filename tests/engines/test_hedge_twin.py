"""The twin replays hedged calls: checked against a hand computation from the shared plan, and
on the bundled corpus."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from reviewlab.core import _metrics as metrics
from reviewlab.core._policy import Narrowing, Policy
from reviewlab.engines._censoring import completion_times, hedge_plan
from reviewlab.engines.twin._engine import run_simulation
from reviewlab.engines.twin._model import hedge_columns
from reviewlab.engines.twin._pool import PoolShape
from reviewlab.recording._schema import Call, Episode, Round

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _corpus(n: int = 40) -> list[Episode]:
    rng = np.random.default_rng(7)
    episodes = []
    for i in range(n):
        calls = [
            Call(
                tool=str(rng.choice(["read_file", "search_code"])),
                args={"path": f"f{i}.py"},
                duration_sec=float(rng.lognormal(-1.0, 1.5)),
                completed=bool(rng.random() > 0.05),
            )
            for _ in range(int(rng.integers(1, 6)))
        ]
        episodes.append(
            Episode(
                id=f"e{i}",
                source="synthetic",
                slot="s1",
                started_at=T0 + timedelta(seconds=3 * i),
                rounds=[Round(send_sec=0.5, calls=calls), Round(send_sec=0.25)],
            )
        )
    return episodes


@pytest.mark.parametrize("censored", ["wedge", "observed", "impute"])
@pytest.mark.parametrize("bound", [0.3, 2.0, 30.0])
def test_the_twin_waits_what_the_plan_says_computed_by_hand(censored: str, bound: float) -> None:
    """Per call: w = min(d1, after + d2) when hedged, abandoned past the bound; wall = sends +
    waits; hedged and zombie columns as the rule says (computed here without hedge_fate)."""
    corpus = _corpus()
    policy = Policy.uniform(bound).with_hedge("read_file", after_sec=0.4, max_share=0.3)
    completion = completion_times(corpus, censored, 5)
    plan = hedge_plan(corpus, policy, completion, 5)
    assert plan is not None and plan.hedges > 3
    sim, arrival = run_simulation(corpus, policy, censored=censored, seed=5)
    row = 0
    for position, episode in enumerate(corpus):
        wall = 0.75
        for _ in episode.calls:
            d1 = plan.first_sec[row]
            fires = bool(plan.planned[row]) and bound > 0.4
            answer = min(d1, 0.4 + plan.second_sec[row]) if fires else d1
            wait = bound if answer > bound else answer
            if answer > bound:
                zombie = (d1 - bound) + ((0.4 + plan.second_sec[row] - bound) if fires else 0.0)
            elif fires:
                zombie = max(d1, 0.4 + plan.second_sec[row]) - answer
            else:
                zombie = 0.0
            assert sim.calls.hedged[row] == fires
            assert sim.calls.wait_sec[row] == pytest.approx(wait)
            assert sim.calls.zombie_sec[row] == pytest.approx(zombie)
            wall += wait
            row += 1
        assert sim.end_sec[position] - arrival[position] == pytest.approx(wall)
    assert hedge_columns(sim)["hedged"].sum() == sum(sim.calls.hedged)


def test_the_twin_draws_second_attempts_with_the_replay_seed() -> None:
    """The plan's second attempts depend on the replay's seed, as in every other engine."""
    corpus = _corpus()
    policy = Policy.uniform(2.0).with_hedge("read_file", after_sec=0.4, max_share=0.3)
    plan = hedge_plan(corpus, policy, None, 5)
    assert plan is not None
    sim, _ = run_simulation(corpus, policy, seed=5)
    assert sim.hedge_rows == {
        row: (0.4, float(plan.second_sec[row])) for row in np.flatnonzero(plan.planned).tolist()
    }


def test_a_policy_without_hedges_adds_no_column_and_hedges_nothing() -> None:
    """No rule, no plan, no hedged rows, no column."""
    sim, _ = run_simulation(_corpus(), Policy.uniform(2.0))
    assert not sim.hedging and sim.hedge_rows == {} and not any(sim.calls.hedged)
    assert hedge_columns(sim) == {}


def test_a_worker_pool_refuses_hedges_by_name() -> None:
    """Two attempts would need two pool threads: the twin says it does not simulate that."""
    policy = Policy.uniform(2.0).with_hedge("read_file", after_sec=0.4, max_share=0.3)
    with pytest.raises(ValueError, match="hedges"):
        run_simulation(_corpus(), policy, pool=PoolShape(workers=4))


def test_the_unbounded_replay_is_rescued_from_a_wedge_by_a_hedge() -> None:
    """Pre-fix narrowing: a wedged read that hedges returns with its second attempt."""
    wedged = Episode(
        id="w",
        source="synthetic",
        slot="s1",
        started_at=T0,
        rounds=[
            Round(
                send_sec=1.0,
                calls=[
                    Call(tool="read_file", args={"path": "a"}, duration_sec=0.2),
                    Call(tool="read_file", args={"path": "b"}, duration_sec=9.0, completed=False),
                ],
            ),
            Round(send_sec=1.0),
        ],
    )
    policy = Policy.uniform(60).with_hedge("read_file", after_sec=1.0, max_share=0.5)
    sim, arrival = run_simulation(
        [wedged], policy.replace(narrowing=Narrowing.unbounded()), censored="wedge"
    )
    # KM of read_file: 0.2 returned, 9.0 censored: S = 1/2 after 0.2, so d2 is 0.2 or never.
    second = sim.hedge_rows[1][1]
    assert sim.calls.hedged == [False, True]
    if math.isinf(second):
        assert sim.end_sec[0] == math.inf
    else:
        assert sim.end_sec[0] - arrival[0] == pytest.approx(1.0 + 0.2 + 1.0 + second + 1.0)
        assert sim.calls.zombie_sec[1] == math.inf  # the wedged first attempt stays loose


def test_hedging_the_tail_tool_at_its_p95_lowers_p99_wall_on_the_bundled_corpus() -> None:
    """On the bundled corpus the p99 episodes wait on search_code and query_code, not read_file:
    hedging those at their p95 lowers p99 wall; hedging read_file cannot (none of its calls in
    those episodes is slower than its p95), and both report the extra calls."""
    from reviewlab.recording._files import load_episodes
    from reviewlab.resources import corpus_path

    corpus = load_episodes(corpus_path())
    base = Policy.ouroboros()

    def p95(tool: str) -> float:
        durations = [c.duration_sec for e in corpus for c in e.calls if c.tool == tool]
        return float(np.quantile(durations, 0.95))

    def summary(policy: Policy) -> dict:
        sim, arrival = run_simulation(corpus, policy, censored="observed")
        wall = np.array(sim.end_sec) - arrival
        hedged = np.array(sim.calls.hedged)
        p99 = metrics.quantiles(wall, (0.99,))[0]
        return {"p99": p99, "hedges": int(hedged.sum()), "share": hedged.mean()}

    plain = summary(base)
    tail = base
    for tool in ("search_code", "query_code"):
        tail = tail.with_hedge(tool, after_sec=p95(tool), max_share=0.05)
    hedged_tail = summary(tail)
    hedged_reads = summary(base.with_hedge("read_file", after_sec=p95("read_file")))
    assert hedged_tail["p99"] < plain["p99"]
    assert 0 < hedged_tail["share"] <= 0.05
    assert hedged_reads["hedges"] > 0 and hedged_reads["p99"] <= plain["p99"]
