"""Which clock ended each call, valid results dropped, and what servers did with cancels.

Expectations are computed by hand from each call's recorded duration and the policy's numbers;
the live part runs the demo server over stdio, whose tools misbehave on purpose.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

import pytest

from reviewlab.analysis._cancels import cancel_calls, cancel_faithfulness
from reviewlab.analysis._clocks import clock_summary, clock_table, ended_by_column
from reviewlab.cli import main
from reviewlab.core._clocks import call_clocks, ended_by
from reviewlab.core._policy import Bound, Policy, TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer, demo_server_command
from reviewlab.recording._files import save_episodes
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round
from reviewlab.recording.capture import episode_from_result
from reviewlab.ui.charts import cancel_chart, dropped_results_chart

POLICY = Policy(timeouts=TimeoutPolicy(default_sec=10.0), idle_sec={"watch": 2.0})


def episode(name: str, calls: list[Call], deadline: float | None = None) -> Episode:
    rounds = [Round(send_sec=1.0, calls=[c]) for c in calls] + [Round(send_sec=1.0)]
    return Episode.model_validate(
        {
            "schema": SCHEMA_VERSION_2,
            "id": name,
            "source": "live",
            "started_at": datetime(2026, 12, 1, tzinfo=UTC),
            "rounds": rounds,
            "deadline_sec": deadline,
            "meta": {"mcp": "demo"},
        }
    )


def corpus() -> list[Episode]:
    return [
        episode(
            "mixed",
            [
                Call(tool="fast", duration_sec=1.0),  # returns
                Call(tool="slow", duration_sec=14.0),  # the tool timeout (10 s) ends it
                Call(tool="watch", duration_sec=9.0, progress_sec=[0.5, 1.0]),  # idle at 3 s
                Call(
                    tool="gone",
                    duration_sec=10.0,
                    completed=False,
                    cancel_sent=True,
                    late_result_sec=4.0,
                    late_result_chars=12,
                    ended_by="tool_timeout",
                ),
            ],
        ),
        # Dispatched at 1 s (after the send) with a 5 s deadline: 4 s left, shorter than 10 s.
        episode("deadline", [Call(tool="slow", duration_sec=7.0)], deadline=5.0),
    ]


def test_clock_table_names_the_clock_that_ended_each_call():
    """Returned, tool timeout, idle, deadline; a recorded late answer and a replayed return
    past the bound are valid results dropped, with how late (hand-computed)."""
    table = clock_table(corpus(), POLICY).set_index(["episode_id", "call_index"])
    assert table["ended_by"].to_dict() == {
        ("mixed", 0): "returned",
        ("mixed", 1): "tool_timeout",
        ("mixed", 2): "idle",
        ("mixed", 3): "tool_timeout",
        ("deadline", 0): "deadline",
    }
    assert table.loc[("mixed", 2), "end_sec"] == 3.0 and table.loc[("mixed", 2), "idle_sec"] == 2
    assert table.loc[("deadline", 0), "deadline_sec"] == 4.0
    assert table.loc[("deadline", 0), "total_cap_sec"] == 4.0
    dropped = table["dropped_late_sec"].dropna().to_dict()
    # 14 s returned 4 s past its 10 s bound; 9 s returned 6 s past its idle end at 3 s; the
    # 7 s call 3 s past the deadline's 4 s; the live call's own late answer came 4 s late.
    assert dropped == {
        ("mixed", 1): 4.0,
        ("mixed", 2): 6.0,
        ("mixed", 3): 4.0,
        ("deadline", 0): 3.0,
    }
    assert table.loc[("mixed", 3), "recorded_ended_by"] == "tool_timeout"
    summary = clock_summary(table)
    assert summary["valid_results_dropped"] == 4 and summary["dropped_late_max_sec"] == 6.0


def test_a_hosts_ceiling_that_fires_first_is_named():
    """Under ouroboros (600 s) a 7 s call returns; a host whose tool bound is 5 s ends it."""
    table = clock_table(
        [episode("host", [Call(tool="query", duration_sec=7.0)])],
        Policy.ouroboros(),
        preset="openai-agents-sdk",
    )
    assert table.loc[0, "host_sec"] == 5.0
    assert (table.loc[0, "ended_by"], table.loc[0, "end_sec"]) == ("host_ceiling", 5.0)


def test_the_typescript_sdks_clocks_run_past_their_cap_on_progress():
    """Reports until 4.5 s then silence: a 3 s timeout reset on progress ends it at 7.5 s,
    2.5 s past a 5 s cap; the CLI prints that overrun."""
    calls = [Call(tool="watch", duration_sec=30.0, progress_sec=[1.0, 2.0, 3.0, 4.0, 4.5])]
    table = clock_table([episode("sdk", calls)], POLICY, typescript_sdk=(3.0, 5.0))
    assert (table.loc[0, "sdk_end_sec"], table.loc[0, "sdk_ended_by"]) == (7.5, "idle")
    assert table.loc[0, "sdk_overrun_sec"] == 2.5


def test_the_cli_prints_the_clocks_the_drops_and_the_overrun(tmp_path, capsys):
    """``reviewlab clocks`` prints the counts, the drops, the SDK overrun and the cancels, and
    writes the table; a malformed ``--typescript-sdk`` is one error line."""
    path = tmp_path / "c.jsonl"
    calls = [Call(tool="watch", duration_sec=30.0, progress_sec=[1.0, 2.0, 3.0, 4.0, 4.5])]
    save_episodes([*corpus(), episode("sdk", calls)], path)
    out = tmp_path / "clocks.parquet"
    POLICY.save(tmp_path / "policy.toml")
    argv = ["clocks", str(path), "--policy", str(tmp_path / "policy.toml")]
    assert main([*argv, "--typescript-sdk", "3,5", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ended by: idle 2, tool_timeout 2, deadline 1, returned 1" in printed
    assert "valid results dropped: 5" in printed
    assert "1 call(s) run past the cap, by up to 2.5 s" in printed
    assert "cancels to demo · gone: 1 sent, 0 stopped" in printed and out.is_file()
    assert main(["clocks", str(path), "--typescript-sdk", "3"]) == 2
    assert "--typescript-sdk: expected TIMEOUT,CAP" in capsys.readouterr().err


def test_call_clocks_lists_every_clock_that_applied():
    """A deadline-narrowed bound lists the timeout, the deadline's remainder, the idle timeout,
    the cap and the transport; the pre-fix bound only the transport."""
    bound = Bound(4.0, "deadline", 10.0, 4.0)
    assert call_clocks(bound, 2.0, 300.0) == {
        "tool_timeout": 10.0,
        "deadline": 4.0,
        "idle": 2.0,
        "total_cap": 4.0,
        "transport": 300.0,
    }
    assert call_clocks(Bound(None, "unbounded", None, None), None, 300.0) == {"transport": 300.0}
    assert ended_by(False, "deadline") == "returned" and ended_by(True, "idle") == "idle"


@pytest.fixture(scope="module")
def live_cancels(tmp_path_factory):
    """A live episode against the demo server: four calls abandoned at 0.3 s whose servers
    answer anyway, acknowledge, keep reporting progress, or go silent."""
    root = tmp_path_factory.mktemp("cancels")
    calls = [
        tool_call("ignore_cancel", {"after_sec": 0.5}, "a"),
        tool_call("honour_cancel", {}, "b"),
        tool_call("progress", {"steps": 6, "interval_sec": 0.1, "then": "wedge"}, "c"),
        tool_call("wedge", {}, "d"),
    ]
    model = ScriptedModel([{"tool_calls": [c]} for c in calls] + [{"content": "[]"}])
    with MCPServer(demo_server_command(root), cancel_watch_sec=30.0) as server:
        result = ReviewEpisode(
            root, model, policy=Policy.uniform(0.3), registry_factory=server.registry_factory
        ).execute()
        traces = [t for rnd in result.trace for t in rnd.calls]
        end = time.monotonic() + 30.0
        # States the server drives: the late answer, the acknowledgement, the last progress.
        while not (
            traces[0].result.notes.late_result_sec is not None
            and traces[1].result.notes.cancel_honoured_sec is not None
            and len(traces[2].result.notes.progress_sec) == 6
        ):
            assert time.monotonic() < end, "the server never answered"
            time.sleep(0.02)
    recorded = episode_from_result(result, id="live").model_copy(update={"meta": {"mcp": "demo"}})
    return recorded


def test_cancel_faithfulness_from_a_live_run(live_cancels):
    """One cancel per call: answered anyway, stopped and said so, kept working, silent."""
    calls = cancel_calls([live_cancels]).set_index("tool")
    assert calls["verdict"].to_dict() == {
        "ignore_cancel": "answered_anyway",
        "honour_cancel": "stopped",
        "progress": "kept_working",
        "wedge": "stopped",
    }
    assert calls.loc["ignore_cancel", "late_result_sec"] >= 0.5
    assert calls.loc["progress", "progress_after"] >= 1
    assert math.isnan(calls.loc["wedge", "stop_sec"])
    table = cancel_faithfulness([live_cancels]).set_index("tool")
    assert table["cancels_sent"].sum() == 4 and table["acknowledged"].sum() == 1
    assert table.loc["ignore_cancel", "answered_anyway"] == 1


def test_the_charts_draw_the_verdicts_and_the_drops(live_cancels):
    """The cancel chart stacks one bar per verdict and tool; the drops chart one point per
    valid result dropped."""
    figure = cancel_chart(cancel_faithfulness([live_cancels]))
    bars = [p for p in figure.axes[0].patches if p.get_width() > 0]
    assert len(bars) == 4
    drops = dropped_results_chart(clock_table(corpus(), POLICY))
    assert sum(len(c.get_offsets()) for c in drops.axes[0].collections) == 4


def test_every_engines_frame_says_which_clock_fired_and_they_agree():
    """On the conformance corpus under the idle-timeout cell, the twin's and the vectorized
    engine's call frames name the same clock for every call, and the counts are the frame's."""
    from reviewlab.engines._replay import replay
    from reviewlab.testing._conformance import PART_POLICIES, conformance_corpus

    episodes, policy = conformance_corpus(), PART_POLICIES["idle_sec"]
    twin = replay(episodes, policy, engine="twin").calls
    fast = replay(episodes, policy, engine="vectorized").calls
    keys = ["episode_id", "call_index"]
    left = twin.assign(ended_by=ended_by_column(twin)).sort_values(keys)
    right = fast.assign(ended_by=ended_by_column(fast)).sort_values(keys)
    assert left["ended_by"].tolist() == right["ended_by"].tolist()
    abandoned = int(twin["source_gap"].eq("native_tool_abandoned").sum())
    named = left["ended_by"].isin(["tool_timeout", "deadline", "idle"]).sum()
    assert named == abandoned and "idle" in set(left["ended_by"])


def test_on_a_tie_with_the_hosts_ceiling_the_tool_timeout_is_named():
    """Our tool timeout (5 s) and the openai-agents-sdk host's 5 s bound end a 7 s call at the
    same moment: the table names our own clock, ``tool_timeout``, not the host's ceiling."""
    table = clock_table(
        [episode("tie", [Call(tool="query", duration_sec=7.0)])],
        Policy.uniform(5.0),
        preset="openai-agents-sdk",
    )
    assert table.loc[0, "host_sec"] == 5.0
    assert (table.loc[0, "ended_by"], table.loc[0, "end_sec"]) == ("tool_timeout", 5.0)


