"""The vectorized engine gives exactly the twin's answers; the array forms of the
shared rules equal the scalar ones."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewlab.core import _metrics as metrics
from reviewlab.core._crediting import Crediting, abandons, abandons_array
from reviewlab.core._policy import Narrowing, TimeoutPolicy, resolve_bound
from reviewlab.core._quantiles import ReplacedValues
from reviewlab.engines._corpus import open_corpus
from reviewlab.engines._replay import replay
from reviewlab.engines.twin import simulate
from reviewlab.engines.vectorized import compile_corpus, replay_vectorized
from reviewlab.engines.vectorized._columns import compile_columns
from reviewlab.engines.vectorized._evaluation import Evaluation
from reviewlab.recording._files import save_episodes
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.recording.columnar import episodes_table
from reviewlab.recording.synth import synth_corpus
from reviewlab.testing._strategies import corpora as shared_corpora

START = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)
TOOLS = ("read_file", "list_files", "search_code", "query_code", "web_search", "run_command")
# Durations cluster on the policy values below so that returns exactly at a bound are common.
SECONDS = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0, 30.0, 119.0, 120.0, 121.0, 600.0, 1800.0]),
    st.floats(min_value=0.0, max_value=3000.0, allow_nan=False, allow_infinity=False),
)


def corpora() -> st.SearchStrategy[list[Episode]]:
    """The shared strategy on this file's tools and durations (clustered on the policies' values
    below) and its deadlines and slots."""
    return shared_corpora(
        tools=TOOLS,
        seconds=SECONDS,
        max_rounds=5,
        max_calls=4,
        deadlines=(0.0, 10.0, 130.0, 300.0, 900.0),
        slots=("slot-0", "slot-1", "slot-2"),
    )


POLICIES = st.sampled_from(
    [
        TimeoutPolicy.ouroboros(),
        TimeoutPolicy.uniform(1.0),
        TimeoutPolicy.uniform(120.0),
        TimeoutPolicy.ouroboros().scaled(0.05),
        TimeoutPolicy.ouroboros().with_tool_timeouts(read_file=2.0, search_code=30.0),
        TimeoutPolicy(
            default_sec=300.0,
            clamp_tools=("web_search", "read_file"),
            clamp_reserve_sec=20.0,
            override_tools=("run_command",),
            override_ceiling_sec=900.0,
        ),
    ]
)
NARROWINGS = st.one_of(
    st.just(Narrowing()),
    st.just(Narrowing("none")),
    st.just(Narrowing.unbounded()),
    st.builds(Narrowing, st.just("reserve"), st.sampled_from([0.0, 30.0, 200.0])),
    st.builds(lambda f: Narrowing("fraction", fraction=f), st.sampled_from([0.1, 0.5, 1.0])),
)


VIAS = ("episodes", "columns")
"""How a test compiles its corpus: from Episode objects, or from their Arrow columns."""


def compiled(episodes: list[Episode], via: str, censored: str = "wedge", seed: int = 0) -> Any:
    """The corpus compiled from Episode objects or from the columns of its Parquet table."""
    if via == "episodes":
        return compile_corpus(episodes, censored=censored, seed=seed)
    return compile_columns(episodes_table(episodes), censored=censored, seed=seed)


def assert_same(twin: Any, fast: Any) -> None:
    # Every column, the engines' call timing included, to the bit.
    assert tuple(fast.calls.columns) == metrics.CALL_FRAME_COLUMNS
    pd.testing.assert_frame_equal(twin.calls, fast.calls, check_exact=True)
    for name in (*metrics.CALL_TIMING_COLUMNS, "bound_sec", "zombie_sec"):
        assert np.array_equal(
            twin.calls[name].to_numpy(), fast.calls[name].to_numpy(), equal_nan=True
        ), name
    pd.testing.assert_frame_equal(twin.episodes, fast.episodes)
    assert twin.summary == fast.summary


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora(),
    policy=POLICIES,
    narrowing=NARROWINGS,
    censored=st.sampled_from(["wedge", "impute"]),
    seed=st.integers(0, 3),
)
@pytest.mark.parametrize("via", VIAS)
def test_vectorized_equals_twin_on_random_corpora(via, corpus, policy, narrowing, censored, seed):
    """Per-call outcomes, bounds, credited lines, episode rows and
    summary are identical to the twin's."""
    try:
        twin = simulate(corpus, policy, narrowing, censored=censored, seed=seed)
    except ValueError as exc:  # impute with no completed call: both engines must refuse alike
        with pytest.raises(ValueError, match="no call in the corpus ever completed"):
            fast = compiled(corpus, via, censored, seed)
            replay_vectorized(fast, policy, narrowing, censored=censored, seed=seed)
        assert "no call in the corpus ever completed" in str(exc)
        return
    fast = compiled(corpus, via, censored, seed)
    assert_same(twin, replay_vectorized(fast, policy, narrowing, censored=censored, seed=seed))


