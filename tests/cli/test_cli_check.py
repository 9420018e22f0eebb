"""``reviewlab check``: the CI gate exits 0 when every budget holds, 1 naming each broken budget
with its figure, and 2 on bad input.

The budgets are set just above and just below figures computed independently through the
Python API (the abandoned rows of the replay's call frame, the longest silence of its episode
frame); the exit status is read as a shell reads it in one test (``python -m reviewlab``) and
through :func:`reviewlab.cli.main` in the others.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from reviewlab.cli import main
from reviewlab.cli._json import SCHEMA_FILE
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED
from reviewlab.engines._corpus import open_corpus
from reviewlab.engines._replay import replay
from reviewlab.recording._files import save_episodes
from reviewlab.resources import data_path

POLICY = "uniform:5"
"""A tight bound, so the bundled corpus abandons a few percent of its calls under it."""


@pytest.fixture(scope="module")
def figures() -> dict[str, float]:
    """The abandoned-call rate and the longest silence of the bundled corpus under
    :data:`POLICY`, counted from the API's frames."""
    result = replay(open_corpus("bundled:corpus"), Policy.uniform(5.0), engine="vectorized")
    calls = result.calls
    return {
        "rate": float((calls["source_gap"] == SOURCE_GAP_ABANDONED).sum() / len(calls)),
        "silence": float(result.episodes["max_silence_sec"].max()),
    }


def check(*options: str) -> list[str]:
    """The argv of ``reviewlab check bundled:corpus --policy POLICY OPTIONS``."""
    return ["check", "bundled:corpus", "--policy", POLICY, *options]


def test_budgets_above_the_figures_hold_and_exit_0(
    figures: dict[str, float], capsys: pytest.CaptureFixture[str]
) -> None:
    """Budgets 5 % above the computed rate and silence hold: exit 0, a held line for each."""
    assert 0.0 < figures["rate"] < 1.0
    code = main(
        check(
            "--max-abandoned-call-rate",
            f"{figures['rate'] * 1.05:.6f}",
            "--max-silence",
            f"{figures['silence'] * 1.05:.3f}",
        )
    )
    out = capsys.readouterr().out
    assert code == 0
    assert len(re.findall(r"^held: ", out, re.M)) == 2 and "BROKEN" not in out


def test_a_budget_below_its_figure_exits_1_naming_it(
    figures: dict[str, float], capsys: pytest.CaptureFixture[str]
) -> None:
    """A rate budget 5 % below the computed rate breaks: exit 1, one line naming the
    abandoned-call rate, its figure and the budget; the silence budget above still holds."""
    budget = figures["rate"] * 0.95
    code = main(
        check(
            "--max-abandoned-call-rate",
            f"{budget:.6f}",
            "--max-silence",
            f"{figures['silence'] * 1.05:.3f}",
        )
    )
    out = capsys.readouterr().out
    assert code == 1
    [broken] = [line for line in out.splitlines() if line.startswith("BROKEN")]
    found = re.fullmatch(r"BROKEN: abandoned-call rate (\S+) > budget (\S+)", broken)
    assert found is not None, broken
    assert float(found.group(1)) == pytest.approx(figures["rate"], rel=1e-3)
    assert float(found.group(2)) == pytest.approx(budget, rel=1e-3)
    assert "held:   longest silence" in out


def test_the_shell_sees_1_and_each_broken_budget_in_json_mode(
    figures: dict[str, float], tmp_path: Path
) -> None:
    """Run as ``python -m reviewlab check ... --json`` with two budgets below their figures:
    exit status 1, stdout one document of the schema saying which broke, stderr one line per
    broken budget."""
    argv = check(
        "--max-abandoned-call-rate",
        f"{figures['rate'] * 0.95:.6f}",
        "--max-silence",
        f"{figures['silence'] * 0.95:.3f}",
        "--json",
    )
    done = subprocess.run(
        [sys.executable, "-m", "reviewlab", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    schema = json.loads(data_path(SCHEMA_FILE).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(doc)
    summary = doc["summary"]
    assert summary["passed"] is False and summary["budgets_broken"] == 2
    assert summary["held.abandoned_call_rate"] is False
    assert summary["max_silence_sec"] == pytest.approx(figures["silence"])
    assert doc["units"]["budget.max_silence_sec"] == "seconds"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2
    assert "abandoned-call rate" in lines[0] and "longest silence" in lines[1]


def test_a_malformed_corpus_exits_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSONL file whose second line is not an episode: exit 2, one stderr line naming the
    file and the line, nothing on stdout."""
    first = open_corpus("bundled:incident").episodes(reason="one good line")[0]
    broken = tmp_path / "broken.jsonl"
    save_episodes([first], broken)
    with broken.open("a", encoding="utf-8") as stream:
        stream.write('{"schema": "reviewlab.episode/1", "id": 3}\n')
    code = main(["check", str(broken), "--policy", "ouroboros", "--max-silence", "600"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    [line] = captured.err.strip().splitlines()
    assert line.startswith("reviewlab: error:") and f"{broken}:2" in line


@pytest.mark.parametrize(
    "options, needle",
    [
        ([], "no budget given"),
        (["--max-abandoned-call-rate", "1.5"], "--max-abandoned-call-rate"),
        (["--max-timeout-coverage-loss", "nan"], "--max-timeout-coverage-loss"),
        (["--max-silence", "0"], "--max-silence"),
        (["--max-silence", "ten"], "--max-silence"),
    ],
)
def test_bad_budgets_exit_2_naming_the_flag(
    options: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No budget, a rate outside [0, 1], NaN, a silence that is not a positive number: exit 2
    with one line naming the flag, before any replay."""
    assert main(["check", "bundled:corpus", "--policy", "ouroboros", *options]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and needle in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_a_bad_policy_exits_2_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    """A policy that is neither a file nor a preset: exit 2, one line naming ``--policy``."""
    code = main(["check", "bundled:corpus", "--policy", "no-such.toml", "--max-silence", "60"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("reviewlab: error: --policy")


def test_a_gateway_recording_folder_is_gated_by_its_hand_computed_silence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gateway's ``--record`` folder with one session whose second call took 700 s: under the
    pre-fix policy its longest silence is 700 s and breaks a 600 s budget (exit 1); bounded at
    60 s the wait is 60 s and the budget holds (exit 0)."""
    folder = tmp_path / "gw-rec"
    folder.mkdir()
    lines = [
        {"schema": "reviewlab.session/1", "id": "s", "started_at": "2026-12-01T06:00:00Z"},
        {"call": {"tool": "read_file", "args": {}, "duration_sec": 2.0}, "at_sec": 0.5},
        {"call": {"tool": "search_code", "args": {}, "duration_sec": 700.0}, "at_sec": 3.0},
        {"end": {"end_reason": "final_answer", "ended_sec": 710.0}},
    ]
    (folder / "s.session.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    gate = ["check", str(folder), "--max-silence", "600", "--policy"]
    assert main([*gate, "unbounded"]) == 1
    assert "BROKEN: longest silence 700 s > budget 600 s" in capsys.readouterr().out
    assert main([*gate, "uniform:60"]) == 0
    assert "held:   longest silence 60 s <= budget 600 s" in capsys.readouterr().out
