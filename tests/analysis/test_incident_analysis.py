"""longest_silences names the slot, episode, round, tool, arguments and clock time of each long
silence, and what each candidate policy bounds it to."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from reviewlab.analysis._incident import (
    PRE_FIX,
    describe_silence,
    duration_words,
    longest_silences,
    recorded_silences,
)
from reviewlab.core._policy import Narrowing, TimeoutPolicy
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.resources import incident_path

T0 = datetime(2026, 3, 4, 10, 0, 0, tzinfo=UTC)


def small_corpus() -> list[Episode]:
    """Two hand-made episodes whose silences are known by arithmetic."""
    read = Call(
        tool="read_file",
        args={"path": "a.py"},
        duration_sec=1.0,
        extent=Extent(path="a.py", start_line=1, end_line=10),
    )
    slow = Call(tool="search_code", args={"pattern": "x"}, duration_sec=3.0)
    stuck = Call(tool="query_code", args={"query": "q"}, duration_sec=50.0, completed=False)
    first = Episode(
        id="e1",
        source="synthetic",
        slot="reviewer-1",
        started_at=T0,
        rounds=[
            Round(send_sec=2.0, calls=[read, slow]),  # silence 4 s from T0 + 2 s
            Round(send_sec=1.0, calls=[stuck]),  # silence 50 s from T0 + 2 + 4 + 1 s
        ],
        end_reason="wedged",
    )
    second = Episode(
        id="e2",
        source="synthetic",
        slot="reviewer-2",
        started_at=T0 + timedelta(minutes=5),
        rounds=[Round(send_sec=0.5, calls=[slow]), Round(send_sec=0.5)],
    )
    return [first, second]


def test_recorded_silences_are_the_rounds_call_time_from_the_recorded_clock():
    """Each round's silence is its calls' durations summed, beginning after its own send."""
    frame = recorded_silences(small_corpus())
    assert frame["rank"].tolist() == [1, 2, 3]
    assert frame[["episode_id", "round", "silence_sec"]].values.tolist() == [
        ["e1", 2, 50.0],
        ["e1", 1, 4.0],
        ["e2", 1, 3.0],
    ]
    top = frame.iloc[0]
    assert top["slot"] == "reviewer-1" and top["tool"] == "query_code"
    assert json.loads(top["args"]) == {"query": "q"}
    assert top["began_at"] == pd.Timestamp(T0 + timedelta(seconds=7.0))
    assert not top["completed"]
    second = frame.iloc[1]
    assert second["tool"] == "search_code" and second["round_calls"] == 2  # the longer call
    assert second["began_at"] == pd.Timestamp(T0 + timedelta(seconds=2.0))
    assert bool(second["completed"])


def test_each_candidate_bounds_the_silence_to_its_waits():
    """A uniform bound cuts each call at the bound: the round's silence is the sum of min(d, b)."""
    frame = longest_silences(
        small_corpus(),
        {"uniform 2 s": TimeoutPolicy.uniform(2.0), "uniform 60 s": TimeoutPolicy.uniform(60.0)},
        top=2,
    )
    assert frame[["episode_id", "round"]].values.tolist() == [["e1", 2], ["e1", 1]]
    # Round 2: the stuck call is cut at 2 s; round 1: 1 s + min(3, 2) s.
    assert frame["bounded_sec.uniform 2 s"].tolist() == [2.0, 1.0 + 2.0]
    # A 60 s bound cuts the stuck call (censored at 50 s, never returns under "wedge") at 60 s.
    assert frame["bounded_sec.uniform 60 s"].tolist() == [60.0, 4.0]
    assert frame.attrs["assumptions"]["censored"] == "wedge"
    assert frame.attrs["episodes"] == 2


