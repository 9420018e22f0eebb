"""``reviewlab import`` of a folder: every file a format is recognised in, the rest listed with why.

The folder holds copies of shipped real logs (their episode and call counts are those of
``tests/fixtures/README.md``), a note, a broken JSON file, and the same log twice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewlab.cli import main
from reviewlab.recording import load_episodes
from reviewlab.recording.interop import import_folder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Two OpenHands logs, a SWE-agent trajectory twice, a note and a broken JSON file."""
    root = tmp_path / "logs"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    shutil.copy(FIXTURES / "openhands" / "basic.json", root / "basic.json")
    shutil.copy(FIXTURES / "openhands" / "basic_gui_mode.json", root / "a" / "gui.json")
    traj = FIXTURES / "swe_agent" / "6e44b9__sweagenttestrepo-1c2844.traj"
    shutil.copy(traj, root / "a" / traj.name)
    shutil.copy(traj, root / "b" / traj.name)
    (root / "NOTES.md").write_text("# notes\n")
    (root / "b" / "broken.json").write_text('{"eval": {"task": "t"}, "samples": []}')
    (root / ".hidden.json").write_text("not read")
    return root


def test_every_recognised_file_is_read_and_the_rest_listed(folder: Path) -> None:
    """Four logs read (1 + 1 + 1 + 1 episodes), two files skipped with their reasons."""
    result = import_folder(folder)
    read = {path.relative_to(folder).as_posix(): (fmt, n) for path, fmt, n in result.imported}
    assert read == {
        "basic.json": ("openhands", 1),
        "a/gui.json": ("openhands", 1),
        "a/6e44b9__sweagenttestrepo-1c2844.traj": ("swe_agent", 1),
        "b/6e44b9__sweagenttestrepo-1c2844.traj": ("swe_agent", 1),
    }
    skipped = {path.relative_to(folder).as_posix(): why for path, why in result.skipped}
    assert set(skipped) == {"NOTES.md", "b/broken.json"}
    assert "unknown format" in skipped["NOTES.md"]
    assert "samples" in skipped["b/broken.json"] and "no samples" in skipped["b/broken.json"]
    assert sum(len(e.calls) for e in result.episodes) == 1 + 4 + 5 + 5


def test_the_same_log_twice_keeps_both_episodes(folder: Path) -> None:
    """The second copy's episode id is prefixed with its path in the folder."""
    ids = [episode.id for episode in import_folder(folder).episodes]
    assert len(ids) == len(set(ids)) == 4
    assert "b/6e44b9__sweagenttestrepo-1c2844.traj:6e44b9__sweagenttestrepo-1c2844" in ids


def test_the_cli_lists_each_file_and_writes_the_corpus(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line per file, the skipped ones with their reason; the corpus holds every episode."""
    out = tmp_path / "all.jsonl"
    assert main(["import", "auto", str(folder), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"{folder / 'NOTES.md'}: skipped: unknown format" in text
    assert f"{folder / 'b' / 'broken.json'}: skipped:" in text
    assert "imported 4 episode(s), 15 call(s) (1 censored) from 4 file(s)" in text
    assert "skipped 2 file(s)" in text
    assert len(load_episodes(out)) == 4


def test_a_folder_with_no_log_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing recognised: exit 2, the files listed, no output written."""
    (tmp_path / "only").mkdir()
    (tmp_path / "only" / "a.txt").write_text("hello")
    out = tmp_path / "o.jsonl"
    assert main(["import", "auto", str(tmp_path / "only"), "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert "a.txt: skipped: unknown format" in captured.out
    assert "no file in this folder is a log reviewlab reads" in captured.err
    assert not out.exists()


def test_a_format_named_for_a_folder_skips_the_others(folder: Path) -> None:
    """``format="swe_agent"`` reads the trajectories and skips the OpenHands logs by reason."""
    result = import_folder(folder, "swe_agent")
    assert [fmt for _, fmt, _ in result.imported] == ["swe_agent", "swe_agent"]
    assert len(result.skipped) == 4


def test_a_fresh_process_imports_the_shipped_framework_logs(tmp_path: Path) -> None:
    """A clean install reads the shipped zstd .eval and mini-swe-agent trajectory from the CLI."""
    for name, completed in (
        ("inspect_ai-0.3.285_bash-timeout.eval", [True, True, False]),
        ("mini-swe-agent-2.4.6_timeout.traj.json", [True, False, True]),
    ):
        out = tmp_path / f"{name}.jsonl"
        argv = ["import", "auto", f"bundled:real-logs/frameworks/{name}", "-o", str(out)]
        done = subprocess.run(
            [sys.executable, "-m", "reviewlab", *argv], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "imported 1 episode(s), 3 call(s) (1 censored)" in done.stdout
        assert [c.completed for c in load_episodes(out)[0].calls] == completed


@pytest.mark.parametrize(
    ("magic", "name"),
    [(b"\x1f\x8b\x08\x00", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"BZh91AY", "bzip2")],
)
def test_a_compressed_log_is_one_line_naming_the_compression(
    magic: bytes, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A whole-file compression no importer reads: exit 2, one line naming it and the file."""
    path = tmp_path / "run.json.x"
    path.write_bytes(magic + b"rest of the stream")
    assert main(["import", "auto", str(path), "-o", str(tmp_path / "o.jsonl")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{path}: unknown format: {name}-compressed data: decompress it first" in line
