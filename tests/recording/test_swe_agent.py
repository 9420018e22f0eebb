"""SWE-agent trajectories and format auto-detection (``reviewlab import auto``)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from reviewlab.cli import main
from reviewlab.recording._files import load_episodes
from reviewlab.recording.interop import (
    FORMATS,
    ImportFormatError,
    UnknownFormatError,
    detect_format,
    import_auto,
    import_swe_agent,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TEST_REPO = FIXTURES / "swe_agent" / "6e44b9__sweagenttestrepo-1c2844.traj"
MARSHMALLOW = FIXTURES / "swe_agent" / "marshmallow-code__marshmallow-1867.traj"
# The shared folder of real logs sits beside the repository (locally and in CI).
EXTERNAL = Path(__file__).resolve().parents[3] / "shared" / "external"


def test_test_repo_trajectory_durations_match_the_hand_computed_figures():
    """The 5 steps import as 5 calls whose durations are the steps' execution_time values."""
    (episode,) = import_swe_agent(TEST_REPO)
    calls = episode.calls
    assert [c.tool for c in calls] == ["search_code", "read_file", "edit", "run_command", "submit"]
    durations = [c.duration_sec for c in calls]
    assert min(durations) == pytest.approx(0.2692, abs=1e-4)
    assert max(durations) == pytest.approx(0.4936, abs=1e-4)
    assert statistics.median(durations) == pytest.approx(0.2926, abs=1e-4)
    assert all(c.completed for c in calls)
    assert episode.source == "swe_agent"
    assert episode.end_reason == "final_answer"
    assert [len(r.calls) for r in episode.rounds] == [1, 1, 1, 1, 1, 0]
    assert episode.meta["api_calls"] == "5"
    assert "SyntaxError" in episode.task


def test_marshmallow_trajectory_has_eleven_calls_in_range():
    """The replayed demonstration imports as 11 calls, 0.2166–0.9785 s, median 0.2396 s."""
    (episode,) = import_swe_agent(MARSHMALLOW)
    durations = [c.duration_sec for c in episode.calls]
    assert len(durations) == 11
    assert (min(durations), max(durations)) == pytest.approx((0.2166, 0.9785), abs=1e-4)
    assert statistics.median(durations) == pytest.approx(0.2396, abs=1e-4)
    assert [c.tool for c in episode.calls][3] == "list_files"  # `ls -F`


def test_cancelled_step_is_censored_and_missing_timing_is_refused(tmp_path):
    """SWE-agent's time-limit message censors the step; a step without timing is an error."""
    document = json.loads(TEST_REPO.read_text())
    document["trajectory"][3]["observation"] = (
        "The command 'python3 slow.py' was cancelled because it took more than 25 seconds. "
        "Please try a different command that completes more quickly."
    )
    document["trajectory"][3]["execution_time"] = 25.01
    cancelled = tmp_path / "cancelled.traj"
    cancelled.write_text(json.dumps(document))
    calls = import_swe_agent(cancelled)[0].calls
    assert [c.completed for c in calls] == [True, True, True, False, True]
    assert calls[3].duration_sec == pytest.approx(25.01)
    del document["trajectory"][1]["execution_time"]
    untimed = tmp_path / "untimed.traj"
    untimed.write_text(json.dumps(document))
    with pytest.raises(
        ImportFormatError, match=r"untimed\.traj: trajectory step 1: no execution_time"
    ):
        import_swe_agent(untimed)


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("swe_agent/6e44b9__sweagenttestrepo-1c2844.traj", "swe_agent"),
        ("openhands/basic.json", "openhands"),
        ("openhands/multi_swe_bench_examples_output.jsonl", "openhands"),
        ("inspect_ai/log_message_deduplication.eval", "inspect"),
        ("inspect_ai/2025-05-12T20-27-36-04-00_browser.json", "inspect"),
    ],
)
def test_detect_format_reads_the_content(relative, expected, tmp_path):
    """Each fixture is detected by its content, also when renamed to a neutral name."""
    source = FIXTURES / relative
    assert detect_format(source) == expected
    renamed = tmp_path / "log.data"
    renamed.write_bytes(source.read_bytes())
    assert detect_format(renamed) == expected


def test_unknown_and_binary_files_name_the_file_and_the_known_formats(tmp_path):
    """A foreign JSON file and a binary file each get one error naming the file and the formats."""
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"hello": "world"}')
    with pytest.raises(UnknownFormatError) as caught:
        import_auto(foreign)
    text = str(caught.value)
    assert str(foreign) in text and all(name in text for name in FORMATS)
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(UnknownFormatError, match=r"image\.png: unknown format: binary data"):
        import_auto(binary)


def _external_files() -> list[Path]:
    """Every file of the shared real-log folder, else (outside the workplace) the fixture copies."""
    root = EXTERNAL if EXTERNAL.is_dir() else FIXTURES
    return sorted(path for path in root.rglob("*") if path.is_file())


@pytest.mark.parametrize("source", _external_files(), ids=lambda path: path.name)
def test_import_auto_on_each_external_file_imports_it_or_says_why_in_one_line(
    source, tmp_path, capsys
):
    """`reviewlab import auto FILE` either writes the episodes or prints one error line."""
    out = tmp_path / "out.jsonl"
    status = main(["import", "auto", str(source), "-o", str(out)])
    captured = capsys.readouterr()
    if status == 0:
        episodes = load_episodes(out)
        assert episodes and all(episode.calls for episode in episodes)
        assert "imported" in captured.out and captured.err == ""
    else:
        assert status == 2 and not out.exists()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and str(source) in lines[0], captured.err


def test_the_known_external_files_import_and_the_two_untimed_ones_are_refused(tmp_path, capsys):
    """Of the fixture copies, only the untimed ones (Inspect's schema fixture, SWE-agent's 0.x
    trajectory) and the README are refused."""
    refused = []
    for source in sorted(
        path for path in FIXTURES.rglob("*") if path.is_file() and path.name != "LICENSES.md"
    ):
        if main(["import", "auto", str(source), "-o", str(tmp_path / "o.jsonl")]) != 0:
            refused.append(source.name)
    capsys.readouterr()
    assert refused == ["README.md", "log_tool_call_error.json", "networking_1.traj"]


def test_the_older_trajectory_format_is_refused_by_name():
    """SWE-agent's 0.x trajectories (2024-09) carry no execution_time: refused naming the step."""
    with pytest.raises(
        ImportFormatError, match=r"networking_1\.traj: trajectory step 0: no execution_time"
    ):
        import_swe_agent(FIXTURES / "swe_agent" / "networking_1.traj")


def test_a_traj_given_as_openhands_gets_a_hint_to_the_right_format(tmp_path, capsys):
    """A wrong explicit format still fails, but its one error line names the likely format."""
    out = tmp_path / "x.jsonl"
    assert main(["import", "openhands", str(TEST_REPO), "-o", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(TEST_REPO) in line and "looks like swe_agent" in line and not out.exists()
