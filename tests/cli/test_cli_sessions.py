"""The commands that read a corpus take a gateway's recording folder, even while it is written.

The folder holds two sessions: ``a`` closed, written by hand, and ``b`` still open in a real
:class:`~reviewlab.recording.SessionJournal` with a half-written line after its last call. Each
command's output on the folder must equal its output on a JSONL file of the episodes computed
by hand from those sessions.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reviewlab.cli import main
from reviewlab.cli._errors import EXIT_USER_ERROR
from reviewlab.recording import Call, Episode, Round, SessionJournal, save_episodes
from reviewlab.ui import _dashboard as dashboard

START = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
NOTE = {"rounds": "inferred from the tool calls' overlap"}
X = {"tool": "read_file", "args": {}, "duration_sec": 2.0, "server": "fs"}
Y = {"tool": "search_code", "args": {}, "duration_sec": 700.0, "server": "fs"}
Z = {"tool": "list_files", "args": {}, "duration_sec": 1.0}


def recording(folder: Path) -> SessionJournal:
    """Session ``a`` (closed, by hand) and ``b`` (open, its writer mid-line); ``b``'s journal."""
    folder.mkdir()
    header = {"schema": "reviewlab.session/1", "id": "a", "started_at": "2026-12-01T06:00:00Z"}
    lines = [
        header,
        {"call": X, "at_sec": 0.5},
        {"call": Y, "at_sec": 3.0},
        {"end": {"end_reason": "final_answer", "ended_sec": 710.0}},
    ]
    (folder / "a.session.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    journal = SessionJournal(folder, id="b", started_wall=START.timestamp())
    journal.call(Call(**Z), at_sec=0.25)
    with journal.path.open("ab") as out:  # the writer is mid-way through its next line
        out.write(b'{"call":{"tool":"read_file","args":{},"dur')
    return journal


def by_hand() -> list[Episode]:
    """``a``: X alone from 0.5 (send 0.5), Y from 3.0 after X returned at 2.5 (send 0.5), then
    the end 710.0 - 703.0 = 7.0 s after Y returned; ``b``: Z from 0.25, no end (``log_end``)."""
    return [
        Episode(
            schema="reviewlab.episode/2", id="a", source="live", started_at=START, meta=NOTE,
            rounds=[Round(send_sec=0.5, calls=[Call(**X)]),
                    Round(send_sec=0.5, calls=[Call(**Y)]), Round(send_sec=7.0)],
        ),
        Episode(
            schema="reviewlab.episode/2", id="b", source="live", started_at=START, meta=NOTE,
            rounds=[Round(send_sec=0.25, calls=[Call(**Z)])], end_reason="log_end",
        ),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [["replay"], ["tune", "--min-calls", "1"], ["incident"], ["clocks"]],
    ids=["replay", "tune", "incident", "clocks"],
)
def test_a_command_on_a_folder_being_written_reads_the_sessions(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``reviewlab CMD DIR`` prints what ``reviewlab CMD FILE`` prints for the episodes computed
    by hand, while session ``b``'s writer is still open."""
    folder, expected = tmp_path / "gw", tmp_path / "expected.jsonl"
    journal = recording(folder)
    save_episodes(by_hand(), expected)
    code = main([argv[0], str(expected), *argv[1:]])
    assert code in (0, 1)  # tune says 1 when a budget is not met; never a usage error
    want = capsys.readouterr().out.replace(str(expected), "CORPUS")
    assert main([argv[0], str(folder), *argv[1:]]) == code
    got = capsys.readouterr().out.replace(str(folder), "CORPUS")
    assert got == want and len(got.splitlines()) > 3
    journal.close()


def test_replay_of_a_folder_counts_both_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two episodes and three calls: the open session's call is in, its half line is not."""
    recording(tmp_path / "gw")
    assert main(["replay", str(tmp_path / "gw")]) == 0
    rows = {
        " ".join(line.split()[:-1]): line.split()[-1]
        for line in capsys.readouterr().out.splitlines()
        if line.strip()
    }
    assert rows["episodes"] == "2" and rows["calls"] == "3"


def test_the_dashboard_opens_a_recording_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reviewlab dashboard DIR --dry-run`` hands the folder to Voilà's kernel, whose page
    explores both sessions."""
    folder = tmp_path / "gw"
    recording(folder)
    assert main(["dashboard", str(folder), "--dry-run", "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{dashboard.CORPUS_ENV}={folder.resolve()} ") and "-m voila" in out
    monkeypatch.setenv(dashboard.CORPUS_ENV, str(folder.resolve()))
    explorer = dashboard.dashboard_explorer(chart=False)
    assert [ep.id for ep in explorer.episodes] == ["a", "b"]


def test_the_dashboard_takes_the_corpus_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CORPUS and --corpus together are one error line, before anything is read."""
    argv = ["dashboard", "x", "--corpus", "y", "--dry-run"]
    assert main(argv) == EXIT_USER_ERROR
    assert "give the corpus once" in capsys.readouterr().err
