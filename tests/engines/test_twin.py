"""The SimPy twin: the briefing's replay semantics on virtual time, the
exact bound cache, and imputation."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
import simpy

from reviewlab.core import _metrics as metrics
from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy, resolve_bound
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED
from reviewlab.engines._replay import replay
from reviewlab.engines.twin import BoundResolver, KaplanMeier, impute_durations, simulate
from reviewlab.engines.twin._model import sync_to
from reviewlab.recording._schema import Call, Episode, Extent, Round

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _read(duration: float, lines: int = 10, **kw: object) -> Call:
    return Call(
        tool="read_file",
        args={"path": "a.py"},
        duration_sec=duration,
        extent=Extent(path="a.py", start_line=1, end_line=lines),
        **kw,
    )  # type: ignore[arg-type]


def _episode(
    id: str,
    rounds: list[Round],
    *,
    offset_sec: float = 0.0,
    deadline_sec: float | None = None,
    slot: str = "s1",
) -> Episode:
    return Episode(
        id=id,
        source="synthetic",
        slot=slot,
        started_at=T0 + timedelta(seconds=offset_sec),
        deadline_sec=deadline_sec,
        rounds=rounds,
    )


def test_frames_have_the_shared_columns_and_one_row_per_call():
    """Call and episode frames use the metrics module's columns, one
    row per recorded call in order."""
    ep = _episode("e1", [Round(send_sec=1.0, calls=[_read(0.5), _read(0.2)]), Round(send_sec=2.0)])
    result = simulate([ep], TimeoutPolicy.uniform(5.0))
    assert tuple(result.calls.columns) == metrics.CALL_FRAME_COLUMNS
    assert tuple(result.episodes.columns) == metrics.EPISODE_COLUMNS
    assert list(result.calls["call_index"]) == [0, 1]
    assert list(result.calls["round"]) == [1, 1]
    assert set(result.summary) == set(SUMMARY_KEYS)
    assert result.engine == "twin" and result.slots is None


def test_an_overrunning_call_is_abandoned_at_its_bound_and_later_reads_lose_credit():
    """A call past its bound is abandoned (error + gap, zombie = duration - bound); the next
    read stays executed uncredited."""
    ep = _episode(
        "e1",
        [
            Round(
                send_sec=1.0,
                calls=[_read(0.5, lines=10), _read(9.0, lines=20), _read(0.5, lines=30)],
            ),
            Round(send_sec=1.0),
        ],
    )
    result = simulate([ep], TimeoutPolicy.uniform(3.0))
    calls = result.calls
    assert list(calls["outcome"]) == ["executed", "error", "executed"]
    assert list(calls["source_gap"]) == ["", SOURCE_GAP_ABANDONED, ""]
    assert list(calls["credited_lines"]) == [10, 0, 0]
    assert list(calls["zombie_sec"]) == [0.0, 6.0, 0.0]
    row = result.episodes.iloc[0]
    assert row["max_silence_sec"] == pytest.approx(0.5 + 3.0 + 0.5)
    assert row["wall_sec"] == pytest.approx(1.0 + 4.0 + 1.0)
    # The engine records its own timing: dispatch from the arrival, and the
    # wait (the bound when abandoned).
    assert list(calls["start_sec"]) == [1.0, 1.5, 4.5]
    assert list(calls["wait_sec"]) == [0.5, 3.0, 0.5]
    assert row["coverage_loss"] == pytest.approx(1 - 10 / 60)
    assert result.summary["peak_loose_workers"] == 1


def test_a_return_exactly_at_the_bound_counts_as_inside_it():
    """The shared abandons() rule: a call that returns exactly at its bound is executed."""
    ep = _episode("e1", [Round(send_sec=0.0, calls=[_read(3.0)])])
    assert simulate([ep], TimeoutPolicy.uniform(3.0)).calls["outcome"].iloc[0] == "executed"


def test_a_censored_call_is_a_wedge_with_infinite_zombie_time():
    """Under censored='wedge' a call that never returned is abandoned and its zombie never ends."""
    wedge = Call(tool="query_code", duration_sec=50.0, completed=False)
    ep = _episode("e1", [Round(send_sec=1.0, calls=[wedge]), Round(send_sec=1.0)])
    result = simulate([ep], TimeoutPolicy.uniform(10.0))
    row = result.calls.iloc[0]
    assert row["source_gap"] == SOURCE_GAP_ABANDONED and math.isinf(row["zombie_sec"])
    assert result.summary["wedged_zombies"] == 1 and result.summary["zombie_sec"] == math.inf
    assert result.summary["zombie_finite_sec"] == 0.0


def test_returned_after_sec_is_the_true_duration():
    """A recorded abandonment whose loose worker was seen returning replays as a
    completed call of that length."""
    late = Call(tool="search_code", duration_sec=4.0, completed=False, returned_after_sec=7.0)
    ep = _episode("e1", [Round(send_sec=0.0, calls=[late])])
    assert simulate([ep], TimeoutPolicy.uniform(10.0)).calls["outcome"].iloc[0] == "executed"
    calls = simulate([ep], TimeoutPolicy.uniform(5.0)).calls
    assert calls["zombie_sec"].iloc[0] == 2.0 and bool(calls["completed"].iloc[0])


def test_the_inherited_deadline_narrows_bounds_on_the_virtual_clock():
    """Remaining time is read at each call's virtual dispatch: later
    calls get deadline bounds, then 0."""
    ep = _episode(
        "e1", [Round(send_sec=2.0, calls=[_read(1.0), _read(4.0), _read(0.5)])], deadline_sec=5.0
    )
    calls = simulate([ep], TimeoutPolicy.uniform(10.0)).calls
    assert list(calls["bound_sec"]) == [3.0, 2.0, 0.0]
    assert list(calls["bound_by"]) == ["deadline", "deadline", "deadline"]
    assert list(calls["outcome"]) == ["executed", "error", "error"]


def test_the_deadline_runs_from_the_corpus_arrival_not_the_first_episode():
    """Arrival offsets come from started_at; each episode's deadline counts from its own arrival."""
    early = _episode("a", [Round(send_sec=1.0, calls=[_read(1.0)])], deadline_sec=3.0)
    late = _episode(
        "b", [Round(send_sec=1.0, calls=[_read(1.0)])], offset_sec=100.0, deadline_sec=3.0
    )
    calls = simulate([early, late], TimeoutPolicy.uniform(10.0)).calls
    assert list(calls["bound_sec"]) == [2.0, 2.0]


