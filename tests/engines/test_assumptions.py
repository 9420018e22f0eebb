"""What a replay assumes (docs/semantics.md, "What a replay assumes"): censoring, the model's
reaction, loss attributed to the policy.

Each test states a figure computed independently of the engines (by hand from
the recording, or from the recorded durations with NumPy) and checks every
engine against it.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewlab.core._policy import Narrowing, TimeoutPolicy
from reviewlab.engines._replay import replay, replay_bounds
from reviewlab.engines.real import default_time_scale
from reviewlab.recording._files import load_episodes
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.recording.interop import import_openhands
from reviewlab.resources import corpus_path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ENGINES = ("twin", "vectorized")


def _read(seconds: float, path: str = "a.py", lines: int = 10, completed: bool = True) -> Call:
    return Call(
        tool="read_file",
        args={"path": path},
        duration_sec=seconds,
        completed=completed,
        extent=Extent(path=path, start_line=1, end_line=lines),
    )


def _episode(rounds: list[Round], id: str = "e1", deadline_sec: float | None = None) -> Episode:
    return Episode(
        id=id,
        source="synthetic",
        slot="s1",
        started_at=T0,
        deadline_sec=deadline_sec,
        rounds=rounds,
    )


@pytest.fixture(scope="module")
def openhands() -> list[Episode]:
    """The real OpenHands log whose `python3 -m http.server` call was cut off at 30.58 s."""
    return import_openhands(FIXTURES / "openhands" / "basic_gui_mode.json")


@pytest.mark.parametrize("engine", ENGINES)
def test_wedge_makes_the_unbounded_replay_wait_forever(openhands, engine):
    """Under censored='wedge' the pre-fix loop never hears back: its
    silence is infinite, never finite."""
    unbounded = replay(openhands, narrowing=Narrowing.unbounded(), engine=engine)
    fixed = replay(openhands, TimeoutPolicy.ouroboros(), engine=engine)
    assert unbounded.summary["max_silence_sec"] == math.inf
    assert unbounded.summary["wall_max_sec"] == math.inf
    assert unbounded.summary["max_silence_sec"] >= fixed.summary["max_silence_sec"] == 600.0
    assert unbounded.assumptions["censored"] == "wedge" == fixed.assumptions["censored"]
    # The abandoned worker never returns either: infinite zombie time, counted, not summed away.
    assert fixed.summary["zombie_sec"] == math.inf and fixed.summary["wedged_zombies"] == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_observed_returns_the_censored_call_when_the_recording_last_saw_it(openhands, engine):
    """Under 'observed' nothing is abandoned by ouroboros and the replay is the recorded episode."""
    (episode,) = openhands
    recorded_wall = sum(r.send_sec for r in episode.rounds) + sum(
        c.duration_sec for c in episode.calls
    )
    for narrowing in (Narrowing.unbounded(), Narrowing()):
        result = replay(
            openhands, TimeoutPolicy.ouroboros(), narrowing, engine=engine, censored="observed"
        )
        assert result.summary["wall_max_sec"] == pytest.approx(recorded_wall, abs=1e-9)
        assert result.summary["max_silence_sec"] == pytest.approx(30.58023)
        assert result.summary["zombie_sec"] == 0.0


def test_bounds_put_both_ends_side_by_side(openhands):
    """replay_bounds: the optimistic end is 'observed', the
    pessimistic 'wedge', every metric paired."""
    both = replay_bounds(openhands, TimeoutPolicy.ouroboros(), engine="vectorized")
    frame = both.summary
    assert list(frame.columns) == ["optimistic", "pessimistic"]
    assert frame.loc["wall_max_sec", "optimistic"] < frame.loc["wall_max_sec", "pessimistic"]
    assert frame.loc["zombie_sec", "pessimistic"] == math.inf
    assert both.optimistic.assumptions["censored"] == "observed"
    assert both.pessimistic.assumptions["censored"] == "wedge"
    assert both.assumptions["censored"] == "bounds"
    with pytest.raises(ValueError, match="censored"):
        replay_bounds(openhands, censored="impute")


@pytest.fixture(scope="module")
def bundled() -> list[Episode]:
    """The bundled 1,000-episode synthetic corpus."""
    return list(load_episodes(corpus_path()))


def _line_split(episodes: list[Episode], bound: float) -> tuple[float, float, float]:
    """Timeout and inherent loss under a uniform bound, without deadlines, computed by hand.

    Per episode, in call order: a read that fails by itself loses its lines
    (inherent); a call outliving the bound is abandoned (a read's lines are
    timeout loss) and every later executed read is withheld from credit
    (timeout loss). Returns (timeout, inherent, requested) line totals.
    """
    timeout = inherent = requested = 0
    for episode in episodes:
        abandoned = False
        for call in episode.calls:
            duration = call.returned_after_sec if call.returned_after_sec else call.duration_sec
            done = call.completed or call.returned_after_sec is not None
            lines = call.requested_lines
            requested += lines
            gone = (not done) or duration > bound
            if gone:
                timeout += lines
                abandoned = True
            elif call.status == "error":
                inherent += lines
            elif abandoned:
                timeout += lines
    return timeout, inherent, requested


@pytest.mark.parametrize("engine", ENGINES)
def test_loss_is_split_between_the_timeout_and_the_reads_themselves(bundled, engine):
    """Unbounded: timeout loss exactly 0. Uniform 1 s: timeout loss > 0 and the parts add up."""
    unbounded = replay(bundled, narrowing=Narrowing.unbounded(), engine=engine)
    assert unbounded.summary["timeout_coverage_loss_rate"] == 0.0
    assert unbounded.summary["inherent_coverage_loss_rate"] == pytest.approx(
        unbounded.summary["coverage_loss_rate"]
    )
    tight = replay(bundled, TimeoutPolicy.uniform(1.0), Narrowing("none"), engine=engine)
    s = tight.summary
    timeout, inherent, requested = _line_split(bundled, 1.0)
    assert s["timeout_coverage_loss_rate"] == pytest.approx(timeout / requested) and timeout > 0
    assert s["inherent_coverage_loss_rate"] == pytest.approx(inherent / requested)
    assert s["timeout_coverage_loss_rate"] + s["inherent_coverage_loss_rate"] == pytest.approx(
        s["coverage_loss_rate"]
    )
    per_tool = tight.per_tool().set_index("tool")
    assert per_tool.loc["read_file", "timeout_lost_lines"] == timeout


def _reaction_corpus() -> list[Episode]:
    """One episode whose first read (5 s) outlives a 2 s bound, then reads the same path again."""
    return [
        _episode(
            [
                Round(send_sec=1.0, calls=[_read(5.0, "a.py"), _read(0.5, "b.py")]),
                Round(send_sec=2.0, calls=[_read(0.5, "a.py"), _read(0.5, "b.py")]),
                Round(send_sec=1.0),
            ]
        )
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_reissue_asks_again_once_in_a_new_round(engine):
    """reissue: one extra send (1 s, as long as the round's) and the 5
    s read again, abandoned at 2 s."""
    result = replay(
        _reaction_corpus(),
        TimeoutPolicy.uniform(2.0),
        Narrowing("none"),
        engine=engine,
        reaction="reissue",
    )
    calls = result.calls
    assert list(calls["call_index"]) == [0, 1, 4, 2, 3]  # the re-issue runs after its round
    assert list(calls["round"]) == [1, 1, 1, 2, 2]
    assert list(calls["source_gap"]) == [
        "native_tool_abandoned",
        "",
        "native_tool_abandoned",
        "",
        "",
    ]
    # 1 + 2 + 0.5, then the re-issue round: 1 + 2, then 2 + 0.5 + 0.5, then the final 1.
    assert result.summary["wall_max_sec"] == pytest.approx(1 + 2.5 + 3 + 2 + 1 + 1)
    assert result.summary["abandoned_call_rate"] == pytest.approx(2 / 5)
    assert result.assumptions["reaction"] == "reissue"
    # The re-issue asks for no lines of its own: lines asked for are the recorded ones.
    assert calls["requested_lines"].sum() == 40


@pytest.mark.parametrize("engine", ENGINES)
def test_skip_target_drops_later_reads_of_the_abandoned_path(engine):
    """skip_target: round 2's read of a.py is never issued; its lines are lost to the timeout."""
    result = replay(
        _reaction_corpus(),
        TimeoutPolicy.uniform(2.0),
        Narrowing("none"),
        engine=engine,
        reaction="skip_target",
    )
    calls = result.calls
    assert list(calls["outcome"]) == ["error", "executed", "withheld", "executed"]
    assert list(calls["source_gap"]) == ["native_tool_abandoned", "", "native_tool_skipped", ""]
    assert result.summary["wall_max_sec"] == pytest.approx(1 + 2.5 + 2 + 0.5 + 1)
    # a.py twice (abandoned, skipped); b.py twice, both after the abandonment, so withheld from
    # credit by the sticky rule: every line is lost, all of it to the timeout.
    assert result.summary["timeout_coverage_loss_rate"] == 1.0
    assert result.summary["inherent_coverage_loss_rate"] == 0.0
    skipped = calls[calls["source_gap"] == "native_tool_skipped"].iloc[0]
    assert skipped["start_sec"] == calls["start_sec"].iloc[3] and skipped["wait_sec"] == 0.0


@pytest.mark.parametrize("reaction", ["as_recorded", "reissue", "skip_target"])
def test_the_real_engine_reacts_as_the_twin_does(reaction):
    """The real replay model reacts to the timeout texts it is sent; outcomes match the twin's."""
    corpus = _reaction_corpus()
    twin = replay(corpus, TimeoutPolicy.uniform(2.0), Narrowing("none"), reaction=reaction)
    real = replay(
        corpus,
        TimeoutPolicy.uniform(2.0),
        Narrowing("none"),
        engine="real",
        reaction=reaction,
        time_scale=0.02,
    )
    columns = ["round", "call_index", "tool", "outcome", "source_gap", "credited_lines"]
    assert real.calls[columns].to_dict("records") == twin.calls[columns].to_dict("records")
    assert real.assumptions["reaction"] == reaction


def test_default_time_scale_keeps_the_overhead_near_one_percent():
    """The default scale solves events × overhead / (scale × seconds) = 1 % and is clipped."""
    corpus = _reaction_corpus()
    events = 3 + 4
    seconds = 1 + 2 + 1 + 5 + 0.5 + 0.5 + 0.5
    assert default_time_scale(corpus, overhead_sec=0.0002) == pytest.approx(
        events * 0.0002 / (0.01 * seconds)
    )
    assert default_time_scale(corpus, overhead_sec=1.0) == 1.0
    assert default_time_scale(corpus, overhead_sec=1e-12) == 1e-4


def test_the_real_engine_reports_its_overhead():
    """engine='real' states the scale it ran at and the overhead it measured."""
    result = replay(_reaction_corpus(), TimeoutPolicy.uniform(2.0), engine="real", time_scale=0.02)
    assert result.assumptions["time_scale"] == 0.02
    assert result.assumptions["overhead_per_call_sec"] > 0
    assert 0 < result.assumptions["overhead_share"] < 1


SECONDS = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 30.0])


