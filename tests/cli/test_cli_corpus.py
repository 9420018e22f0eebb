"""The command line on a corpus: it opens it once and gives the library's figures.

Each command's output is compared with an independent path: the twin replaying the episode
objects the Parquet file was written from (``replay``, ``sweep``), or the tuner given those
objects (``tune``); the CLI itself reads the file's compiled columns.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from reviewlab import Policy, replay
from reviewlab.analysis._tune import recommend
from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.cli import main
from reviewlab.core._vocab import SOURCE_GAP_WITHHELD
from reviewlab.recording._files import save_episodes
from reviewlab.recording._schema import Episode
from reviewlab.recording.synth import synth_corpus

SCALES = (0.01, 0.1, 1.0)


@pytest.fixture(scope="module")
def episodes() -> list[Episode]:
    """Eighty synthetic episodes."""
    return synth_corpus(80, seed=5)


@pytest.fixture(scope="module")
def parquet(episodes: list[Episode], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The episodes as one Parquet file."""
    path = tmp_path_factory.mktemp("cli-corpus") / "corpus.parquet"
    save_episodes(episodes, path)
    return path


def _no_episode_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make building an Episode (or loading a corpus as Episodes) fail the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an Episode object was built")

    monkeypatch.setattr(Episode, "model_validate", refuse)
    monkeypatch.setattr(Episode, "model_validate_json", refuse)
    import reviewlab.recording._files as files

    monkeypatch.setattr(files, "load_episodes", refuse)
    monkeypatch.setattr(files, "iter_episodes", refuse)


