"""The twin's reviewer pool and worker threads: queueing theory, timelines,
deadlines from arrival, zombies.

The analytic check (``test_queue_waits_match_erlang_c``): review requests
arrive as a Poisson stream (rate ``lam``), each review takes an exponential
time (rate ``mu``, here a single model send with no tool calls) and ``N``
reviewer slots serve them first come, first served — an M/M/N queue. Erlang's
C formula gives the probability that a request waits, ``C(N, a)`` with
``a = lam / mu``, and the mean wait in queue ``C / (N mu - lam)``. The twin is
run ``R`` times with independent seeds; each replication drops a warm-up
prefix (the queue starts empty) and reports its mean wait and share of
requests that waited. The Erlang-C values must lie inside the 95 % confidence
interval of the replication means (mean ± 1.96 standard errors). The seeds
are fixed, so the check is deterministic.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from reviewlab.core._policy import TimeoutPolicy
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED
from reviewlab.engines.twin import SLOT_STATES, SLOT_TIMELINE_COLUMNS, simulate
from reviewlab.recording._schema import Call, Episode, Round

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _episode(
    id: str, rounds: list[Round], *, offset_sec: float = 0.0, deadline_sec: float | None = None
) -> Episode:
    return Episode(
        id=id,
        source="synthetic",
        started_at=T0 + timedelta(seconds=offset_sec),
        deadline_sec=deadline_sec,
        rounds=rounds,
    )


def _call(duration: float, *, completed: bool = True) -> Call:
    return Call(tool="search_code", duration_sec=duration, completed=completed)


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability that an arriving request waits in an M/M/N queue with
    offered load ``a = lam / mu``."""
    top = offered_load**servers / math.factorial(servers) * servers / (servers - offered_load)
    bottom = sum(offered_load**k / math.factorial(k) for k in range(servers)) + top
    return top / bottom


def test_queue_waits_match_erlang_c():
    """Poisson arrivals, exponential reviews, N slots: mean queue wait and P(wait)
    inside the replications' 95 % CI."""
    servers, lam, mu = 3, 2.4, 1.0
    replications, customers, warmup = 20, 2000, 400
    p_wait = erlang_c(servers, lam / mu)
    mean_wait = p_wait / (servers * mu - lam)
    waits, shares = [], []
    for rep in range(replications):
        service = np.random.default_rng((rep, 99)).exponential(1.0 / mu, customers)
        corpus = [_episode(f"r{i}", [Round(send_sec=float(s))]) for i, s in enumerate(service)]
        result = simulate(corpus, slots=servers, arrivals="poisson", arrival_rate=lam, seed=rep)
        queued = result.episodes["queue_wait_sec"].to_numpy()[warmup:]
        waits.append(queued.mean())
        shares.append((queued > 0).mean())
    for values, expected in ((np.array(waits), mean_wait), (np.array(shares), p_wait)):
        half_width = 1.96 * values.std(ddof=1) / math.sqrt(replications)
        assert abs(values.mean() - expected) <= half_width, (values.mean(), expected, half_width)


def test_erlang_c_formula_matches_known_values():
    """The helper reproduces textbook values (one server: C = rho; two servers at a=1: C = 1/3)."""
    assert erlang_c(1, 0.7) == pytest.approx(0.7)
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)


def test_slot_timelines_tile_the_run_with_busy_silent_and_idle():
    """Each slot's intervals are contiguous from 0 to the horizon; busy time
    equals the model sends served."""
    corpus = [
        _episode(
            f"e{i}",
            [Round(send_sec=2.0, calls=[_call(1.0), _call(0.5)]), Round(send_sec=1.0)],
            offset_sec=3.0 * i,
        )
        for i in range(7)
    ]
    result = simulate(corpus, TimeoutPolicy.uniform(10.0), slots=2)
    slots = result.slots
    assert slots is not None and tuple(slots.columns) == SLOT_TIMELINE_COLUMNS
    assert set(slots["state"]) <= set(SLOT_STATES)
    horizon = result.episodes["wall_sec"].add(result.episodes["arrival_sec"]).max()
    for _slot_id, frame in slots.groupby("slot_id"):
        starts, ends = frame["start_sec"].to_numpy(), frame["end_sec"].to_numpy()
        assert starts[0] == 0.0 and ends[-1] == pytest.approx(horizon)
        assert np.array_equal(starts[1:], ends[:-1])
    busy = slots[slots["state"] == "busy"]
    assert (busy["end_sec"] - busy["start_sec"]).sum() == pytest.approx(7 * 3.0)
    silent = slots[slots["state"] == "silent"]
    assert (silent["end_sec"] - silent["start_sec"]).sum() == pytest.approx(7 * 1.5)
    assert set(result.episodes["slot_id"]) == {"slot-0", "slot-1"}


def test_queueing_eats_into_the_inherited_deadline():
    """One slot, two requests at once: the second waits 11 s and its call
    finds its deadline already passed."""
    rounds = [Round(send_sec=10.0, calls=[_call(1.0)])]
    corpus = [_episode("a", rounds, deadline_sec=12.0), _episode("b", rounds, deadline_sec=12.0)]
    result = simulate(corpus, TimeoutPolicy.uniform(5.0), slots=1)
    assert list(result.episodes["queue_wait_sec"]) == [0.0, 11.0]
    assert list(result.calls["bound_sec"]) == [2.0, 0.0]
    assert list(result.calls["outcome"]) == ["executed", "error"]
    assert (
        result.summary["queue_wait_mean_sec"] == 5.5 and result.summary["queue_wait_share"] == 0.5
    )
    assert list(result.episodes["wall_sec"]) == [11.0, 21.0]