class CountingPolicy:
    """A policy that is not a TimeoutPolicy: 3 s for reads, 50 s for the rest."""

    def timeout_for(self, tools: Any, tool_name: str, tool_args: Any = None) -> float:
        return 3.0 if tool_name == "read_file" else 50.0


@settings(max_examples=40, deadline=None)
@given(corpus=corpora(), narrowing=NARROWINGS)
@pytest.mark.parametrize("via", VIAS)
def test_any_policy_object_is_replayed_exactly(via, corpus, narrowing):
    """A policy object that only has timeout_for is resolved per call and still matches the twin."""
    assert_same(
        simulate(corpus, CountingPolicy(), narrowing),
        replay_vectorized(compiled(corpus, via), CountingPolicy(), narrowing),
    )


@pytest.mark.parametrize("via", VIAS)
def test_compiled_corpus_is_reused_across_policies(via):
    """One compiled corpus replays many policies with the same answers as compiling afresh."""
    episodes = [
        Episode(
            id=f"e{i}",
            source="synthetic",
            started_at=START + timedelta(seconds=i),
            deadline_sec=100.0,
            rounds=[Round(send_sec=1.0, calls=[Call(tool="search_code", duration_sec=40.0 * i)])]
            * 3,
        )
        for i in range(4)
    ]
    corpus = compiled(episodes, via)
    for seconds in (10.0, 45.0, 200.0):
        policy = TimeoutPolicy.uniform(seconds)
        assert_same(simulate(episodes, policy, Narrowing()), corpus.result(policy, Narrowing()))
        assert corpus.summary(policy, Narrowing()) == corpus.result(policy, Narrowing()).summary


@pytest.mark.parametrize(
    "narrowing",
    [
        Narrowing(),
        Narrowing("none"),
        Narrowing("reserve", reserve_sec=60.0),
        Narrowing("fraction", fraction=0.5),
        Narrowing.unbounded(),
    ],
    ids=lambda n: n.mode,
)
@pytest.mark.parametrize("censored", ["wedge", "impute"])
@pytest.mark.parametrize("via", VIAS)
def test_vectorized_equals_twin_on_a_synthetic_corpus(via, narrowing, censored):
    """On hundreds of synthetic episodes (many settled by the deadline),
    frames and summary equal the twin's."""
    episodes = synth_corpus(400, seed=11)
    policy = TimeoutPolicy.ouroboros().with_tool_timeouts(read_file=0.05, search_code=1.0)
    corpus = compiled(episodes, via, censored, seed=3)
    fast = corpus.result(policy, narrowing)
    assert_same(simulate(episodes, policy, narrowing, censored=censored, seed=3), fast)
    assert corpus.summary(policy, narrowing) == fast.summary
    assert fast.summary["abandoned_call_rate"] > 0 or narrowing.mode == "unbounded"


