"""The breaker in the replay engines: the twin and the vectorized engine withhold the same calls
(through the rewrite fixed point), by hand and under random rules and corpora."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reviewlab.core._breaker import BreakerRule, BreakerState
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.testing._strategies import breakers
from reviewlab.testing._strategies import corpora as shared_corpora

T0 = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)
GONE, HELD = "native_tool_abandoned", "native_tool_withheld"


def _search(duration: float, completed: bool = True) -> Call:
    return Call(tool="search_code", args={"query": "x"}, duration_sec=duration, completed=completed)


def _read(duration: float, lines: int = 10) -> Call:
    return Call(
        tool="read_file",
        args={"path": "a.py"},
        duration_sec=duration,
        extent=Extent(path="a.py", start_line=1, end_line=lines),
    )


def wedging_episode(episode_id: str = "w", slot: str = "s", at: float = 0.0) -> Episode:
    """``search_code`` wedges in rounds 1-3, then answers in 1 s in rounds 3-6."""
    wedge = _search(100.0, completed=False)
    return Episode(
        id=episode_id,
        source="synthetic",
        slot=slot,
        started_at=T0 + timedelta(seconds=at),
        rounds=[
            Round(send_sec=1.0, calls=[wedge]),
            Round(send_sec=1.0, calls=[wedge]),
            Round(send_sec=1.0, calls=[wedge, _search(1.0), _read(1.0)]),
            Round(send_sec=1.0, calls=[_search(1.0), _read(1.0, 20)]),
            Round(send_sec=1.0, calls=[_search(1.0)]),
            Round(send_sec=1.0, calls=[_search(1.0)]),
            Round(send_sec=1.0, calls=[]),
        ],
    )


def uniform(seconds: float) -> Policy:
    """Every tool ``seconds``, the deadline ignored (``none``): bounds a hand sum can check."""
    return Policy(timeouts=TimeoutPolicy.uniform(seconds), narrowing=Narrowing("none"))


POLICY = uniform(2.0).with_breaker(3, cooldown_rounds=2)


def test_three_wedges_in_a_row_withhold_the_tool_for_two_rounds():
    """The acceptance corpus: the fourth search_code (round 3) and those of rounds 4 and 5 are
    withheld (no bound, wait 0, "started" when withheld); round 6 runs again. Every time is a
    hand sum of sends and waits."""
    result = replay([wedging_episode()], POLICY, engine="twin")
    calls = result.calls
    expected = [
        # round, tool, outcome, gap, start_sec, wait_sec
        (1, "search_code", "error", GONE, 1.0, 2.0),
        (2, "search_code", "error", GONE, 4.0, 2.0),
        (3, "search_code", "error", GONE, 7.0, 2.0),
        (3, "search_code", "withheld", HELD, 9.0, 0.0),
        (3, "read_file", "executed", "", 9.0, 1.0),
        (4, "search_code", "withheld", HELD, 11.0, 0.0),
        (4, "read_file", "executed", "", 11.0, 1.0),
        (5, "search_code", "withheld", HELD, 13.0, 0.0),
        (6, "search_code", "executed", "", 14.0, 1.0),
    ]
    got = list(
        zip(
            calls["round"],
            calls["tool"],
            calls["outcome"],
            calls["source_gap"],
            calls["start_sec"],
            calls["wait_sec"],
            strict=True,
        )
    )
    assert got == expected
    assert list(calls["call_index"]) == list(range(9))
    withheld = calls[calls["outcome"] == "withheld"]
    assert withheld["bound_sec"].isna().all() and (withheld["bound_by"] == "unbounded").all()
    # Seven sends, three abandoned waits of 2 s, three 1-s calls; the withheld ones wait 0.
    assert result.episodes["wall_sec"].iloc[0] == 7 * 1.0 + 3 * 2.0 + 3 * 1.0
    assert result.episodes["calls"].iloc[0] == 6  # withheld calls were never dispatched


def test_without_a_breaker_every_call_runs():
    """The same corpus and bounds without a breaker: every search_code is dispatched."""
    calls = replay([wedging_episode()], uniform(2.0)).calls
    assert not calls["outcome"].eq("withheld").any()
    assert calls["source_gap"].eq(GONE).sum() == 3


def test_withheld_reads_are_lost_to_the_timeout():
    """A withheld read's requested lines count in timeout_lost_lines, not as inherent loss."""
    episode = Episode(
        id="r",
        source="synthetic",
        started_at=T0,
        rounds=[
            Round(send_sec=1.0, calls=[_read(9.0)]),
            Round(send_sec=1.0, calls=[_read(1.0, 30)]),
            Round(send_sec=1.0, calls=[]),
        ],
    )
    policy = uniform(2.0).with_breaker(1, cooldown_rounds=1)
    for engine in ("twin", "vectorized"):
        result = replay([episode], policy, engine=engine)
        calls = result.calls
        assert list(calls["outcome"]) == ["error", "withheld"]
        assert list(calls["timeout_lost_lines"]) == [10, 30]
        assert result.summary["timeout_coverage_loss_rate"] == 1.0
        assert result.summary["inherent_coverage_loss_rate"] == 0.0


