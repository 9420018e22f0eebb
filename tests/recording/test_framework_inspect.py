"""Inspect AI's current release, run offline, and the ``.eval`` log it wrote imported.

The run: ``mockllm`` scripted to call Inspect's own ``bash`` tool (``timeout=1``) in the
``local`` sandbox three times, the third ``sleep 5`` past that timeout, then answer. The
importer's calls are checked against Inspect's own reading of its log
(``inspect_ai.log.read_eval_log``): every tool event's ``completed − timestamp`` and its
``error.type``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from backports.zstd import zipfile as zstd_zipfile

from reviewlab.cli import main
from reviewlab.recording import load_episodes
from reviewlab.recording.interop import import_auto, import_inspect

_RUN = textwrap.dedent(
    """
    import sys
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import bash

    def priced(output):  # usage given, so mockllm never asks tiktoken (a download) to count
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output

    outputs = [
        priced(ModelOutput.for_tool_call("mockllm/model", "bash", {"command": "cat task.txt"})),
        priced(ModelOutput.for_tool_call("mockllm/model", "bash", {"command": "ls"})),
        priced(ModelOutput.for_tool_call("mockllm/model", "bash", {"command": "sleep 5"})),
        priced(ModelOutput.from_content("mockllm/model", "reviewed")),
    ]
    task = Task(
        dataset=[Sample(input="review", target="reviewed", files={"task.txt": "hello"})],
        solver=[use_tools(bash(timeout=1)), generate()],
        scorer=includes(),
        sandbox="local",
    )
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = eval(task, model=model, log_dir=sys.argv[1], display="none")
    print(log.location)
    """
)


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``.eval`` file one offline Inspect run wrote (in a child process: Inspect patches
    :mod:`zipfile` on import, and the importer must not lean on that)."""
    logs = tmp_path_factory.mktemp("inspect-logs")
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(logs)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=logs,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip().splitlines()[-1].removeprefix("file://"))


def _inspect_record(path: Path) -> list[tuple[str, float, bool]]:
    """Each tool event as Inspect reads it: command, seconds, and whether it timed out."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    assert log.samples is not None
    rows = []
    for event in log.samples[0].events:
        if event.event == "tool":
            assert event.completed is not None
            seconds = (event.completed - event.timestamp).total_seconds()
            rows.append((event.arguments["command"], seconds, event.error is not None))
    return rows


def test_the_run_wrote_zstd_members(eval_log: Path) -> None:
    """The current release compresses its members with Zstandard (zip method 93)."""
    with open(eval_log, "rb") as handle:
        assert handle.read(4) == b"PK\x03\x04"
    with zipfile.ZipFile(eval_log) as archive:
        methods = {info.compress_type for info in archive.infolist()}
    assert methods == {93}


def test_every_call_matches_inspects_own_record(eval_log: Path) -> None:
    """Calls, durations and censoring equal Inspect's tool events, the killed sleep censored."""
    record = _inspect_record(eval_log)
    assert [command for command, _, _ in record] == ["cat task.txt", "ls", "sleep 5"]
    (episode,) = import_inspect(eval_log)
    calls = episode.calls
    assert [call.args["command"] for call in calls] == [command for command, _, _ in record]
    for call, (_, seconds, timed_out) in zip(calls, record, strict=True):
        assert call.duration_sec == pytest.approx(seconds, abs=1e-6)
        assert call.completed is not timed_out
    assert [call.tool for call in calls] == ["read_file", "list_files", "run_command"]
    assert calls[2].duration_sec >= 1.0  # killed at its 1 s timeout, not before
    assert episode.end_reason == "final_answer"
    assert [r.input_tokens for r in episode.rounds] == [10, 10, 10, 10]


def test_auto_detects_the_eval_archive(eval_log: Path) -> None:
    """``import_auto`` names the format ``inspect`` for the zstd archive."""
    found, episodes = import_auto(eval_log)
    assert found == "inspect"
    assert len(episodes) == 1


def test_a_fresh_process_imports_it_from_the_cli(eval_log: Path, tmp_path: Path) -> None:
    """``reviewlab import`` in a process that never imported Inspect reads the zstd log."""
    out = tmp_path / "inspect.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "reviewlab", "import", "auto", str(eval_log), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "imported 1 episode(s), 3 call(s) (1 censored)" in done.stdout
    assert [call.completed for call in load_episodes(out)[0].calls] == [True, True, False]


def _with_method(source: Path, target: Path, method: int) -> None:
    """A copy of a stored-member zip whose members claim compression ``method``."""
    with zstd_zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            new.writestr(info.filename, old.read(info), compress_type=zipfile.ZIP_STORED)
    data = bytearray(target.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        start = data.find(signature)
        while start >= 0:
            data[start + offset : start + offset + 2] = method.to_bytes(2, "little")
            start = data.find(signature, start + 4)
    target.write_bytes(bytes(data))


def test_an_unreadable_compression_is_one_line_and_exit_2(
    eval_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A member in a method nobody here decompresses (97) is one line naming it, exit 2."""
    odd = tmp_path / "odd.eval"
    _with_method(eval_log, odd, 97)
    status = main(["import", "auto", str(odd), "-o", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1
    assert "zip method 97" in err and "odd.eval" in err
    assert not (tmp_path / "o.jsonl").exists()


def test_zstd_without_a_reader_says_what_to_install(
    eval_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a Python without a zstd decompressor, the error names backports-zstd."""
    from reviewlab.recording.interop import ImportFormatError, _archive

    def missing() -> None:
        raise ImportError("No module named 'backports.zstd'")

    monkeypatch.setattr(_archive, "_zstd_decompress", missing)
    with pytest.raises(ImportFormatError, match=r"zstd \(zip method 93\).*backports-zstd"):
        import_inspect(eval_log)


def test_the_header_names_the_inspect_release(eval_log: Path) -> None:
    """The log records the Inspect release that wrote it, the one the extra pins."""
    from importlib.metadata import version

    from reviewlab.recording.interop._archive import read_members

    header = json.loads(read_members(eval_log, ["header.json"])["header.json"])
    assert header["eval"]["packages"]["inspect_ai"] == version("inspect_ai")


class _FramePerWrite:
    """A zstd compressor emitting one whole frame per write, as Inspect's writer does past
    200 MiB of input (zipfile's own reader stops at the first frame)."""

    def compress(self, data: bytes) -> bytes:
        from backports import zstd

        return zstd.compress(data)

    def flush(self) -> bytes:
        return b""


def test_a_member_of_several_zstd_frames_is_read_whole(
    eval_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same log rewritten with its sample in two zstd frames imports to the same episode."""
    from reviewlab.recording.interop._archive import read_members

    members = read_members(eval_log)
    module = zstd_zipfile
    framed = tmp_path / "framed.eval"
    with monkeypatch.context() as patch:
        patch.setattr(module, "_get_compressor", lambda *args, **kwargs: _FramePerWrite())
        with module.ZipFile(framed, "w", compression=93) as archive:
            for name, data in members.items():
                with archive.open(name, "w") as handle:
                    half = len(data) // 2
                    handle.write(data[:half])
                    handle.write(data[half:])
    raw = framed.read_bytes()
    assert raw.count(b"\x28\xb5\x2f\xfd") >= 2 * len(members)  # two frames per member
    (ours,), (theirs,) = import_inspect(framed), import_inspect(eval_log)
    assert ours.rounds == theirs.rounds
