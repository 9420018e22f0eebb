"""Importers on real logs: call counts, durations and censoring checked
against hand-computed figures.

The figures come from ``tests/fixtures/README.md`` (itself from the external
fixtures' README): durations are observation − action timestamps (OpenHands)
and ``completed − timestamp`` (Inspect).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reviewlab.recording import load_episodes, save_episodes
from reviewlab.recording.interop import (
    ImportFormatError,
    classify_command,
    import_inspect,
    import_openhands,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OPENHANDS = FIXTURES / "openhands"
INSPECT = FIXTURES / "inspect_ai"
BROWSER = INSPECT / "2025-05-12T20-27-36-04-00_browser.json"
VITALS = INSPECT / "2025-04-07T11-00-30-05-00_arithmetic-with-tool_gKECTBvzvzgtPqQCd3cirF.json"


def durations(episodes) -> list[float]:
    return sorted(call.duration_sec for ep in episodes for call in ep.calls)


def test_openhands_basic_has_one_edit_then_finish() -> None:
    """basic.json: one str_replace_editor create of 0.0369 s, then a final-answer round."""
    (ep,) = import_openhands(OPENHANDS / "basic.json")
    assert (ep.id, ep.source, ep.end_reason) == ("basic", "openhands", "final_answer")
    assert [c.tool for c in ep.calls] == ["str_replace_editor"]
    assert durations([ep]) == [pytest.approx(0.0369, abs=5e-5)]
    assert ep.rounds[-1].calls == []


def test_openhands_gui_mode_censors_the_no_output_timeout() -> None:
    """basic_gui_mode.json: 4 calls; the http.server run (exit_code -1) is censored at 30.58 s."""
    (ep,) = import_openhands(OPENHANDS / "basic_gui_mode.json")
    calls = ep.calls
    assert len(calls) == 4
    assert [c.tool for c in calls] == [
        "run_command",
        "str_replace_editor",
        "str_replace_editor",
        "run_command",
    ]
    censored = [c for c in calls if not c.completed]
    assert len(censored) == 1
    assert censored[0].duration_sec == pytest.approx(30.5802, abs=5e-5)
    assert "http.server" in censored[0].args["command"]
    assert durations([ep])[0] == pytest.approx(0.0341, abs=5e-5)
    # The median of the README, 0.3503 s, is the mean of the middle pair 0.0423 and 0.6584.
    assert durations([ep])[1:3] == pytest.approx([0.0423, 0.6584], abs=5e-5)
    assert ep.started_at.isoformat() == "2025-01-20T20:29:13.519638+00:00"
    assert ep.rounds[1].send_sec == pytest.approx(13.226346)  # 20:29:35.699033 → 20:29:48.925379


def test_openhands_wrong_initial_state_maps_views_and_runs() -> None:
    """wrong_initial_state.json: directory views become list_files,
    the mv a run_command; 3 calls."""
    (ep,) = import_openhands(OPENHANDS / "wrong_initial_state.json")
    assert [c.tool for c in ep.calls] == ["list_files", "run_command", "list_files"]
    assert durations([ep]) == pytest.approx([0.0208, 0.0355, 0.6488], abs=5e-5)
    assert all(c.completed for c in ep.calls)


def test_openhands_multi_swe_bench_has_103_calls_in_three_episodes() -> None:
    """The Multi-SWE-bench output: 22 + 32 + 49 calls, 0.0010–265.4630 s, none censored."""
    episodes = import_openhands(OPENHANDS / "multi_swe_bench_examples_output.jsonl")
    assert [ep.id for ep in episodes] == [
        "ponylang__ponyc-4595",
        "ponylang__ponyc-4593",
        "ponylang__ponyc-4588",
    ]
    assert [len(ep.calls) for ep in episodes] == [22, 32, 49]
    assert durations(episodes)[0] == pytest.approx(0.0010, abs=5e-5)
    assert durations(episodes)[-1] == pytest.approx(265.4630, abs=5e-5)
    assert all(c.completed for ep in episodes for c in ep.calls)
    assert [ep.end_reason for ep in episodes] == ["final_answer", "final_answer", "log_end"]
    longest = max((c for ep in episodes for c in ep.calls), key=lambda c: c.duration_sec)
    assert "apt-get install -y llvm-dev" in longest.args["command"]
    assert episodes[0].meta["model"] == "openai/openrouter-llama-4-maverick"


def test_openhands_reads_carry_the_extent_asked_for() -> None:
    """A view with view_range [650, 700] is read_file with that extent; a
    whole-file view uses the lines shown."""
    episodes = import_openhands(OPENHANDS / "multi_swe_bench_examples_output.jsonl")
    reads = [c for c in episodes[0].calls if c.tool == "read_file"]
    assert len(reads) == 6
    ranged = [c for c in reads if c.args.get("view_range") == [650, 700]]
    assert ranged[0].extent is not None
    assert (ranged[0].extent.start_line, ranged[0].extent.end_line) == (650, 700)
    whole = reads[0]
    assert whole.args["view_range"] is None and whole.extent is not None
    # OpenHands clipped this whole-file view at line 627 ("<response clipped>"): the lines shown.
    assert (whole.extent.start_line, whole.extent.end_line) == (1, 627)
    assert whole.extent.path.endswith("src/libponyc/ast/parser.c")


def test_inspect_browser_log_times_four_calls() -> None:
    """The browser eval: 4 web_browser calls, 1.2703–4.3176 s, and 5
    rounds (the last one answers)."""
    (ep,) = import_inspect(BROWSER)
    assert (ep.id, ep.source, ep.end_reason) == ("browser:1:1", "inspect", "final_answer")
    assert [c.tool for c in ep.calls] == ["web_browser_go"] + ["web_browser_click"] * 3
    assert durations([ep]) == pytest.approx(
        [1.2703, 1.2778, 2.9945, 4.3176], abs=5e-5
    )  # median 2.1362
    assert [len(r.calls) for r in ep.rounds] == [1, 1, 1, 1, 0]
    assert ep.rounds[0].send_sec == pytest.approx(1.234979)
    assert ep.meta["model"] == "openai/gpt-4o-mini"


def test_inspect_eval_zip_maps_bash_ls_to_list_files() -> None:
    """The .eval archive: 5 bash ls calls become list_files, 0.0546–0.0934 s."""
    (ep,) = import_inspect(INSPECT / "log_message_deduplication.eval")
    assert [c.tool for c in ep.calls] == ["list_files"] * 5
    assert durations([ep])[0] == pytest.approx(0.0546, abs=5e-5)
    assert durations([ep])[2] == pytest.approx(0.0636, abs=5e-5)
    assert durations([ep])[-1] == pytest.approx(0.0934, abs=5e-5)
    assert all(c.args == {"cmd": "ls"} for c in ep.calls)


def test_inspect_vitals_log_has_two_samples() -> None:
    """The vitals log: two samples with one take_sum call each (0.0029 s and 0.0039 s)."""
    episodes = import_inspect(VITALS)
    assert [len(ep.calls) for ep in episodes] == [1, 1]
    assert durations(episodes) == pytest.approx([0.0029, 0.0039], abs=5e-5)
    assert {c.tool for ep in episodes for c in ep.calls} == {"take_sum"}


def test_inspect_log_without_events_is_refused() -> None:
    """The hand-written schema fixture has no events, hence no timings: a
    clear error, not empty episodes."""
    with pytest.raises(ImportFormatError, match="no events"):
        import_inspect(INSPECT / "log_tool_call_error.json")


def test_inspect_timeout_error_becomes_a_censored_call(tmp_path: Path) -> None:
    """A tool event with error.type 'timeout' is right-censored; another error is status error."""
    log = json.loads(BROWSER.read_text())
    tools = [e for e in log["samples"][0]["events"] if e["event"] == "tool"]
    tools[1]["error"] = {"type": "timeout", "message": "Command timed out"}
    tools[2]["error"] = {"type": "permission", "message": "denied"}
    changed = tmp_path / "timeout.json"
    changed.write_text(json.dumps(log))
    (ep,) = import_inspect(changed)
    assert [c.completed for c in ep.calls] == [True, False, True, True]
    assert [c.status for c in ep.calls] == ["ok", "ok", "error", "ok"]
    assert ep.calls[1].duration_sec == pytest.approx(1.2778, abs=5e-5)


def test_imported_episodes_survive_a_save_and_load(tmp_path: Path) -> None:
    """Every fixture's episodes are valid recorded episodes: saved and loaded back unchanged."""
    episodes = (
        import_openhands(OPENHANDS / "basic_gui_mode.json")
        + import_openhands(OPENHANDS / "multi_swe_bench_examples_output.jsonl")
        + import_inspect(BROWSER)
        + import_inspect(INSPECT / "log_message_deduplication.eval")
    )
    path = tmp_path / "imported.jsonl.gz"
    save_episodes(episodes, path)
    assert list(load_episodes(path)) == episodes