@pytest.mark.parametrize("via", VIAS)
def test_deadline_chains_settle_exactly(via):
    """Abandonments that each shrink the next call's bound (fraction
    narrowing) settle to the twin's answer."""
    episodes = [
        Episode(
            id=f"e{i}",
            source="synthetic",
            started_at=START + timedelta(seconds=7 * i),
            deadline_sec=1000.0 + i,
            rounds=[
                Round(
                    send_sec=0.1 * i,
                    calls=[Call(tool="search_code", duration_sec=900.0 - j) for j in range(3)],
                )
                for _ in range(6)
            ],
        )
        for i in range(5)
    ]
    narrowing = Narrowing("fraction", fraction=0.5)
    fast = replay_vectorized(compiled(episodes, via), TimeoutPolicy.uniform(800.0), narrowing)
    assert_same(simulate(episodes, TimeoutPolicy.uniform(800.0), narrowing), fast)
    assert (fast.calls["bound_by"] == "deadline").all()
    for _, bounds in fast.calls.groupby("episode_id")["bound_sec"]:
        assert bounds.is_monotonic_decreasing and bounds.iloc[1] < bounds.iloc[0] < 800.0
    # Every call was abandoned, so every clock is a settled block's: each call starts once
    # the last wait ended (its start is measured from the arrival on the absolute clock,
    # hence equal only to rounding).
    assert (fast.calls["wait_sec"] == fast.calls["bound_sec"]).all()
    for _, calls in fast.calls.groupby("episode_id"):
        ends = (calls["start_sec"] + calls["wait_sec"]).to_numpy()
        assert (calls["start_sec"].to_numpy()[1:] >= ends[:-1] - 1e-9).all()


def test_summary_never_builds_the_call_timing(monkeypatch):
    """A sweep's summary() stops before the frames: the per-call start and
    wait columns are never computed."""
    corpus = compile_corpus(synth_corpus(60, seed=2, tail_scale=100.0))
    expected = corpus.result(TimeoutPolicy.uniform(5.0)).summary

    def refuse(self: Evaluation) -> np.ndarray:
        raise AssertionError("summary() computed the call timing")

    monkeypatch.setattr(Evaluation, "start_sec", property(refuse))
    monkeypatch.setattr(Evaluation, "wait_sec", property(refuse))
    for narrowing in (Narrowing(), Narrowing.unbounded()):
        corpus.summary(TimeoutPolicy.uniform(5.0), narrowing)
    assert corpus.summary(TimeoutPolicy.uniform(5.0)) == expected


@pytest.mark.parametrize("via", VIAS)
def test_frames_are_built_on_first_access(via, monkeypatch):
    """A vectorized result answers its summary without frames; they are built once, when read."""
    episodes = synth_corpus(80, seed=5, tail_scale=100.0)
    policy = TimeoutPolicy.uniform(2.0)
    twin = simulate(episodes, policy, Narrowing())
    import reviewlab.engines.vectorized._compiled as compiled_module

    built = []
    real = compiled_module.frames
    monkeypatch.setattr(
        compiled_module,
        "frames",
        lambda *a: built.append(1) or real(*a),  # type: ignore[func-returns-value]
    )
    fast = replay_vectorized(compiled(episodes, via), policy, Narrowing())
    assert fast.summary == twin.summary and not built and not fast.frames_built
    assert {k: v for k, v in fast.assumptions.items() if k != "engine"} == {
        k: v for k, v in twin.assumptions.items() if k != "engine"
    }
    assert_same(twin, fast)
    fast.per_tool()
    assert built == [1] and fast.frames_built


def test_replays_of_the_same_objects_compile_once(tmp_path):
    """The same episode objects reuse one compiled corpus; new objects, or a path, compile anew."""
    episodes = synth_corpus(30, seed=6)
    first = open_corpus(episodes).compiled("wedge", 0)
    assert open_corpus(list(episodes)).compiled("wedge", 0) is first
    assert open_corpus(episodes).compiled("observed", 0) is not first
    copies = [e.model_copy() for e in episodes]
    assert open_corpus(copies).compiled("wedge", 0) is not first
    save_episodes(episodes, tmp_path / "c.parquet")
    assert_same(
        simulate(episodes, TimeoutPolicy.uniform(1.0)),
        replay_vectorized(compile_columns(tmp_path / "c.parquet"), TimeoutPolicy.uniform(1.0)),
    )


