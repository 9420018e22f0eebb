"""The cost of a replay: tokens per round at its model's prices, slot seconds, zombie seconds,
the rounds a re-issue adds, and what stays unpriced — checked against sums done by hand, and
identical in the twin and the vectorized engine."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest
from conftest import FIXTURES

from reviewlab.analysis._cost import COST_COLUMNS, COST_KEYS, added_rounds, replay_cost
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.core._prices import ModelPrice, PriceTable
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.recording.interop import import_openhands

T0 = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)
V2 = "reviewlab.episode/2"
PRICES = PriceTable(
    models={"m": ModelPrice(input_per_mtok=2.0, output_per_mtok=10.0)},
    slot_per_sec=0.01,
    zombie_per_sec=0.001,
)
BOUND = Policy.uniform(1.0)
EXTERNAL = FIXTURES / "openhands/multi_swe_bench_examples_output.jsonl"


def _read(duration: float, completed: bool = True) -> Call:
    return Call(
        tool="read_file",
        args={"path": "a.py"},
        duration_sec=duration,
        completed=completed,
        extent=Extent(path="a.py", start_line=1, end_line=10),
    )


def corpus() -> list[Episode]:
    """Three episodes: priced and slow (A), without a model (B), wedged (C)."""
    slow = Episode(
        schema_version=V2,  # type: ignore[call-arg]
        id="A",
        source="synthetic",
        started_at=T0,
        model="m",
        rounds=[
            Round(send_sec=1.0, calls=[_read(3.0)], input_tokens=100, output_tokens=10),
            Round(send_sec=0.5, input_tokens=200, output_tokens=20),
        ],
    )
    unknown = Episode(
        id="B",
        source="synthetic",
        started_at=T0,
        rounds=[Round(send_sec=2.0, calls=[_read(0.5)]), Round(send_sec=1.0)],
    )
    wedged = Episode(
        schema_version=V2,  # type: ignore[call-arg]
        id="C",
        source="synthetic",
        started_at=T0,
        model="m",
        end_reason="wedged",
        rounds=[Round(send_sec=1.0, calls=[_read(50.0, completed=False)], input_tokens=1000)],
    )
    return [slow, unknown, wedged]


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_reissue_costs_what_a_hand_computation_gives(engine):
    """Under reissue at a 1 s bound: A re-asks round 1 once (priced like it), B is unpriced,
    C's wedged read and its re-issue never return (unpriced zombies)."""
    result = replay(corpus(), BOUND, engine=engine, reaction="reissue")
    cost = replay_cost(result, corpus(), PRICES).episodes.set_index("episode_id")
    a = cost.loc["A"]
    # Rounds: 1 (1.0 s send, read abandoned at 1 s), the re-ask (1.0 s, abandoned again at 1 s),
    # 2 (0.5 s). Tokens: round 1 twice and round 2.
    assert (a.rounds, a.added_rounds, a.priced_rounds, a.unpriced_rounds) == (3, 1, 3, 0)
    assert (a.input_tokens, a.output_tokens) == (100 + 100 + 200, 10 + 10 + 20)
    assert a.token_cost == pytest.approx((400 * 2.0 + 40 * 10.0) / 1e6)
    assert a.wall_sec == pytest.approx(1.0 + 1.0 + 1.0 + 1.0 + 0.5)
    assert a.slot_cost == pytest.approx(4.5 * 0.01)
    assert a.zombie_sec == pytest.approx(2 * (3.0 - 1.0))
    assert a.zombie_cost == pytest.approx(4.0 * 0.001)
    assert a.cost == pytest.approx(0.0012 + 0.045 + 0.004)
    b = cost.loc["B"]
    assert (b.model, b.priced_as, b.priced_rounds, b.unpriced_rounds) == ("", "", 0, 2)
    assert b.token_cost == 0.0 and b.cost == pytest.approx((2.0 + 0.5 + 1.0) * 0.01)
    c = cost.loc["C"]
    # Its only round has no output count: unpriced, as is the round the re-issue adds.
    assert (c.rounds, c.added_rounds, c.priced_rounds, c.unpriced_rounds) == (2, 1, 0, 2)
    assert (c.wedged_zombies, c.unpriced_zombies, c.zombie_cost) == (2, 2, 0.0)