def test_unbounded_mode_waits_forever_on_a_wedge_then_withholds_the_rest():
    """Pre-fix under censored='wedge': the censored call is waited
    on forever; the rest never runs."""
    wedge = Call(tool="query_code", duration_sec=26160.0, completed=False)
    ep = _episode(
        "e1",
        [
            Round(send_sec=1.0, calls=[_read(0.5), wedge, _read(0.5)]),
            Round(send_sec=1.0, calls=[_read(0.5)]),
            Round(send_sec=1.0),
        ],
    )
    result = simulate([ep], TimeoutPolicy.ouroboros(), Narrowing.unbounded())
    calls = result.calls
    assert list(calls["outcome"]) == ["executed", "error", "withheld", "withheld"]
    assert list(calls["source_gap"]) == ["", SOURCE_GAP_WEDGED, "", ""]
    assert list(calls["bound_by"]) == ["unbounded"] * 4 and calls["bound_sec"].isna().all()
    assert list(calls["credited_lines"]) == [10, 0, 0, 0]
    assert result.episodes["max_silence_sec"].iloc[0] == math.inf
    assert result.episodes["wall_sec"].iloc[0] == math.inf
    assert result.summary["wall_max_sec"] == math.inf == result.summary["max_silence_sec"]
    assert result.summary["calls"] == 4 and result.episodes["calls"].iloc[0] == 2
    # The wedge's wait never ends; withheld calls never start (placed at the never-reached end).
    assert list(calls["start_sec"]) == [1.0, 1.5, math.inf, math.inf]
    assert list(calls["wait_sec"]) == [0.5, math.inf, 0.0, 0.0]
    # The loss is inherent: nothing was abandoned, so the timeout share is exactly 0.
    assert result.summary["timeout_coverage_loss_rate"] == 0.0
    assert result.summary["inherent_coverage_loss_rate"] == pytest.approx(20 / 30)


