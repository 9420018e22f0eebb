"""The ``reviewlab`` command line: every subcommand with good and bad input.

Most tests call :func:`reviewlab.cli.main` in-process and read stdout/stderr
through ``capsys``; a few run the real ``python -m reviewlab`` in a subprocess
to prove that exit status and stderr are what a shell sees.
"""

from __future__ import annotations

import json
import math
import re
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from stub_openai import StubError, StubOpenAI

from reviewlab.cli import build_parser, main
from reviewlab.core._policy import Policy
from reviewlab.live._episode import tool_call
from reviewlab.live._inspection import demo_workspace
from reviewlab.recording._files import load_episodes, save_episodes
from reviewlab.recording._schema import Call, Episode, Extent, Round

SUBCOMMANDS = ("demo", "record", "replay", "sweep", "tune", "synth", "import", "lab", "dashboard")
REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def _episode(number: int, *, wedge: bool = False) -> Episode:
    """A small recorded episode: two reads, a search, and (optionally) a censored query_code."""
    calls = [
        Call(
            tool="read_file",
            args={"path": "a.py"},
            duration_sec=0.5 + number % 3,
            result_chars=400,
            extent=Extent(path="a.py", start_line=1, end_line=40),
        ),
        Call(
            tool="search_code",
            args={"pattern": "x"},
            duration_sec=2.0 + number % 5,
            result_chars=90,
        ),
    ]
    if wedge:
        calls.append(Call(tool="query_code", args={}, duration_sec=26_000.0, completed=False))
    calls.append(
        Call(
            tool="read_file",
            args={"path": "b.py"},
            duration_sec=1.0,
            result_chars=300,
            extent=Extent(path="b.py", start_line=10, end_line=29),
        )
    )
    return Episode(
        id=f"ep-{number}",
        source="synthetic",
        slot=f"s{number % 2}",
        started_at=T0 + timedelta(seconds=60 * number),
        deadline_sec=1800.0,
        rounds=[
            Round(send_sec=3.0, calls=calls[:2]),
            Round(send_sec=2.0, calls=calls[2:]),
            Round(send_sec=1.5),
        ],
        end_reason="final_answer",
    )


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    save_episodes([_episode(i, wedge=(i == 3)) for i in range(8)], path)
    return path


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The captured stderr, asserted to be exactly one ``reviewlab:
    error:`` line without a traceback."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("reviewlab: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- the parser --------------------------------------------------------------------------
def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    """``reviewlab --help`` exits 0 and names every subcommand."""
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in out


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each subcommand's ``--help`` exits 0 with a description and its options."""
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"usage: reviewlab {name}" in out
    assert "options:" in out


def test_missing_subcommand_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """No subcommand: exit 2 and one error line."""
    assert main([]) == 2
    assert "required" in _error_line(capsys)


def test_unknown_option_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown option names itself and the subcommand's --help."""
    assert main(["replay", "x.jsonl", "--frobnicate"]) == 2
    line = _error_line(capsys)
    assert "--frobnicate" in line and "reviewlab replay --help" in line


def test_parser_has_a_handler_per_subcommand() -> None:
    """Every subcommand parses to a callable handler."""
    parser = build_parser()
    for argv in (
        ["demo"],
        ["replay", "c.jsonl"],
        ["sweep", "c.jsonl"],
        ["tune", "c.jsonl"],
        ["synth", "-o", "x.jsonl"],
        ["import", "openhands", "f.json", "-o", "x.jsonl"],
        ["lab"],
        ["dashboard"],
        [
            "record",
            "--base-url",
            "u",
            "--model",
            "m",
            "--root",
            ".",
            "--task",
            "t",
            "-o",
            "x.jsonl",
        ],
    ):
        assert callable(parser.parse_args(argv).handler)