def test_the_sdk_overrun_stops_when_the_call_returns():
    """The same reports (last at 4.5 s, so the SDK's clocks end it at 7.5 s) but the call
    returns at 6 s: it ran 6 - 5 = 1 s past the 5 s cap, not 2.5."""
    calls = [Call(tool="watch", duration_sec=6.0, progress_sec=[1.0, 2.0, 3.0, 4.0, 4.5])]
    table = clock_table([episode("sdk", calls)], POLICY, typescript_sdk=(3.0, 5.0))
    assert table.loc[0, "sdk_ended_by"] == "returned"
    assert table.loc[0, "sdk_overrun_sec"] == 1.0


def test_progress_at_the_cancel_instant_is_not_work_after_it():
    """A call cancelled at its 10 s bound whose last report came at exactly 10 s and nothing
    later: the server stopped (no report after the cancel); one report at 10.5 s kept it
    working half a second."""
    stopped = Call(
        tool="a",
        duration_sec=10.0,
        completed=False,
        cancel_sent=True,
        progress_sec=[5.0, 10.0],
    )
    working = Call(
        tool="b",
        duration_sec=10.0,
        completed=False,
        cancel_sent=True,
        progress_sec=[5.0, 10.5],
    )
    rows = cancel_calls([episode("cancels", [stopped, working])]).set_index("tool")
    assert rows.loc["a", "verdict"] == "stopped"
    assert rows.loc["b", "verdict"] == "kept_working"