def test_unbounded_mode_under_observed_censoring_returns_at_the_censoring_time():
    """Pre-fix under censored='observed': the censored call returns when
    the recording lost sight of it."""
    wedge = Call(tool="query_code", duration_sec=26160.0, completed=False)
    ep = _episode(
        "e1",
        [
            Round(send_sec=1.0, calls=[_read(0.5), wedge, _read(0.5)]),
            Round(send_sec=1.0, calls=[_read(0.5)]),
            Round(send_sec=1.0),
        ],
    )
    result = simulate([ep], TimeoutPolicy.ouroboros(), Narrowing.unbounded(), censored="observed")
    calls = result.calls
    assert list(calls["outcome"]) == ["executed"] * 4
    assert result.episodes["max_silence_sec"].iloc[0] == 0.5 + 26160.0 + 0.5
    assert result.episodes["wall_sec"].iloc[0] == 1.0 + 26161.0 + 1.0 + 0.5 + 1.0
    assert result.assumptions["censored"] == "observed"


def test_call_timing_in_a_pool_counts_from_the_arrival_and_includes_queueing():
    """A queued request's calls start after its queue wait; with one worker thread a
    call's wait includes queueing."""
    eps = [
        _episode(
            f"e{i}", [Round(send_sec=1.0, calls=[_read(2.0), _read(1.0)]), Round(send_sec=1.0)]
        )
        for i in range(2)
    ]
    slots = simulate(eps, TimeoutPolicy.uniform(10.0), slots=1)
    assert list(slots.episodes["queue_wait_sec"]) == [0.0, 5.0]
    assert list(slots.calls["start_sec"]) == [1.0, 3.0, 6.0, 8.0]
    assert list(slots.calls["wait_sec"]) == [2.0, 1.0, 2.0, 1.0]
    # Two episodes, one thread, first come first served: e0 reads 1–3 s; e1's first read,
    # dispatched at 1 s, runs 3–5 s; e0's second, dispatched at 3 s, runs 5–6 s; e1's second,
    # dispatched at 5 s, runs 6–7 s.
    threads = simulate(eps, TimeoutPolicy.uniform(10.0), workers=1)
    assert list(threads.calls["start_sec"]) == [1.0, 3.0, 1.0, 5.0]
    assert list(threads.calls["wait_sec"]) == [2.0, 3.0, 4.0, 2.0]
    assert list(threads.episodes["max_silence_sec"]) == [5.0, 6.0]


def test_tool_errors_are_errors_without_a_gap():
    """A call recorded as the tool's own error stays an error with no
    source gap and no abandonment."""
    ep = _episode(
        "e1",
        [Round(send_sec=0.0, calls=[Call(tool="list_files", duration_sec=0.1, status="error")])],
    )
    row = simulate([ep], TimeoutPolicy.uniform(1.0)).calls.iloc[0]
    assert row["outcome"] == "error" and row["source_gap"] == ""


def test_replay_dispatches_to_the_twin():
    """replay(engine='twin') is simulate() with the default
    ouroboros policy and inherit narrowing."""
    ep = _episode("e1", [Round(send_sec=1.0, calls=[_read(700.0)])])
    result = replay([ep])
    assert result.calls["bound_sec"].iloc[0] == 600.0 and result.engine == "twin"
    assert result.narrowing == Narrowing()