def test_replay_on_parquet_gives_the_twins_calls_and_tools(
    episodes: list[Episode], parquet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``reviewlab replay corpus.parquet`` writes the calls and per-tool table the twin gives for
    the episode objects."""
    calls_out, tools_out = tmp_path / "calls.parquet", tmp_path / "tools.parquet"
    policy = Policy.uniform(1.0)
    policy_path = tmp_path / "p.toml"
    policy.save(policy_path)
    for table, out in (("calls", calls_out), ("tools", tools_out)):
        argv = ["replay", str(parquet), "--policy", str(policy_path), "--table", table]
        assert main([*argv, "-o", str(out)]) == 0
    expected = replay(episodes, policy, engine="twin")
    columns = ["episode_id", "call_index", "tool", "outcome", "source_gap", "bound_sec"]
    pd.testing.assert_frame_equal(
        pd.read_parquet(calls_out)[columns], expected.calls[columns], check_dtype=False
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(tools_out), expected.per_tool(), check_dtype=False, rtol=1e-12
    )
    assert "wrote" in capsys.readouterr().out


def test_sweep_on_parquet_writes_the_twins_frame(
    episodes: list[Episode], parquet: Path, tmp_path: Path
) -> None:
    """``reviewlab sweep corpus.parquet --scale ...`` writes the frame of the twin's sweep of the
    episode objects (plus the Pareto flag)."""
    out = tmp_path / "sweep.parquet"
    scales = ",".join(f"{s:g}" for s in SCALES)
    assert main(["sweep", str(parquet), "--scale", scales, "-o", str(out)]) == 0
    # A plain frame: the file holds columns, not the SweepFrame type.
    expected = pd.DataFrame(
        sweep(episodes, make_grid(Policy.ouroboros(), scales=SCALES), engine="twin")
    )
    got = pd.read_parquet(out)
    pd.testing.assert_frame_equal(got[expected.columns], expected, check_dtype=False, rtol=1e-12)


def test_tune_on_parquet_writes_the_policy_the_tuner_gives_the_objects(
    episodes: list[Episode], parquet: Path, tmp_path: Path
) -> None:
    """``reviewlab tune corpus.parquet`` writes the policy ``recommend`` gives the episodes."""
    out = tmp_path / "tuned.toml"
    code = main(["tune", str(parquet), "--max-timeout-coverage-loss", "0.05", "-o", str(out)])
    expected = recommend(episodes, max_timeout_coverage_loss=0.05)
    assert code == (0 if expected.met else 1)
    if expected.met:
        assert Policy.load(out).to_toml() == expected.policy.to_toml()


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "{corpus}", "--scale", "0.1,1", "--threads", "2"],
        ["replay", "{corpus}"],
        ["tune", "{corpus}", "--max-timeout-coverage-loss", "0.5"],
    ],
    ids=["sweep", "replay", "tune"],
)
def test_vectorized_commands_build_no_episode_from_parquet(
    argv: list[str], parquet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vectorized sweep, replay or tune of a Parquet corpus builds no Episode object and never
    loads the corpus as episodes."""
    _no_episode_objects(monkeypatch)
    assert main([arg.replace("{corpus}", str(parquet)) for arg in argv]) in (0, 1)


def test_a_hedged_replay_takes_a_seed_and_shows_its_hedges(
    episodes: list[Episode], parquet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``replay --policy hedged.toml --seed 3`` replays the twin's hedges for that seed and the
    summary table has a hedged-calls row."""
    policy = Policy.uniform(2.0).with_hedge("read_file", after_sec=0.02, max_share=0.5)
    policy_path, out = tmp_path / "hedged.toml", tmp_path / "calls.parquet"
    policy.save(policy_path)
    argv = ["replay", str(parquet), "--policy", str(policy_path), "--seed", "3", "-o", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    expected = replay(episodes, policy, engine="twin", seed=3)
    assert expected.summary["hedges"] > 0
    row = next(line for line in printed.splitlines() if line.startswith("hedged calls"))
    assert row.split()[-1] == str(expected.summary["hedges"])
    assert "seed=3" in printed
    calls = pd.read_parquet(out)
    assert int(calls["hedged"].sum()) == expected.summary["hedges"]


def test_a_breaker_replay_shows_the_calls_it_withheld(
    episodes: list[Episode], parquet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A policy with a breaker adds a row counting the calls it withheld, the twin's count."""
    policy = Policy.uniform(0.05).with_breaker(2, cooldown_rounds=1)
    policy_path = tmp_path / "breaker.toml"
    policy.save(policy_path)
    assert main(["replay", str(parquet), "--policy", str(policy_path)]) == 0
    printed = capsys.readouterr().out
    expected = replay(episodes, policy, engine="twin").calls
    withheld = int((expected["source_gap"] == SOURCE_GAP_WITHHELD).sum())
    assert withheld > 0
    row = next(line for line in printed.splitlines() if line.startswith("calls the breaker"))
    assert row.split()[-1] == str(withheld)


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "{bad}"],
        ["sweep", "{bad}", "--scale", "1"],
        ["tune", "{bad}"],
        ["incident", "{bad}"],
        ["export", "otel", "{bad}", "-o", "{dir}/o.jsonl"],
        ["convert", "{bad}", "{dir}/o.jsonl"],
        ["dashboard", "--corpus", "{bad}", "--dry-run"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_bad_parquet_file_is_one_line_naming_it(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``.parquet`` file that is not Parquet: exit 2 and one error line naming the file."""
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 but not really")
    filled = [a.replace("{bad}", str(bad)).replace("{dir}", str(tmp_path)) for a in argv]
    assert main(filled) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("reviewlab: error: "), err
    assert str(bad) in err[0] and "Traceback" not in err[0]


def test_a_library_error_names_the_option(
    parquet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The library refuses a pool without the twin by its parameter; the CLI names the option."""
    assert main(["replay", str(parquet), "--slots", "2"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("reviewlab: error: --slots: ") and "engine='twin'" in line


def test_the_module_entry_point_replays_a_parquet_corpus(parquet: Path) -> None:
    """``python -m reviewlab replay corpus.parquet`` runs in a fresh interpreter and prints the
    summary (what the benchmark times)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "reviewlab", "replay", str(parquet)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "abandoned-call rate" in done.stdout and done.stderr == ""
    assert any(line.startswith("assumes:") for line in io.StringIO(done.stdout))


def test_replay_without_output_builds_no_call_frame(
    parquet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reviewlab replay corpus.parquet`` prints its summary and per-tool table from the replay's
    arrays: no call frame is built unless -o asks for one (memory at scale)."""
    from reviewlab.engines._result import FramesOnDemand

    def refuse(self: FramesOnDemand) -> None:
        raise AssertionError("a call frame was built")

    monkeypatch.setattr(FramesOnDemand, "_built", refuse)
    assert main(["replay", str(parquet)]) == 0