def test_a_wedged_zombie_is_priced_when_the_table_says_for_how_long():
    """With zombie.wedged_sec set, each never-returning zombie costs that many seconds."""
    table = PriceTable(models=PRICES.models, zombie_per_sec=0.001, wedged_zombie_sec=100.0)
    result = replay(corpus(), BOUND, engine="vectorized", reaction="reissue")
    c = replay_cost(result, corpus(), table).episodes.set_index("episode_id").loc["C"]
    assert (c.wedged_zombies, c.unpriced_zombies) == (2, 0)
    assert c.zombie_cost == pytest.approx(2 * 100.0 * 0.001)


def test_as_recorded_adds_no_round_and_a_default_model_prices_the_unknown():
    """as_recorded adds no round; a default model prices B as 'm', but B has no token counts,
    so its rounds stay unpriced (unknown is not 0)."""
    table = PriceTable(models=PRICES.models, default_model="m")
    cost = replay_cost(replay(corpus(), BOUND), corpus(), table)
    frame = cost.episodes.set_index("episode_id")
    assert frame["added_rounds"].sum() == 0
    assert frame.loc["B", "priced_as"] == "m"
    assert frame.loc["B", "unpriced_rounds"] == 2
    assert cost.summary["unpriced_rounds"] == 2 + 1
    assert cost.summary["priced_rounds"] == 2


def test_summary_sums_the_frame():
    """cost_total is the sum of the per-episode costs; cost_per_episode their mean."""
    cost = replay_cost(replay(corpus(), BOUND, reaction="reissue"), corpus(), PRICES)
    assert list(cost.episodes.columns) == list(COST_COLUMNS)
    assert set(cost.summary) == set(COST_KEYS)
    assert cost.summary["cost_total"] == pytest.approx(cost.episodes["cost"].sum())
    assert cost.summary["cost_per_episode"] == pytest.approx(cost.episodes["cost"].mean())
    assert cost.summary["added_rounds"] == 2
    assert cost.assumptions["reaction"] == "reissue"
    assert cost.assumptions["currency"] == "USD"


def test_an_unbounded_wait_on_a_wedge_costs_infinitely_much_slot_time():
    """The unbounded policy waits on C's wedge forever: its slot cost is inf, not a number."""
    result = replay(corpus(), BOUND.replace(narrowing=Narrowing.unbounded()), engine="vectorized")
    frame = replay_cost(result, corpus(), PRICES).episodes.set_index("episode_id")
    assert frame.loc["C", "slot_cost"] == float("inf")
    free = PriceTable(models=PRICES.models)  # a free slot is free even when held forever
    assert replay_cost(result, corpus(), free).episodes["slot_cost"].max() == 0.0


def test_a_replay_of_episodes_missing_from_the_corpus_is_refused():
    """The corpus given must hold every replayed episode (else tokens would be silently 0)."""
    result = replay(corpus(), BOUND)
    with pytest.raises(ValueError, match="'C'"):
        replay_cost(result, corpus()[:2], PRICES)


def test_added_rounds_are_the_distinct_rounds_of_calls_past_the_recorded_ones():
    """Rows with call_index >= the recorded count are re-issues; one added round per round."""
    calls = pd.DataFrame(
        {
            "episode_id": ["A", "A", "A", "A", "B"],
            "round": [1, 1, 1, 3, 1],
            "call_index": [0, 2, 3, 4, 0],
        }
    )
    assert added_rounds(calls, {"A": 2, "B": 1}) == {"A": [1, 3]}