def test_bad_foreign_files_name_the_file_and_place(tmp_path: Path) -> None:
    """Unreadable input raises ImportFormatError naming the file and
    where, never a partial result."""
    bad = tmp_path / "bad.jsonl"
    shutil.copy(OPENHANDS / "multi_swe_bench_examples_output.jsonl", bad)
    with bad.open("a") as handle:
        handle.write("{not json\n")
    with pytest.raises(ImportFormatError, match=r"bad\.jsonl: line 4: invalid JSON"):
        import_openhands(bad)
    notlog = tmp_path / "x.json"
    notlog.write_text('{"hello": 1}')
    with pytest.raises(ImportFormatError, match="not an Inspect eval log"):
        import_inspect(notlog)
    broken_zip = tmp_path / "y.eval"
    broken_zip.write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(ImportFormatError, match="unreadable .eval"):
        import_inspect(broken_zip)


@pytest.mark.parametrize(
    ("command", "tool"),
    [
        ("ls -l /workspace", "list_files"),
        ("cd /repo && grep -rn foo src | head", "search_code"),
        ("find . -name '*.c'", "search_code"),
        ("git grep reserve", "search_code"),
        ("cat -n a.py", "read_file"),
        ("cd /workspace/todo-app && python3 -m http.server 8000", "run_command"),
        ("FOO=1 make test", "run_command"),
        ("", "run_command"),
    ],
)
def test_shell_commands_map_onto_our_tools(command: str, tool: str) -> None:
    """The first working program of a shell command decides which of our tools it stands for."""
    assert classify_command(command) == tool