def test_bad_input_is_refused_with_the_field_named():
    """Duplicate episode ids, unknown censoring modes and non-episodes
    are errors naming what is wrong."""
    ep = _episode("dup", [])
    with pytest.raises(ValueError, match=r"episodes\[1\]\.id: duplicate episode id 'dup'"):
        simulate([ep, ep])
    with pytest.raises(ValueError, match="censored"):
        simulate([ep], censored="forever")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"episodes\[0\]"):
        simulate([{"id": "x"}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="slots"):
        simulate([ep], slots=0)


def test_an_empty_corpus_gives_empty_frames():
    """No episodes: empty frames with the shared columns and a zero summary."""
    result = simulate([])
    assert len(result.calls) == 0
    assert tuple(result.calls.columns) == metrics.CALL_FRAME_COLUMNS
    assert result.summary["episodes"] == 0


def test_sync_to_lands_exactly_on_the_requested_time():
    """sync_to nudges the delay so env.now equals the target float bit for bit."""
    rng = np.random.default_rng(7)
    env = simpy.Environment()
    targets = np.cumsum(rng.exponential(3.3, 300)) + 0.1
    for target in targets.tolist():
        env.run(until=sync_to(env, target))
        assert env.now == target


# -- the bound cache ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "narrowing",
    [
        Narrowing(),
        Narrowing("none"),
        Narrowing("reserve", reserve_sec=7.0),
        Narrowing("fraction", fraction=0.4),
        Narrowing.unbounded(),
    ],
)
def test_cached_bounds_equal_resolve_bound_for_every_tool_kind(narrowing):
    """The resolver's bound equals resolve_bound for plain, clamp and override
    tools at many remaining times."""
    policy = TimeoutPolicy.ouroboros()
    resolver = BoundResolver(Policy(timeouts=policy, narrowing=narrowing))
    cases: list[tuple[str, dict[str, object]]] = [
        ("read_file", {}),
        ("query_code", {}),
        ("web_search", {}),
        ("run_command", {"timeout_sec": 900}),
        ("run_command", {"timeout": 5}),
        ("run_command", {}),
        ("run_command", {"timeout_sec": True}),
    ]
    for remaining in [None, 0.0, 1.5, 119.0, 130.0, 400.0, 700.0, 5000.0]:
        for tool, args in cases:
            expected = resolve_bound(
                policy, None, tool, args, narrowing=narrowing, remaining_sec=remaining
            )
            got = resolver.bound(tool, args, remaining)
            assert (got.sec, got.by, got.tool_timeout_sec) == (
                expected.sec,
                expected.by,
                expected.tool_timeout_sec,
            )
            assert resolver.bound_sec(tool, args, remaining) == (expected.sec, expected.by)
    for tool, pair in resolver.no_deadline.items():
        expected = resolve_bound(policy, None, tool, {}, narrowing=narrowing, remaining_sec=None)
        assert pair == (expected.sec, expected.by)
    # Clamp and override tools (and every tool under a custom policy or unbounded)
    # are never looked up by name.
    assert set(resolver.no_deadline) == (
        set() if narrowing.mode == "unbounded" else {"read_file", "query_code"}
    )


@pytest.mark.parametrize("narrowing", [Narrowing(), Narrowing("fraction", fraction=0.5)])
def test_narrow_sec_is_the_rule_narrow_wraps(narrowing):
    """Narrowing.narrow_sec gives the same (sec, by) as narrow's Bound for
    deadlines around the tool timeout."""
    for remaining in [None, -1.0, 0.0, 10.0, 59.99, 60.0, 120.0, 121.0, 1e9]:
        bound = narrowing.narrow(60.0, remaining)
        assert narrowing.narrow_sec(60.0, remaining) == (bound.sec, bound.by)
        assert bound.tool_timeout_sec == 60.0 and bound.remaining_sec == remaining