def test_real_logs_cost_the_same_in_twin_and_vectorized():
    """On the imported OpenHands Multi-SWE-bench runs (real usage), a 5 s bound under reissue
    prices the same in both engines, re-asks rounds, and prices the rounds the log reports."""
    episodes = import_openhands(EXTERNAL)
    table = PriceTable(
        models={"llama-4-maverick": ModelPrice(0.2, 0.6)}, slot_per_sec=0.001, zombie_per_sec=0.0001
    )
    policy = TimeoutPolicy.uniform(5.0)
    twin = replay_cost(replay(episodes, policy, engine="twin", reaction="reissue"), episodes, table)
    fast = replay_cost(
        replay(episodes, policy, engine="vectorized", reaction="reissue"), episodes, table
    )
    pd.testing.assert_frame_equal(twin.episodes, fast.episodes)
    assert fast.summary["added_rounds"] > 0
    assert fast.summary["unpriced_rounds"] == 0
    recorded_input = sum(r.input_tokens or 0 for e in episodes for r in e.rounds)
    assert fast.episodes["input_tokens"].sum() > recorded_input  # the re-asked rounds count
    assert set(fast.episodes["priced_as"]) == {"llama-4-maverick"}


def test_hedged_calls_cost_the_seconds_their_second_attempt_ran_while_the_episode_waited():
    """hedge_sec is the sum, over hedged rows, of wait_sec − after_sec (counted from the frame
    here), priced at the zombie price; the twin and the vectorized engine agree."""
    from reviewlab.recording._files import load_episodes
    from reviewlab.resources import corpus_path

    episodes = load_episodes(corpus_path())[:300]
    policy = Policy.uniform(30.0).with_hedge("read_file", after_sec=0.2, max_share=0.2)
    table = PriceTable(zombie_per_sec=0.5)
    results = {e: replay(episodes, policy, engine=e) for e in ("twin", "vectorized")}
    costs = {e: replay_cost(r, episodes, table) for e, r in results.items()}
    pd.testing.assert_frame_equal(costs["twin"].episodes, costs["vectorized"].episodes)
    calls = results["vectorized"].calls
    hedged = calls[calls["hedged"]]
    assert len(hedged) > 0
    expected = (hedged["wait_sec"] - 0.2).clip(lower=0).sum()
    frame = costs["vectorized"].episodes
    assert frame["hedge_sec"].sum() == pytest.approx(expected)
    assert costs["vectorized"].summary["hedge_cost"] == pytest.approx(expected * 0.5)
    assert frame["cost"].sum() == pytest.approx(
        (
            frame["token_cost"] + frame["slot_cost"] + frame["zombie_cost"] + frame["hedge_cost"]
        ).sum()
    )


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_with_a_breaker_reissue_adds_one_round_per_round_with_an_abandoned_call(engine):
    """Under reissue a round is re-asked once when some of its recorded calls were abandoned
    (withheld calls are not abandoned): the added rounds equal those rounds, counted from the
    call frame, and each is priced like the recorded round it repeats."""
    wedge = Call(tool="search_code", args={"q": "x"}, duration_sec=100.0, completed=False)
    rounds = [
        Round(send_sec=1.0, calls=[wedge], input_tokens=10 * (k + 1), output_tokens=k)
        for k in range(5)
    ]
    rounds.append(Round(send_sec=1.0, input_tokens=99, output_tokens=9))
    episode = Episode(
        schema_version=V2,  # type: ignore[call-arg]
        id="w",
        source="synthetic",
        slot="s",
        started_at=T0,
        model="m",
        rounds=rounds,
    )
    policy = BOUND.with_breaker(2, cooldown_rounds=2)
    result = replay([episode], policy, engine=engine, reaction="reissue")
    calls = result.calls
    assert (calls["outcome"] == "withheld").any()
    recorded = calls[calls["call_index"] < 5]
    abandoned_rounds = sorted(
        set(recorded.loc[recorded["source_gap"] == "native_tool_abandoned", "round"])
    )
    assert 1 <= len(abandoned_rounds) < 5  # some rounds abandoned, some withheld
    row = replay_cost(result, [episode], PRICES).episodes.iloc[0]
    assert row.added_rounds == len(abandoned_rounds)
    expected_in = sum(r.input_tokens for r in rounds) + sum(
        rounds[r - 1].input_tokens for r in abandoned_rounds
    )
    expected_out = sum(r.output_tokens for r in rounds) + sum(
        rounds[r - 1].output_tokens for r in abandoned_rounds
    )
    assert (row.input_tokens, row.output_tokens) == (expected_in, expected_out)