# -- replay ------------------------------------------------------------------------------
def test_replay_prints_summary_and_writes_csv(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``replay`` prints the summary and per-tool tables and writes one CSV row per call."""
    out = tmp_path / "calls.csv"
    assert main(["replay", str(corpus), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "abandoned-call rate" in text and "longest silence" in text
    assert text.count("assumes: censored=wedge") == 2  # the summary's and the per-tool table's
    assert "query_code" in text  # the per-tool table
    frame = pd.read_csv(out)
    assert len(frame) == sum(len(e.calls) for e in load_episodes(corpus))
    assert (frame["source_gap"] == "native_tool_abandoned").sum() == 1


def test_replay_unbounded_preset_wedges_and_writes_parquet(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--policy unbounded`` replays the pre-fix behaviour; ``-o
    x.parquet`` writes episodes as Parquet."""
    out = tmp_path / "episodes.parquet"
    assert (
        main(
            [
                "replay",
                str(corpus),
                "--policy",
                "unbounded",
                "--engine",
                "twin",
                "--table",
                "episodes",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    frame = pd.read_parquet(out)
    assert len(frame) == 8
    # Under censored=wedge the wedged call never returns: Parquet keeps the infinity.
    assert frame["max_silence_sec"].max() == math.inf
    printed = capsys.readouterr().out
    assert "assumes: censored=wedge (a call the recording never saw return never returns)" in (
        printed
    )
    assert "∞: never ends — under censored=wedge" in printed
    assert (
        main(
            [
                "replay",
                str(corpus),
                "--policy",
                "unbounded",
                "--censored",
                "observed",
                "--table",
                "episodes",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    # Observed: it returns at 26,000 s and the round's last call (1 s) still runs.
    assert pd.read_parquet(out)["max_silence_sec"].max() == pytest.approx(26_001.0)
    assert "26,000" in capsys.readouterr().out


def test_replay_reads_a_policy_toml(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TOML policy file is used: a 1 s uniform bound abandons the slow searches too."""
    policy_path = tmp_path / "tight.toml"
    Policy.uniform(1.0).save(policy_path)
    out = tmp_path / "calls.csv"
    assert main(["replay", str(corpus), "--policy", str(policy_path), "-o", str(out)]) == 0
    frame = pd.read_csv(out)
    assert set(frame["bound_sec"].dropna()) == {1.0}
    assert (frame["source_gap"] == "native_tool_abandoned").sum() > 1


def test_replay_real_engine_runs_episodes_on_threads(corpus: Path, tmp_path: Path) -> None:
    """``--engine real`` replays through the real executor and gives
    the vectorized outcomes per call."""
    real, fast = tmp_path / "real.csv", tmp_path / "fast.csv"
    assert (
        main(["replay", str(corpus), "--engine", "real", "--time-scale", "0.0005", "-o", str(real)])
        == 0
    )
    assert main(["replay", str(corpus), "-o", str(fast)]) == 0
    columns = ["episode_id", "call_index", "tool", "outcome", "source_gap"]
    pd.testing.assert_frame_equal(pd.read_csv(real)[columns], pd.read_csv(fast)[columns])


def test_replay_missing_corpus_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A corpus that does not exist: exit 2, one line naming the file."""
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl: no such file" in _error_line(capsys)


def test_replay_malformed_recording_names_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording with a bad field: one line naming the file, the line and the field."""
    good = _episode(1).to_json_line()
    row = json.loads(_episode(2).to_json_line())
    row["rounds"][0]["calls"][1]["duration_sec"] = -4.0
    bad = json.dumps(row)
    path = tmp_path / "bad.jsonl"
    path.write_text(good + "\n" + bad + "\n", encoding="utf-8")
    assert main(["replay", str(path)]) == 2
    line = _error_line(capsys)
    assert "bad.jsonl:2" in line and "rounds.0.calls.1.duration_sec" in line


def test_replay_invalid_policy_toml_is_one_line(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A policy file with a negative timeout: one line naming the field."""
    policy_path = tmp_path / "bad.toml"
    policy_path.write_text("[policy]\ndefault_sec = -5\n", encoding="utf-8")
    assert main(["replay", str(corpus), "--policy", str(policy_path)]) == 2
    assert "default_sec" in _error_line(capsys)


def test_replay_policy_that_is_not_toml_is_one_line(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A policy file that is not TOML at all: one line saying so."""
    policy_path = tmp_path / "bad.toml"
    policy_path.write_text("this is [not toml\n", encoding="utf-8")
    assert main(["replay", str(corpus), "--policy", str(policy_path)]) == 2
    assert "not valid TOML" in _error_line(capsys)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--policy", "nonsense"], "no such policy file"),
        (["--policy", "uniform:fast"], "expected a number"),
        (["--slots", "0"], "--slots"),
        (["-o", "calls.xlsx"], ".csv or .parquet"),
    ],
)
def test_replay_bad_arguments_are_one_line(
    corpus: Path, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad presets, slot counts and output extensions are one-line user errors."""
    assert main(["replay", str(corpus), *argv]) == 2
    assert needle in _error_line(capsys)


def test_replay_output_directory_must_exist(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output in a missing directory is refused before any work, with nothing written."""
    out = tmp_path / "missing" / "calls.csv"
    assert main(["replay", str(corpus), "-o", str(out)]) == 2
    assert "does not exist" in _error_line(capsys)
    assert not out.parent.exists()


# -- sweep -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--tool", "read_file"], "TOOL=SEC"),
        (["--tool", "read_file=5,,30"], "comma-separated"),
        (["--tool", "read_file=5,soon"], "expected a number"),
        (["--scale", "0.5,x"], "--scale"),
        (["--narrowing", "inherit,sometimes"], "bad mode 'sometimes'"),
        (["--narrowing", "reserve"], "bad mode 'reserve'"),
        (["--narrowing", "fraction:2"], "narrowing.fraction"),
        (["--tool", "read_file=-5"], "--tool read_file: must be positive"),
        (["--scale", "0"], "--scale: must be positive"),
        (["--threads", "0"], "--threads"),
        (["--threads", "2", "--scheduler", "tcp://127.0.0.1:1"], "--threads"),
        (["--threads", "2", "--engine", "twin"], "--threads: engine='twin'"),
        (["--threads", "2", "--breaker", "3"], "have a breaker run one after"),
    ],
)
def test_sweep_bad_grid_specs_are_one_line(
    corpus: Path, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each malformed grid spec is a one-line error naming what is wrong."""
    assert main(["sweep", str(corpus), *argv]) == 2
    assert needle in _error_line(capsys)


def test_sweep_writes_one_row_per_policy_point(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 2×2 grid (read_file timeouts × narrowing modes) gives four
    rows with parameters and metrics."""
    out = tmp_path / "sweep.csv"
    assert (
        main(
            [
                "sweep",
                str(corpus),
                "--tool",
                "read_file=0.5,600",
                "--narrowing",
                "inherit,reserve:30",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    frame = pd.read_csv(out)
    assert len(frame) == 4
    assert sorted(frame["timeout.read_file"].unique()) == [0.5, 600.0]
    assert set(frame["narrowing.mode"]) == {"inherit", "reserve"}
    tight = frame[frame["timeout.read_file"] == 0.5]
    assert (
        tight["abandoned_call_rate"]
        > frame[frame["timeout.read_file"] == 600.0]["abandoned_call_rate"].max()
    ).all()
    assert "wrote 4 policy points" in capsys.readouterr().out


def test_sweep_on_threads_writes_the_one_thread_table(corpus: Path, tmp_path: Path) -> None:
    """``--threads 3`` replays points at once and writes byte for byte the ``--threads 1`` CSV."""
    outs = [tmp_path / "one.csv", tmp_path / "three.csv"]
    grid = ["--tool", "read_file=0.5,5,600", "--narrowing", "inherit,none"]
    for threads, out in zip(("1", "3"), outs, strict=True):
        assert main(["sweep", str(corpus), *grid, "--threads", threads, "-o", str(out)]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert len(pd.read_csv(outs[1])) == 6


def test_sweep_runs_on_an_existing_dask_scheduler(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--scheduler`` sweeps the corpus's Parquet partitions (``reviewlab convert``) on a
    running Dask cluster and gives the in-process frame; a JSONL corpus, which the cluster
    could only get scattered from this machine, is one line saying to convert it."""
    from distributed import LocalCluster

    local, remote = tmp_path / "local.csv", tmp_path / "remote.csv"
    grid = ["--scale", "0.001,1", "--narrowing", "inherit,none"]
    assert main(["sweep", str(corpus), *grid, "-o", str(local)]) == 0
    parts = tmp_path / "parts"
    assert main(["convert", str(corpus), str(parts), "--rows-per-partition", "2"]) == 0
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        address = cluster.scheduler_address
        argv = ["sweep", str(parts), *grid, "--scheduler", address, "-o", str(remote)]
        assert main(argv) == 0
        capsys.readouterr()
        assert main(["sweep", str(corpus), *grid, "--scheduler", address]) == 2
        assert "reads Parquet partitions" in _error_line(capsys)
    pd.testing.assert_frame_equal(pd.read_csv(remote), pd.read_csv(local))


def test_sweep_unreachable_scheduler_is_one_line(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scheduler nobody listens on: one line naming the address."""
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert (
        main(
            [
                "sweep",
                str(corpus),
                "--scheduler",
                f"tcp://127.0.0.1:{port}",
                "--connect-timeout",
                "1",
            ]
        )
        == 2
    )
    assert f"tcp://127.0.0.1:{port}" in _error_line(capsys)


# -- tune --------------------------------------------------------------------------------
def test_tune_writes_a_policy_file_replay_can_use(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tune -o rec.toml`` explains its choice per tool and writes a
    policy ``replay --policy`` reads."""
    policy_path = tmp_path / "rec.toml"
    # One of the eight episodes wedges: abandoning it withholds its later reads under any bound.
    argv = ["tune", str(corpus), "--max-timeout-coverage-loss", "0.5", "-o", str(policy_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "timeout_sec" in out and "recommended" in out and "read_file" in out
    assert Policy.load(policy_path).label == "recommended"
    assert main(["replay", str(corpus), "--policy", str(policy_path)]) == 0


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--max-coverage-loss", "2"], "--max-coverage-loss"),
        (["--objective", "happiness"], "happiness"),
        (["--base", "unbounded"], "unbounded"),
        (["-o", "rec.yaml"], ".toml"),
    ],
)
def test_tune_bad_arguments_are_one_line(
    corpus: Path, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Impossible budgets, unknown objectives, an unbounded base or a
    non-TOML output: one line each."""
    assert main(["tune", str(corpus), *argv]) == 2
    assert needle in _error_line(capsys)


# -- record ------------------------------------------------------------------------------
def test_record_saves_one_live_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``record`` drives a model on an OpenAI-compatible endpoint and saves the episode it ran."""
    out = tmp_path / "live.jsonl"
    script = [
        {"tool_calls": [tool_call("read_file", {"path": "inventory/pricing.py"}, "c1")]},
        {"content": "[]"},
    ]
    with StubOpenAI(script) as stub:
        code = main(
            [
                "record",
                "--base-url",
                stub.base_url,
                "--model",
                "stub-reviewer",
                "--root",
                str(demo_workspace()),
                "--task",
                "Review pricing.",
                "-o",
                str(out),
            ]
        )
        requests = list(stub.requests)
    assert code == 0
    assert requests[0]["model"] == "stub-reviewer"
    assert any("Review pricing." in str(m.get("content")) for m in requests[0]["messages"])
    [episode] = load_episodes(out)
    assert episode.source == "live" and [c.tool for c in episode.calls] == ["read_file"]
    text = capsys.readouterr().out
    assert "read_file" in text and "final_answer" in text and str(out) in text


def _record(base_url: str, out: Path, *extra: str) -> int:
    """``reviewlab record`` against ``base_url`` on the demo workspace, writing ``out``."""
    argv = ["record", "--base-url", base_url, "--model", "m", "--root", str(demo_workspace())]
    return main([*argv, "--task", "t", "-o", str(out), *extra])


def _one_read_script() -> list[dict[str, object]]:
    """A model that reads one file, then answers."""
    read = tool_call("read_file", {"path": "inventory/pricing.py"}, "c1")
    return [{"tool_calls": [read]}, {"content": "[]"}]


def test_record_endpoint_failure_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An endpoint that answers HTTP 500: exit 1, one error line naming it, and no file is made."""
    out = tmp_path / "live.jsonl"
    with StubOpenAI([StubError(500, "overloaded")]) as stub:
        code = _record(stub.base_url, out)
    assert code == 1
    line = _error_line(capsys)
    assert "500" in line and str(out) in line
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_record_failure_leaves_an_existing_recording_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed ``--force`` or ``--append`` run leaves the recording
    it would have changed as it was."""
    out = tmp_path / "live.jsonl"
    save_episodes([_episode(1), _episode(2)], out)
    before = out.read_bytes()
    for flag in ("--force", "--append"):
        with StubOpenAI([StubError(500, "overloaded")]) as stub:
            assert _record(stub.base_url, out, flag) == 1
        assert "500" in _error_line(capsys)
        assert out.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["live.jsonl"]


def test_record_refuses_to_overwrite_a_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without ``--append`` or ``--force`` a non-empty recording is refused before any request."""
    out = tmp_path / "live.jsonl"
    save_episodes([_episode(1)], out)
    before = out.read_bytes()
    with StubOpenAI(_one_read_script()) as stub:
        assert _record(stub.base_url, out) == 2
        assert list(stub.requests) == []
    line = _error_line(capsys)
    assert str(out) in line and "--append" in line and "--force" in line
    assert out.read_bytes() == before


def test_record_append_keeps_the_recording_and_adds_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--append`` keeps every recorded episode, in order, and adds the new one after them."""
    out = tmp_path / "live.jsonl"
    save_episodes([_episode(1), _episode(2)], out)
    with StubOpenAI(_one_read_script()) as stub:
        assert _record(stub.base_url, out, "--append") == 0
    episodes = load_episodes(out)
    assert [e.id for e in episodes[:2]] == [_episode(1).id, _episode(2).id]
    assert episodes[:2] == [_episode(1), _episode(2)]
    assert len(episodes) == 3 and episodes[2].source == "live"
    assert "3 in all" in capsys.readouterr().out


def test_record_force_replaces_the_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--force`` replaces a recording with the one new episode; an empty file needs no flag."""
    out = tmp_path / "live.jsonl"
    save_episodes([_episode(1)], out)
    with StubOpenAI(_one_read_script()) as stub:
        assert _record(stub.base_url, out, "--force") == 0
    [episode] = load_episodes(out)
    assert episode.source == "live"
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with StubOpenAI(_one_read_script()) as stub:
        assert _record(stub.base_url, empty) == 0
    assert len(load_episodes(empty)) == 1


def test_record_append_and_force_together_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--append`` with ``--force`` is contradictory: one line naming both."""
    out = tmp_path / "live.jsonl"
    assert _record("http://127.0.0.1:9/v1", out, "--append", "--force") == 2
    line = _error_line(capsys)
    assert "--append" in line and "--force" in line and not out.exists()


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--root", "/definitely/not/here", "-o", "x.jsonl"], "no such directory"),
        (["--root", ".", "-o", "x.csv"], ".jsonl"),
    ],
)
def test_record_bad_arguments_are_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing workspace or a wrong output extension fails before any request."""
    assert (
        main(
            ["record", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", "t", *argv]
        )
        == 2
    )
    assert needle in _error_line(capsys)


def test_record_bad_url_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A base URL that is not http(s) is a one-line error and writes nothing."""
    out = tmp_path / "x.jsonl"
    assert (
        main(
            [
                "record",
                "--base-url",
                "ftp://x",
                "--model",
                "m",
                "--root",
                str(tmp_path),
                "--task",
                "t",
                "-o",
                str(out),
            ]
        )
        == 2
    )
    assert "base_url" in _error_line(capsys)
    assert not out.exists()


# -- synth -------------------------------------------------------------------------------
def test_synth_writes_a_seeded_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``synth -n 12 --seed 3`` writes 12 episodes, and the same seed gives the same bytes."""
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    assert main(["synth", "-n", "12", "--seed", "3", "-o", str(first)]) == 0
    assert main(["synth", "-n", "12", "--seed", "3", "-o", str(second)]) == 0
    assert len(load_episodes(first)) == 12
    assert first.read_bytes() == second.read_bytes()
    assert "wrote 12 episode(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["-n", "0", "-o", "x.jsonl"], "-n"),
        (["-n", "5", "-o", "x.txt"], ".jsonl"),
    ],
)
def test_synth_bad_arguments_are_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A non-positive count or a wrong extension is a one-line error."""
    assert main(["synth", *argv]) == 2
    assert needle in _error_line(capsys)


def test_synth_incident_writes_the_wedged_day(tmp_path: Path) -> None:
    """``synth --incident`` writes the incident day whose one censored
    call is the 26,160 s query_code."""
    out = tmp_path / "incident.jsonl"
    assert main(["synth", "--incident", "-o", str(out)]) == 0
    censored = [
        call for episode in load_episodes(out) for call in episode.calls if not call.completed
    ]
    assert [(call.tool, call.duration_sec) for call in censored] == [("query_code", 26_160.0)]


# -- import ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fmt, name",
    [("openhands", "basic_gui_mode.json"), ("inspect", "log_message_deduplication.eval")],
)
def test_import_converts_a_foreign_log(
    fmt: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``import openhands|inspect`` writes the log's episodes in our format, readable back."""
    folder = "inspect_ai" if fmt == "inspect" else fmt
    out = tmp_path / "imported.jsonl"
    assert main(["import", fmt, str(FIXTURES / folder / name), "-o", str(out)]) == 0
    episodes = load_episodes(out)
    assert episodes and {episode.source for episode in episodes} == {fmt}
    assert f"imported {len(episodes)} episode(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "fmt, folder, name",
    [
        ("openhands", "inspect_ai", "2025-05-12T20-27-36-04-00_browser.json"),  # the wrong format
        ("inspect", "inspect_ai", "log_tool_call_error.json"),  # an Inspect log without timings
    ],
)
def test_import_unreadable_log_is_one_line(
    fmt: str, folder: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log the importer cannot read: one line naming the file, nothing written."""
    out = tmp_path / "x.jsonl"
    source = FIXTURES / folder / name
    assert main(["import", fmt, str(source), "-o", str(out)]) == 2
    assert name in _error_line(capsys)
    assert not out.exists()


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["openhands", "/no/such/log.json", "-o", "x.jsonl"], "no such file"),
        (["swe-agent", "log.json", "-o", "x.jsonl"], "invalid choice"),
    ],
)
def test_import_bad_arguments_are_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing log or an unknown format is a one-line error."""
    assert main(["import", *argv]) == 2
    assert needle in _error_line(capsys)


# -- lab and dashboard -------------------------------------------------------------------
def test_lab_dry_run_prints_the_jupyterlab_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lab --dry-run`` prints a JupyterLab command rooted at the
    notebooks folder without starting it."""
    assert main(["lab", "--notebooks", str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out.strip()
    assert "lab" in out and str(tmp_path) in out


def test_lab_missing_notebook_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lab`` on a folder that does not exist: one line, exit 2."""
    assert main(["lab", "--notebooks", str(tmp_path / "nope"), "--dry-run"]) == 2
    assert "no such directory" in _error_line(capsys)


def test_dashboard_dry_run_prints_the_voila_command(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dashboard --dry-run`` prints the Voilà command and the corpus it
    would serve, starting nothing."""
    assert (
        main(["dashboard", "--dry-run", "--port", "8871", "--corpus", str(corpus), "--no-browser"])
        == 0
    )
    out = capsys.readouterr().out.strip()
    assert "-m voila" in out and "--port=8871" in out and "--no-browser" in out
    assert str(corpus.resolve()) in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--corpus", "/no/such/corpus.jsonl"], "no such file"),
        (["--port", "70000"], "port"),
    ],
)
def test_dashboard_bad_arguments_are_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing corpus or an impossible port is a one-line error before anything starts."""
    assert main(["dashboard", "--dry-run", *argv]) == 2
    assert needle in _error_line(capsys)


# -- through a real process ----------------------------------------------------------------
def test_module_entry_point_reports_errors_without_traceback(tmp_path: Path) -> None:
    """``python -m reviewlab`` exits 2 with one stderr line for a user error."""
    proc = subprocess.run(
        [sys.executable, "-m", "reviewlab", "replay", str(tmp_path / "gone.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"reviewlab: error: {tmp_path / 'gone.jsonl'}: no such file"
    ]


# -- demo ----------------------------------------------------------------------------------
def test_demo_quick_writes_the_report_with_its_charts(tmp_path: Path) -> None:
    """``reviewlab demo --quick --out DIR`` runs the main job and writes
    report.html showing its PNG charts."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "reviewlab", "demo", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    text = proc.stdout
    assert (
        "native_tool_abandoned" in text and "TOOL_TIMEOUT (search_code)" in text
    )  # the live episode
    assert "longest silence: 26,160" in text  # the incident's silence before the fix
    assert "vectorized and twin engines agree on every call: yes" in text
    assert "demo finished in" in text
    html = (out / "report.html").read_text(encoding="utf-8")
    pngs = sorted(out.glob("*.png"))
    assert len(pngs) >= 5
    for png in pngs:
        assert png.read_bytes()[:4] == b"\x89PNG"
        assert f'src="{png.name}"' in html
    assert Policy.load(out / "recommended-policy.toml").label == "recommended"
    assert len(pd.read_csv(out / "sweep.csv")) == 12


def test_demo_without_its_bundled_corpus_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkout missing the bundled corpus: one line saying how to
    recreate it, no report written."""
    import reviewlab.ui._demo

    monkeypatch.setattr(reviewlab.ui._demo, "CORPUS_PATH", tmp_path / "gone.jsonl.gz")
    assert main(["demo", "--quick", "--out", str(tmp_path / "out")]) == 2
    line = _error_line(capsys)
    assert "gone.jsonl.gz" in line and "reviewlab synth" in line
    assert not (tmp_path / "out" / "report.html").exists()


@pytest.mark.parametrize("command", ["replay", "sweep", "tune"])
def test_on_error_skip_loads_the_good_lines_and_reports_each_skipped_one(
    corpus: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--on-error skip``: the good episodes are used; every bad line is named on stderr."""
    lines = corpus.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"duration_sec":', '"duration_sec":"soon","x":', 1)
    lines.insert(5, "{not json")
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    extra = {"sweep": ["--scale", "1"], "tune": ["--max-timeout-coverage-loss", "1"]}
    assert main([command, str(corpus), *extra.get(command, [])]) == 2
    assert f"{corpus}:3:" in _error_line(capsys)
    assert main([command, str(corpus), "--on-error", "skip", *extra.get(command, [])]) == 0
    captured = capsys.readouterr()
    report = captured.err.splitlines()
    assert report[0].startswith(f"reviewlab: skipped {corpus}:3: ")
    assert report[1].startswith(f"reviewlab: skipped {corpus}:6: <json>")
    assert report[2] == (
        f"reviewlab: skipped 2 line(s) of {corpus} (--on-error skip); loaded 7 episode(s)"
    )
    assert len(report) == 3
    if command == "replay":
        assert re.search(r"episodes\s+7\b", captured.out)


def test_extreme_durations_print_in_scientific_notation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded duration of 1e308 s prints as 1e+308, never as a 309-digit number."""
    path = tmp_path / "extreme.jsonl"
    episode = _episode(1)
    huge = episode.rounds[0].calls[0].model_copy(update={"duration_sec": 1e308})
    rounds = [episode.rounds[0].model_copy(update={"calls": [huge]}), *episode.rounds[1:]]
    save_episodes([episode.model_copy(update={"rounds": rounds})], path)
    assert main(["replay", str(path), "--policy", "unbounded"]) == 0
    out = capsys.readouterr().out
    assert "1e+308" in out
    assert max(len(token) for token in out.split()) < 40


def test_import_takes_a_shipped_log_by_its_bundled_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``reviewlab import auto bundled:real-logs/<file>`` reads the shipped log (the same
    episodes as its path); an unknown shipped name is one line listing the known ones."""
    from reviewlab.resources import bundled

    name = "bundled:real-logs/openhands/basic.json"
    assert main(["import", "auto", name, "-o", str(tmp_path / "a.jsonl")]) == 0
    path = str(bundled(name))
    assert main(["import", "auto", path, "-o", str(tmp_path / "b.jsonl")]) == 0
    assert load_episodes(tmp_path / "a.jsonl") == load_episodes(tmp_path / "b.jsonl")
    capsys.readouterr()
    missing = tmp_path / "c.jsonl"
    assert main(["import", "auto", "bundled:real-logs/nope.json", "-o", str(missing)]) == 2
    line = _error_line(capsys)
    assert "nope.json" in line and "openhands/basic.json" in line
    assert not missing.exists()