@pytest.mark.parametrize("narrowing", [Narrowing(), Narrowing.unbounded()])
def test_the_one_process_run_equals_one_process_per_episode_to_the_bit(narrowing):
    """Without a pool, the single corpus process (no clock stop per arrival) gives
    what per-episode processes give."""
    from reviewlab.engines._shared import arrival_times
    from reviewlab.engines.twin._bounds import BoundResolver as Resolver
    from reviewlab.engines.twin._corpus import TwinCorpus
    from reviewlab.engines.twin._engine import run_simulation
    from reviewlab.engines.twin._episode import episode_process
    from reviewlab.engines.twin._model import Simulation
    from reviewlab.recording.synth import synth_corpus

    wedge = Call(tool="query_code", duration_sec=900.0, completed=False)
    episodes = synth_corpus(80, seed=3, tail_scale=100.0) + [
        _episode(
            f"w{i}",
            [Round(send_sec=1.5, calls=[_read(2.0), wedge, _read(1.0)]), Round(send_sec=1.0)],
            offset_sec=7.3 * i,
            deadline_sec=None if i % 2 else 700.0,
        )
        for i in range(5)
    ]
    policy = Policy(timeouts=TimeoutPolicy.ouroboros(), narrowing=narrowing)
    ours, _ = run_simulation(episodes, policy)
    env = simpy.Environment()
    theirs = Simulation(env, Resolver(policy), TwinCorpus(episodes))
    for position, arrival in enumerate(arrival_times(episodes).tolist()):
        env.process(episode_process(theirs, position, arrival))
    env.run()
    for name in (
        "duration_sec",
        "completed",
        "bound_sec",
        "bound_by",
        "outcome",
        "source_gap",
        "credited_lines",
        "zombie_sec",
        "dispatch_sec",
        "wait_sec",
    ):
        assert np.array_equal(
            getattr(ours.calls, name), getattr(theirs.calls, name), equal_nan=name == "bound_sec"
        )
    assert (ours.start_sec, ours.end_sec, ours.max_silence_sec) == (
        theirs.start_sec,
        theirs.end_sec,
        theirs.max_silence_sec,
    )
    loose = [sorted(zip(run.loose_starts, run.loose_ends, strict=True)) for run in (ours, theirs)]
    assert loose[0] == loose[1]
    assert ours.env.now == env.now == max(ours.end_sec)
    # The comparison covers abandonments (zombies, wedges) and, unbounded,
    # wedged-then-withheld episodes.
    if narrowing.mode == "unbounded":
        assert (
            ours.calls.source_gap.count(SOURCE_GAP_WEDGED) >= 5 and "withheld" in ours.calls.outcome
        )
    else:
        assert any(math.isinf(end) for end in ours.loose_ends) and any(
            map(math.isfinite, ours.loose_ends)
        )


def test_the_policy_is_consulted_once_per_key_and_every_time_for_clamp_tools():
    """Plain tools resolve the policy once; clamp tools (their timeout
    depends on time left) every call."""
    resolver = BoundResolver(Policy.ouroboros())
    for remaining in (10.0, 20.0, 30.0):
        resolver.bound("read_file", {}, remaining)
    assert resolver.resolved == 1
    for remaining in (10.0, 20.0, 30.0):
        resolver.bound("web_search", {}, remaining)
    assert resolver.resolved == 4


def test_a_custom_policy_object_is_asked_for_every_call():
    """Any object with timeout_for is a policy, and the twin never
    caches it (it may be stateful)."""

    class Counting:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def timeout_for(self, tools, tool_name, tool_args=None):
            self.asked.append(tool_name)
            return 2.0 if len(self.asked) == 1 else 100.0

    policy = Counting()
    ep = _episode("e1", [Round(send_sec=0.0, calls=[_read(5.0), _read(5.0)])])
    calls = simulate([ep], policy).calls
    assert policy.asked == ["read_file", "read_file"]
    assert list(calls["outcome"]) == ["error", "executed"]


# -- censoring-aware imputation ------------------------------------------------------------------


def test_kaplan_meier_matches_a_hand_computed_estimate():
    """Times 1,2+,3,4+,5 (+ = censored): S(1)=0.8, S(3)=0.8*2/3, S(5)=0."""
    km = KaplanMeier([1, 2, 3, 4, 5], [True, False, True, False, True])
    assert km.survival(0.5) == 1.0
    assert km.survival(1.0) == pytest.approx(0.8)
    assert km.survival(2.5) == pytest.approx(0.8)
    assert km.survival(3.0) == pytest.approx(0.8 * 2 / 3)
    assert km.survival(5.0) == 0.0


def test_kaplan_meier_without_censoring_is_the_empirical_survival():
    """With every call completed the estimate is the share of durations above t."""
    durations = np.random.default_rng(3).exponential(2.0, 500)
    km = KaplanMeier(durations, np.ones(500, dtype=bool))
    for t in (0.5, 1.0, 2.0, 4.0):
        assert km.survival(t) == pytest.approx(float((durations > t).mean()))


def test_conditional_draws_recover_an_exponential_residual_life():
    """Censored exponential data: draws beyond c are all > c and their
    mean excess is about the mean."""
    rng = np.random.default_rng(11)
    true = rng.exponential(10.0, 20000)
    censor = rng.uniform(0, 30.0, 20000)
    km = KaplanMeier(np.minimum(true, censor), true <= censor)
    draws = np.array([km.draw_beyond(5.0, u) for u in rng.random(4000)])
    assert (draws > 5.0).all()
    assert float(draws.mean() - 5.0) == pytest.approx(10.0, rel=0.08)