def test_replay_dispatches_to_the_vectorized_engine():
    """replay(engine="vectorized") returns the vectorized engine's result, labelled as such."""
    episodes = [
        Episode(
            id="a",
            source="synthetic",
            started_at=START,
            rounds=[
                Round(send_sec=2.0, calls=[Call(tool="read_file", duration_sec=700.0)]),
                Round(),
            ],
        )
    ]
    result = replay(episodes, TimeoutPolicy.ouroboros(), engine="vectorized")
    assert result.engine == "vectorized"
    assert result.calls["bound_sec"].tolist() == [600.0]
    assert result.episodes["wall_sec"].tolist() == [602.0]


def test_unknown_option_and_mismatched_compiled_corpus_are_refused():
    """Options the engine does not know, and a corpus compiled for
    another censoring, are clear errors."""
    episodes = [Episode(id="a", source="synthetic", started_at=START)]
    with pytest.raises(ValueError, match="unsupported option"):
        replay_vectorized(episodes, None, None, slots_per_tool=3)
    with pytest.raises(ValueError, match="censored/seed"):
        replay_vectorized(compile_corpus(episodes), None, None, censored="impute")


def test_duplicate_episode_ids_are_refused():
    """Two episodes with one id are an error naming the position."""
    episode = Episode(id="same", source="synthetic", started_at=START)
    with pytest.raises(ValueError, match=r"episodes\[1\]\.id"):
        compile_corpus([episode, episode])


# -- array forms of the shared rules ------------------------------------------

REMAINING = st.one_of(
    st.none(),
    st.sampled_from([0.0, 1.0, 100.0, 120.0, 121.0, 600.0]),
    st.floats(0, 5000, allow_nan=False),
)
TOOL_SEC = st.one_of(st.sampled_from([0.0, 1.0, 120.0, 600.0]), st.floats(0, 5000, allow_nan=False))


@given(st.lists(st.tuples(TOOL_SEC, REMAINING), min_size=1, max_size=20), NARROWINGS)
def test_narrow_array_equals_narrow(pairs, narrowing):
    """Narrowing.narrow_array gives narrow's bound and deadline flag
    element by element (NaN = None)."""
    tool = np.array([p[0] for p in pairs])
    remaining = np.array([np.nan if p[1] is None else p[1] for p in pairs])
    sec, by_deadline = narrowing.narrow_array(tool, remaining)
    for (t, r), s, d in zip(pairs, sec, by_deadline, strict=True):
        bound = narrowing.narrow(t, r)
        assert (math.isnan(s) and bound.sec is None) or s == bound.sec
        assert bool(d) == (bound.by == "deadline")


@given(
    st.lists(st.tuples(TOOL_SEC.filter(lambda s: s > 0), REMAINING), min_size=1, max_size=20),
    st.sampled_from([0.0, 20.0, 120.0]),
)
def test_clamp_array_equals_timeout_for(pairs, reserve):
    """TimeoutPolicy.clamp_array gives timeout_for's clamped value for a clamp tool (NaN = None)."""
    base = np.array([p[0] for p in pairs])
    remaining = np.array([np.nan if p[1] is None else p[1] for p in pairs])
    clamped = TimeoutPolicy(clamp_tools=("web_search",), clamp_reserve_sec=reserve).clamp_array(
        base, remaining
    )
    for (b, r), c in zip(pairs, clamped, strict=True):
        policy = TimeoutPolicy(
            default_sec=b, clamp_tools=("web_search",), clamp_reserve_sec=reserve
        )
        assert c == policy.timeout_for(None, "web_search", remaining_sec=r)