@st.composite
def pool_free_corpora(draw):
    """Small corpora of episodes without deadlines of their own, with censored calls."""
    episodes = []
    for index in range(draw(st.integers(1, 4))):
        rounds = []
        for _ in range(draw(st.integers(1, 4))):
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                calls.append(
                    Call(
                        tool=draw(st.sampled_from(["read_file", "search_code", "query_code"])),
                        args={"path": draw(st.sampled_from(["a.py", "b.py"]))},
                        duration_sec=draw(SECONDS),
                        completed=draw(st.booleans()) or draw(st.booleans()),
                        status=draw(st.sampled_from(["ok", "ok", "error"])),
                    )
                )
            rounds.append(Round(send_sec=draw(SECONDS), calls=calls))
        episodes.append(
            Episode(
                id=f"p{index}",
                source="synthetic",
                slot="s",
                started_at=T0 + timedelta(seconds=index),
                rounds=rounds,
            )
        )
    return episodes


POLICIES = [TimeoutPolicy.uniform(1.0), TimeoutPolicy.uniform(5.0), TimeoutPolicy.ouroboros()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=pool_free_corpora(), censored=st.sampled_from(["wedge", "observed", "impute"]))
def test_a_bound_never_lengthens_wall_or_silence(corpus, censored):
    """Per call a bound only shortens the wait: no bounded policy beats
    unbounded on max wall/silence."""
    if censored == "impute" and all(not c.completed for e in corpus for c in e.calls):
        return  # nothing to estimate a distribution from
    for engine in ENGINES:
        free = replay(corpus, narrowing=Narrowing.unbounded(), engine=engine, censored=censored)
        for policy in POLICIES:
            bounded = replay(corpus, policy, Narrowing(), engine=engine, censored=censored)
            for key in ("wall_max_sec", "max_silence_sec"):
                assert bounded.summary[key] <= free.summary[key]
            # Independent check per episode: the unbounded wall is the recorded one (or infinite).
            walls = free.episodes.set_index("episode_id")["wall_sec"]
            for episode in corpus:
                waits = [
                    (c.duration_sec if c.completed else (math.inf if censored == "wedge" else None))
                    for c in episode.calls
                ]
                if censored == "observed":
                    expected = sum(r.send_sec for r in episode.rounds) + sum(
                        c.duration_sec for c in episode.calls
                    )
                    assert walls[episode.id] == pytest.approx(expected)
                elif censored == "wedge" and math.inf in waits:
                    assert walls[episode.id] == math.inf


@pytest.mark.parametrize("engine", [*ENGINES, "real"])
def test_skip_target_spares_reads_of_the_same_round(engine):
    """A read of the abandoned path in the same reply still runs; only later ones are skipped."""
    corpus = [
        _episode(
            [
                Round(send_sec=1.0, calls=[_read(5.0, "a.py"), _read(0.5, "a.py")]),
                Round(send_sec=1.0, calls=[_read(0.5, "a.py")]),
                Round(send_sec=1.0),
            ]
        )
    ]
    options = {"time_scale": 0.02} if engine == "real" else {}
    result = replay(
        corpus,
        TimeoutPolicy.uniform(2.0),
        Narrowing("none"),
        engine=engine,
        reaction="skip_target",
        **options,
    )
    assert list(result.calls["outcome"]) == ["error", "executed", "withheld"]
    assert list(result.calls["source_gap"]) == ["native_tool_abandoned", "", "native_tool_skipped"]