def test_a_wedged_zombie_starves_the_only_worker_thread():
    """K=1: a wedge holds the thread forever, so a later call waits out its bound
    in the queue and is abandoned."""
    corpus = [
        _episode("a", [Round(send_sec=0.0, calls=[_call(100.0, completed=False)])]),
        _episode("b", [Round(send_sec=1.0, calls=[_call(0.5)])]),
    ]
    starved = simulate(corpus, TimeoutPolicy.uniform(2.0), workers=1)
    row = starved.calls.iloc[1]
    assert (
        row["source_gap"] == SOURCE_GAP_ABANDONED and row["zombie_sec"] == 0.0
    )  # never ran: no zombie
    assert starved.episodes["wall_sec"].iloc[1] == 3.0
    free = simulate(corpus, TimeoutPolicy.uniform(2.0))
    assert free.calls["outcome"].iloc[1] == "executed"


def test_waiting_for_a_thread_counts_against_the_bound():
    """The bound clock starts at dispatch: queue time plus run time decides the fate,
    and the zombie keeps the rest."""
    corpus = [
        _episode("a", [Round(send_sec=0.0, calls=[_call(3.0)])]),
        _episode("b", [Round(send_sec=1.0, calls=[_call(1.0)])]),
        _episode("c", [Round(send_sec=4.0, calls=[_call(3.5)])]),
        _episode("d", [Round(send_sec=4.5, calls=[_call(1.2)])]),
    ]
    calls = simulate(corpus, TimeoutPolicy.uniform(4.0), workers=1).calls
    # b waits 2 s for a's thread, then runs 1 s: seen after 3 s, inside its bound.
    assert calls["outcome"].iloc[1] == "executed"
    # c gets the thread at 4 s and runs 3.5 s; d queues 3 s behind it, runs
    # 1.2 s: seen after 4.2 s > 4 s.
    assert calls["outcome"].iloc[2] == "executed"
    assert calls["source_gap"].iloc[3] == SOURCE_GAP_ABANDONED
    assert calls["zombie_sec"].iloc[3] == pytest.approx(0.2)


def test_a_zombie_that_got_a_thread_holds_it_until_it_returns():
    """Abandoned after queueing 1 s: the caller resumes at the bound, the
    zombie runs q + d - bound longer."""
    corpus = [
        _episode("a", [Round(send_sec=0.0, calls=[_call(2.0)])]),
        _episode("b", [Round(send_sec=1.0, calls=[_call(3.5)])]),
        _episode("c", [Round(send_sec=5.5, calls=[_call(0.1)])]),
    ]
    result = simulate(corpus, TimeoutPolicy.uniform(4.0), workers=1)
    b = result.calls.iloc[1]
    assert b["source_gap"] == SOURCE_GAP_ABANDONED and b["zombie_sec"] == pytest.approx(0.5)
    # c dispatches at 5.5 s while b's zombie holds the thread until 5.5 s: it gets it then and runs.
    assert result.calls["outcome"].iloc[2] == "executed"
    assert result.episodes["wall_sec"].iloc[2] == pytest.approx(5.6)
    assert result.summary["peak_loose_workers"] == 1


def test_poisson_arrivals_are_seeded_and_need_a_rate():
    """The same seed gives the same arrivals; a Poisson stream
    without a rate is an error naming it."""
    corpus = [_episode(f"e{i}", [Round(send_sec=1.0)]) for i in range(20)]
    one = simulate(corpus, slots=2, arrivals="poisson", arrival_rate=0.5, seed=3).episodes[
        "arrival_sec"
    ]
    two = simulate(corpus, slots=2, arrivals="poisson", arrival_rate=0.5, seed=3).episodes[
        "arrival_sec"
    ]
    three = simulate(corpus, slots=2, arrivals="poisson", arrival_rate=0.5, seed=4).episodes[
        "arrival_sec"
    ]
    assert one.equals(two) and not one.equals(three)
    with pytest.raises(ValueError, match="arrival_rate"):
        simulate(corpus, slots=2, arrivals="poisson")
    with pytest.raises(ValueError, match="arrivals"):
        simulate(corpus, slots=2, arrivals="bursty")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workers"):
        simulate(corpus, workers=0)


def test_a_pool_without_contention_changes_no_outcome():
    """Plenty of slots and threads: every call's fate and timing equals the pool-free replay."""
    corpus = [
        _episode(
            f"e{i}",
            [Round(send_sec=1.0, calls=[_call(0.5 * i), _call(6.0)]), Round(send_sec=0.5)],
            offset_sec=2.0 * i,
            deadline_sec=9.0,
        )
        for i in range(6)
    ]
    free = simulate(corpus, TimeoutPolicy.uniform(4.0))
    pooled = simulate(corpus, TimeoutPolicy.uniform(4.0), slots=10, workers=50)
    assert free.calls.equals(pooled.calls)
    assert free.episodes["wall_sec"].equals(pooled.episodes["wall_sec"])