def test_a_slot_breaker_carries_into_the_slots_next_episode_in_start_order():
    """Slot scope: the episode that starts second (listed first) inherits the open breaker of
    the slot's first episode; another slot and an episode-scoped rule do not."""
    tail = Episode(
        id="later",
        source="synthetic",
        slot="s",
        started_at=T0 + timedelta(seconds=100),
        rounds=[Round(send_sec=1.0, calls=[_search(1.0)]), Round(send_sec=1.0, calls=[])],
    )
    other = tail.model_copy(update={"id": "elsewhere", "slot": "t"})
    first = Episode(
        id="first",
        source="synthetic",
        slot="s",
        started_at=T0,
        rounds=[
            Round(send_sec=1.0, calls=[_search(100.0, completed=False)] * 3),
            Round(send_sec=1.0, calls=[]),
        ],
    )
    corpus = [tail, other, first]
    slot = uniform(2.0).with_breaker(3, cooldown_rounds=2, scope="slot")
    result = replay(corpus, slot)
    outcome = dict(zip(result.calls["episode_id"], result.calls["outcome"], strict=False))
    # first: trips in its round 1 (slot round 1), open through slot round 3; its final answer is
    # slot round 2, so the later episode's round 1 is slot round 3: withheld.
    assert outcome["later"] == "withheld" and outcome["elsewhere"] == "executed"
    per_episode = replay(corpus, POLICY.with_breaker(3, cooldown_rounds=2))
    assert (
        not per_episode.calls["episode_id"]
        .eq("later")
        .pipe(lambda rows: per_episode.calls[rows]["outcome"].eq("withheld").any())
    )
    seconds = uniform(2.0).with_breaker(3, cooldown_sec=200.0, scope="slot")
    assert replay(corpus, seconds).calls.set_index("episode_id").loc["later", "outcome"] == (
        "withheld"
    )
    short = uniform(2.0).with_breaker(3, cooldown_sec=50.0, scope="slot")
    assert replay(corpus, short).calls.set_index("episode_id").loc["later", "outcome"] == (
        "executed"
    )
    # One round of cool-down ends with first's final answer (slot round 2): later runs.
    one = uniform(2.0).with_breaker(3, cooldown_rounds=1, scope="slot")
    assert replay(corpus, one).calls.set_index("episode_id").loc["later", "outcome"] == ("executed")


def test_episodes_of_no_known_slot_share_no_breaker():
    """Slot scope: episodes whose slot is unknown ("") are each a slot of their own."""
    wedges = Episode(
        id="u1",
        source="synthetic",
        started_at=T0,
        rounds=[Round(send_sec=1.0, calls=[_search(100.0, completed=False)] * 3)],
    )
    after = Episode(
        id="u2",
        source="synthetic",
        started_at=T0 + timedelta(seconds=5),
        rounds=[Round(send_sec=1.0, calls=[_search(1.0)])],
    )
    policy = uniform(2.0).with_breaker(3, cooldown_rounds=5, scope="slot")
    for engine in ("twin", "vectorized"):
        calls = replay([wedges, after], policy, engine=engine).calls
        assert calls.set_index("episode_id").loc["u2", "outcome"] == "executed"
        shared = [wedges, after.model_copy(update={"slot": "s"})]
        shared[0] = wedges.model_copy(update={"slot": "s"})
        calls = replay(shared, policy, engine=engine).calls
        assert calls.set_index("episode_id").loc["u2", "outcome"] == "withheld"


@pytest.mark.parametrize("reaction", ["reissue", "skip_target"])
def test_the_breaker_combines_with_the_reactions(reaction):
    """reissue: a re-issued copy counts and can be withheld; skip_target: a withheld read does
    not make the model give up on its path. Twin and vectorized agree."""
    twin = replay([wedging_episode()], POLICY, engine="twin", reaction=reaction).calls
    vectorized = replay([wedging_episode()], POLICY, engine="vectorized", reaction=reaction).calls
    pd.testing.assert_frame_equal(twin, vectorized)
    if reaction == "reissue":
        # Round 1's wedge, its copy, round 2's wedge: three in a row by the reissue send.
        assert list(twin["outcome"][:4]) == ["error", "error", "error", "withheld"]
        assert list(twin["call_index"][:4]) == [0, 9, 1, 10]
    else:
        assert not twin["source_gap"].eq("native_tool_skipped").any()


def _frames_equal(a, b) -> None:
    pd.testing.assert_frame_equal(a.calls, b.calls)
    pd.testing.assert_frame_equal(a.episodes, b.episodes)
    for key, value in a.summary.items():
        other = b.summary[key]
        assert value == other or (math.isnan(value) and math.isnan(other)), key