def test_imputation_is_seeded_and_strictly_beyond_the_observation():
    """Same seed, same draws; each imputed time exceeds the observed censored duration."""
    eps = [
        _episode(
            "a",
            [
                Round(
                    calls=[Call(tool="query_code", duration_sec=float(d)) for d in range(1, 80, 3)]
                )
            ],
        ),
        _episode(
            "b",
            [
                Round(
                    calls=[
                        Call(tool="query_code", duration_sec=30.0, completed=False),
                        Call(tool="list_files", duration_sec=9.0, completed=False),
                    ]
                )
            ],
        ),
    ]
    first, again, other = (
        impute_durations(eps, 5),
        impute_durations(eps, 5),
        impute_durations(eps, 6),
    )
    assert first == again and set(first) == {("b", 0), ("b", 1)}
    assert (
        first[("b", 0)] > 30.0 and first[("b", 1)] > 9.0
    )  # list_files borrows the pooled estimate
    assert other != first


def test_impute_mode_replaces_wedges_with_finite_returns():
    """censored='impute' turns a wedge into a late return: finite zombie time, no wedged zombies."""
    eps = [
        _episode(
            "a",
            [Round(calls=[Call(tool="query_code", duration_sec=float(d)) for d in (5, 20, 80)])],
        ),
        _episode("b", [Round(calls=[Call(tool="query_code", duration_sec=30.0, completed=False)])]),
    ]
    result = simulate(eps, TimeoutPolicy.uniform(10.0), censored="impute", seed=1)
    row = result.calls.iloc[3]
    assert row["source_gap"] == SOURCE_GAP_ABANDONED and bool(row["completed"])
    assert 20.0 < row["zombie_sec"] < math.inf and result.summary["wedged_zombies"] == 0


def test_a_corpus_that_never_completed_cannot_be_imputed():
    """With no completed observation there is no distribution to draw from: a clear error."""
    ep = _episode("a", [Round(calls=[Call(tool="query_code", duration_sec=3.0, completed=False)])])
    with pytest.raises(ValueError, match="no call in the corpus ever completed"):
        impute_durations([ep], 0)


def test_a_kept_corpus_replays_exactly_like_a_fresh_one():
    """Replaying the same episode objects again (the handle's compiled corpus reused) gives the
    same frames as a fresh compile."""
    from reviewlab.engines._corpus import clear_corpora, open_corpus

    eps = [
        _episode(
            f"e{i}",
            [Round(send_sec=1.0, calls=[_read(0.5 + i), _read(9.0)])],
            offset_sec=3.0 - i,
            deadline_sec=8.0 if i % 2 else None,
        )
        for i in range(4)
    ]
    clear_corpora()
    fresh = simulate(eps, TimeoutPolicy.uniform(5.0))
    # same objects in the same order: one handle, one compiled corpus
    assert open_corpus(list(eps)).twin_compiled() is open_corpus(eps).twin_compiled()
    again = simulate(list(eps), TimeoutPolicy.uniform(5.0))
    assert fresh.calls.equals(again.calls) and fresh.episodes.equals(again.episodes)
    assert fresh.summary == again.summary
    # Episodes arrive in reverse corpus order; the frame is still in corpus order.
    assert list(again.calls["episode_id"]) == ["e0", "e0", "e1", "e1", "e2", "e2", "e3", "e3"]


def test_frames_are_in_corpus_order_when_worker_threads_interleave_episodes():
    """With a shared worker pool episodes interleave, yet call rows come out in
    corpus order, then call order."""
    eps = [
        _episode(
            f"e{i}",
            [
                Round(send_sec=0.5, calls=[_read(2.0), _read(1.0)]),
                Round(send_sec=0.5, calls=[_read(0.5)]),
            ],
            offset_sec=0.1 * (3 - i),
        )
        for i in range(4)
    ]
    result = simulate(eps, TimeoutPolicy.uniform(10.0), workers=2)
    assert list(result.calls["episode_id"]) == [f"e{i}" for i in range(4) for _ in range(3)]
    assert list(result.calls["call_index"]) == [0, 1, 2] * 4