@given(
    st.lists(
        st.tuples(TOOL_SEC, st.booleans(), st.one_of(st.none(), TOOL_SEC)), min_size=1, max_size=20
    )
)
def test_abandons_array_equals_abandons(triples):
    """abandons_array decides every call's fate as abandons does (a NaN bound is unbounded)."""
    duration = np.array([t[0] for t in triples])
    completed = np.array([t[1] for t in triples])
    bound = np.array([np.nan if t[2] is None else t[2] for t in triples])
    assert abandons_array(duration, completed, bound).tolist() == [abandons(*t) for t in triples]


def test_credited_lines_array_follows_the_sticky_rule():
    """Only executed reads before the episode's first abandonment are credited their lines."""
    outcomes = ["executed", "error", "executed", "executed"]
    abandoned_before = [False, False, True, False]
    requested = [10, 10, 10, 4]
    expected = []
    for outcome, before, lines in zip(outcomes, abandoned_before, requested, strict=True):
        crediting = Crediting()
        if before:
            crediting.note_abandoned()
        expected.append(crediting.credited_lines(outcome, lines))
    got = Crediting.credited_lines_array(
        np.array([o == "executed" for o in outcomes]),
        np.array(abandoned_before),
        np.array(requested),
    )
    assert got.tolist() == expected == [10, 0, 0, 4]


@given(st.sampled_from(TOOLS), st.sampled_from([None, 0, 5, 700, 5000, True, 2.5, "60", [1]]))
def test_args_key_and_clamps_agree_with_resolution(tool, override):
    """Calls with equal args_key resolve alike, and clamps() says
    exactly when the time left matters."""
    policy = TimeoutPolicy.ouroboros()
    args = {} if override is None else {"timeout": override}
    assert TimeoutPolicy.args_key(args) == TimeoutPolicy.args_key(
        {"timeout": override} if override is not None else None
    )
    tight = policy.timeout_for(None, tool, args, remaining_sec=130.0)
    loose = policy.timeout_for(None, tool, args, remaining_sec=None)
    assert (tight != loose) == policy.reads_clock(None, tool, args)
    assert (
        resolve_bound(policy, None, tool, args, narrowing=Narrowing("none"), remaining_sec=None).sec
        == loose
    )


def test_compile_corpus_refuses_what_the_twin_refuses():
    """Non-Episodes and repeated ids are refused with the twin's messages, naming the position."""
    episode = synth_corpus(1, seed=1)[0]
    with pytest.raises(TypeError, match=r"episodes\[1\]: expected a reviewlab Episode, got dict"):
        compile_corpus([episode, {"id": "x"}])
    repeat = r"episodes\[1\]\.id: duplicate episode id .* \(first on episodes\[0\]\)"
    with pytest.raises(ValueError, match=repeat):
        compile_corpus([episode, episode])
    with pytest.raises(ValueError, match=r"episodes\[1\]\.id"):
        simulate([episode, episode])


@pytest.mark.parametrize("scale", [0.02, 0.2, 1.0])
@pytest.mark.parametrize("via", VIAS)
def test_a_sparse_summary_reads_its_walls_from_the_static_ones_exactly(via, scale, monkeypatch):
    """With the sorted static walls and the settled episodes' changes standing for the walls
    (as on a large corpus), every summary figure equals the twin's."""
    import reviewlab.engines.vectorized._evaluation as evaluation

    monkeypatch.setattr(evaluation, "REPLACED_WALLS_FROM", 0)
    read = []
    walls = evaluation.Evaluation.walls
    monkeypatch.setattr(
        evaluation.Evaluation, "walls", lambda self: read.append(walls(self)) or read[-1]
    )
    episodes = synth_corpus(300, seed=5)
    policy = TimeoutPolicy.ouroboros().scaled(scale).with_tool_timeouts(read_file=2.0)
    corpus = compiled(episodes, via, "wedge", 0)
    for narrowing in (Narrowing(), Narrowing("reserve", reserve_sec=30.0)):
        assert corpus.summary(policy, narrowing) == simulate(episodes, policy, narrowing).summary
    assert any(isinstance(w, ReplacedValues) and w.added.size for w in read)