def test_the_incident_day_names_reviewer_3_query_code_and_the_clock_time():
    """On the incident day the longest silence is reviewer-3's query_code, 26,160 s, begun at the
    clock time the recording implies; ouroboros bounds it to its query_code bound."""
    frame = longest_silences(incident_path(), top=3)
    top = frame.iloc[0]
    assert (top["slot"], top["tool"], top["silence_sec"]) == ("reviewer-3", "query_code", 26160.0)
    assert json.loads(top["args"]) == {"query": "callers of reserve_stock"}
    # The clock, computed here from the raw JSON: started_at + earlier sends and calls + this send.
    with open(incident_path(), encoding="utf-8") as handle:
        raw = next(
            json.loads(line) for line in handle if json.loads(line)["id"] == top["episode_id"]
        )
    offset = 0.0
    for rnd in raw["rounds"][: top["round"] - 1]:
        offset += rnd["send_sec"] + sum(call["duration_sec"] for call in rnd["calls"])
    offset += raw["rounds"][top["round"] - 1]["send_sec"]
    began = datetime.fromisoformat(raw["started_at"].replace("Z", "+00:00"))
    assert top["began_at"] == pd.Timestamp(began + timedelta(seconds=offset))
    bound = TimeoutPolicy.ouroboros().timeout_for(None, "query_code")
    assert top["bounded_sec.ouroboros"] == bound < top["silence_sec"]
    # The pre-fix policy never bounds it: at least what was recorded (infinite under a wedge).
    assert top[f"bounded_sec.{PRE_FIX}"] >= 26160.0
    assert frame["silence_sec"].is_monotonic_decreasing
    sentence = describe_silence(top)
    for needle in ("reviewer-3", "query_code", "26,160 s", "7 h 16 min", "09:41:17 UTC"):
        assert needle in sentence


def test_bad_arguments_are_named():
    """A non-positive top, a bad candidate and an unknown censoring mode name their parameter."""
    with pytest.raises(ValueError, match="top"):
        longest_silences(small_corpus(), top=0)
    with pytest.raises(TypeError, match="policies"):
        longest_silences(small_corpus(), {"x": "uniform:5"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="policies"):
        bad = {"x": (TimeoutPolicy.uniform(1.0), "inherit")}
        longest_silences(small_corpus(), bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="censored"):
        longest_silences(small_corpus(), censored="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no episodes"):
        longest_silences([])


def test_candidates_may_carry_their_narrowing():
    """A (policy, narrowing) pair is replayed with that narrowing: unbounded waits the full call."""
    frame = longest_silences(
        small_corpus(),
        {"unbounded": (TimeoutPolicy.uniform(1.0), Narrowing.unbounded())},
        top=3,
        censored="impute",
    )
    by_round = frame.set_index(["episode_id", "round"])["bounded_sec.unbounded"]
    assert by_round[("e1", 1)] == 4.0 and by_round[("e2", 1)] == 3.0
    assert by_round[("e1", 2)] > 50.0  # imputed beyond its censoring time


def test_duration_words():
    """Durations read as seconds, then hours and minutes; infinity says it never returns."""
    assert duration_words(26160.0) == "26,160 s (7 h 16 min)"
    assert duration_words(600.0) == "600 s (10 min)"
    assert duration_words(3.0) == "3 s"
    assert duration_words(math.inf) == "∞ (never returns)"


def test_the_incident_command_names_slot_tool_silence_and_clock(capsys):
    """``reviewlab incident`` on the incident day prints reviewer-3, query_code, the 26,160 s
    silence and the clock time it began, with each candidate's bound."""
    from reviewlab.cli import main

    assert main(["incident", str(incident_path()), "--top", "3"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    for needle in ("reviewer-3", "query_code", "26,160 s", "2025-06-12 09:41:17 UTC", "600 s"):
        assert needle in first, needle
    assert "censored=wedge" in out
    assert main(["incident", str(incident_path()), "--policy", "uniform:30"]) == 0
    assert "uniform:30 30 s" in capsys.readouterr().out.splitlines()[0]
    assert main(["incident", str(incident_path()), "--top", "0"]) == 2
    assert "--top" in capsys.readouterr().err


def test_slot_table_names_the_recorded_slots():
    """Per-slot figures of a pool run are grouped by the recording's slot names, with every
    request counted under the slot that served it in the recording."""
    from collections import Counter

    from reviewlab.recording._files import load_episodes
    from reviewlab.ui._answers import slot_table

    incident = load_episodes(incident_path())
    run = replay_pool(incident)
    table = slot_table(run, episodes=incident).set_index("slot_id")
    assert dict(table["episodes"]) == dict(Counter(e.slot for e in incident))
    assert table.loc["reviewer-3", "max_silence_sec"] == 600.0
    assert set(slot_table(run)["slot_id"]) == {f"slot-{i}" for i in range(6)}


def replay_pool(episodes):
    """The incident day on the twin's six-slot pool under ouroboros."""
    from reviewlab.engines._replay import replay

    return replay(episodes, TimeoutPolicy.ouroboros(), Narrowing(), engine="twin", slots=6)