SECONDS = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 30.0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=shared_corpora(max_episodes=4, max_rounds=5, deadlines=(5.5, 12.5, 40.5)),
    rule=breakers(),
    seconds=st.sampled_from([1.0, 2.5, 5.0]),
    reaction=st.sampled_from(["as_recorded", "reissue", "skip_target"]),
    censored=st.sampled_from(["wedge", "observed", "impute"]),
    narrowing=st.sampled_from([Narrowing(), Narrowing("none"), Narrowing("fraction", 0, 0.5)]),
)
def test_twin_and_vectorized_frames_are_identical_under_random_breakers(
    corpus, rule, seconds, reaction, censored, narrowing
):
    """Every column of both frames and every summary figure agree exactly."""
    # impute needs a completed call to estimate durations from.
    assume(censored != "impute" or any(c.completed for e in corpus for c in e.calls))
    policy = Policy(timeouts=TimeoutPolicy(default_sec=seconds), narrowing=narrowing, breaker=rule)
    kwargs = {"reaction": reaction, "censored": censored, "seed": 7}
    twin = replay(corpus, policy, engine="twin", **kwargs)
    vectorized = replay(corpus, policy, engine="vectorized", **kwargs)
    _frames_equal(twin, vectorized)
    # Withheld rows are never dispatched and never count toward the breaker.
    calls = twin.calls
    held = calls[calls["source_gap"] == HELD]
    assert (held["outcome"] == "withheld").all() and (held["wait_sec"] == 0.0).all()
    assert (held["zombie_sec"] == 0.0).all()
    assert_fixed_point(corpus, calls, rule)


def assert_fixed_point(corpus: list[Episode], calls: pd.DataFrame, rule: BreakerRule) -> None:
    """The final frame is its own answer: walking its rows in order through a BreakerState
    withholds exactly its withheld rows (an independent reading of the frame, not the engines'
    walk)."""
    first = min(e.started_at for e in corpus)
    arrival = {e.id: (e.started_at - first).total_seconds() for e in corpus}
    recorded = {e.id: len(e.calls) for e in corpus}
    order = sorted(range(len(corpus)), key=lambda p: (arrival[corpus[p].id], p))
    states: dict[object, BreakerState] = {}
    rows = {episode_id: rows for episode_id, rows in calls.groupby("episode_id", sort=False)}
    for position in order:
        episode = corpus[position]
        key = ("slot", episode.slot) if rule.scope == "slot" and episode.slot else position
        state = states.setdefault(key, BreakerState(rule))
        state.start_episode()
        sends, last = 0, None
        mine = rows.get(episode.id, calls.iloc[0:0])
        for row in mine.itertuples():
            if row.source_gap == "native_tool_skipped":
                continue  # never issued: no send, no count
            send = (row.round, row.call_index >= recorded[episode.id])
            if send != last:
                sends, last = sends + 1, send
            now = arrival[episode.id] + row.start_sec
            if row.source_gap == HELD:
                assert state.withheld(row.tool, sends, now), (episode.id, row.call_index)
            elif row.outcome in ("executed", "error"):
                assert not state.withheld(row.tool, sends, now), (episode.id, row.call_index)
                abandoned = row.source_gap == GONE
                state.record(row.tool, abandoned, sends, now + row.wait_sec)
        state.end_episode(sends + 1)


def test_a_pool_run_carries_a_slot_breaker_along_its_simulated_slots():
    """Twin with two simulated slots: a and b start at once on slot-0 and slot-1; c queues for
    slot-0 (free at 13 s) and, under slot scope, starts inside a's 30-s cool-down (tripped at
    6 s), so its first call is withheld; per episode it is not."""
    corpus = [wedging_episode("a", at=0), wedging_episode("b", at=1), wedging_episode("c", at=2)]
    firsts = {}
    for scope in ("episode", "slot"):
        policy = uniform(2.0).with_breaker(2, cooldown_sec=30.0, scope=scope)
        result = replay(corpus, policy, slots=2)
        episodes = result.episodes.set_index("episode_id")
        assert (episodes.loc["c", "slot_id"], episodes.loc["c", "start_sec"]) == ("slot-0", 13.0)
        firsts[scope] = result.calls.groupby("episode_id")["outcome"].first().to_dict()
    assert firsts["episode"] == {"a": "error", "b": "error", "c": "error"}
    assert firsts["slot"] == {"a": "error", "b": "error", "c": "withheld"}


def test_an_engine_called_on_its_own_refuses_a_breaker_and_replay_names_the_policy():
    """simulate(), replay_vectorized() and a compiled corpus would replay calls without
    withholding any: they refuse a policy with a breaker (idle timeouts beside it or not) by
    name; replay() applies the breaker and its result names the policy it was given."""
    from reviewlab.engines.twin import simulate
    from reviewlab.engines.vectorized import compile_corpus, replay_vectorized

    corpus = [wedging_episode()]
    idle = POLICY.with_idle(search_code=50.0)
    for policy in (POLICY, idle):
        with pytest.raises(ValueError, match="the twin: the policy's breaker"):
            simulate(corpus, policy)
        with pytest.raises(ValueError, match="the vectorized engine: the policy's breaker"):
            replay_vectorized(corpus, policy)
        with pytest.raises(ValueError, match="compiled corpus.*the policy's breaker"):
            compile_corpus(corpus).summary(policy)
    result = replay(corpus, idle, engine="vectorized")
    assert result.policy is idle
    assert result.calls["outcome"].eq("withheld").sum() == 3
