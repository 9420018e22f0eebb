"""``--json`` and ``-o FILE.json``: one documented schema (docs/json-output.md) for every command
that writes it, with plain numbers that agree with the Python API.

Each command runs in-process through :func:`reviewlab.cli.main` on a shipped corpus, the way a
user would; its stdout must be one JSON document (nothing else), valid against the JSON Schema
shipped as ``reviewlab/data/output.schema.json``, with a unit for every quantity and no
formatted number; then one figure of each is recomputed through the library.
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reviewlab.cli import main
from reviewlab.cli._json import SCHEMA_FILE
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED
from reviewlab.engines._corpus import open_corpus
from reviewlab.engines._replay import replay
from reviewlab.resources import data_path

UNITS = {"seconds", "fraction", "count", "number"}
FIGURE_TEXT = {"inf", "-inf"}

COMMANDS = {
    "replay": ["replay", "bundled:corpus"],
    "replay bounds": ["replay", "bundled:incident", "--censored", "bounds"],
    "sweep": ["sweep", "bundled:corpus", "--scale", "0.5,1"],
    "tune": ["tune", "bundled:corpus"],
    "tune guarantee": ["tune", "guarantee", "bundled:corpus", "--probability", "0.9"],
    "tune baselines": ["tune", "baselines", "bundled:corpus"],
    "presets": ["presets"],
    "presets score": [
        "presets",
        "score",
        "bundled:corpus",
        "--no-recommend",
        "--preset",
        "codex-cli",
    ],
    "clocks": ["clocks", "bundled:corpus", "--typescript-sdk", "60,120"],
    "incident": ["incident", "bundled:incident", "--top", "3"],
    "check": ["check", "bundled:corpus", "--policy", "ouroboros", "--max-silence", "900"],
}
"""One run of every command that writes the document (``presets`` twice: list and score)."""


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """``reviewlab ARGV --json``: exit 0 and stdout holding exactly one JSON document."""
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out)  # fails on anything printed beside the document


def _is_figure(value: Any) -> bool:
    return value is None or value in FIGURE_TEXT or _number(value)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_document(doc: dict[str, Any], command: str) -> None:
    """``doc`` is valid against the shipped JSON Schema, and every quantity it holds has a
    unit and is a figure: a number, ``"inf"``/``"-inf"`` or ``null``, never formatted text."""
    schema = json.loads(data_path(SCHEMA_FILE).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["schema"] == "reviewlab.output/1" and doc["command"] == command
    units = doc["units"]
    assert set(units.values()) <= UNITS
    columns: dict[str, list[Any]] = {}
    for name, value in doc["summary"].items():
        values = list(value.values()) if isinstance(value, dict) else [value]
        columns.setdefault(name, []).extend(values)
    for table in doc["tables"].values():
        for row in table:
            for name, value in row.items():
                columns.setdefault(name, []).append(value)
    for name, values in columns.items():
        if any(_number(v) for v in values):
            assert name in units, f"{name}: a quantity without a unit"
        if name in units:
            assert all(_is_figure(v) for v in values), f"{name}: {values[:5]} are not figures"
    assert set(units) <= set(columns), "a unit for a name the document does not hold"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_prints_one_document_of_the_schema(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command's ``--json`` stdout is one document of ``reviewlab.output/1`` whose
    quantities all carry a unit and are plain figures."""
    argv = COMMANDS[name]
    doc = run_json(argv, capsys)
    check_document(doc, "presets score" if argv[:2] == ["presets", "score"] else argv[0])
    assert doc["assumptions"], "a document states what its answer rests on"


def _abandoned_rate(calls: Any) -> float:
    """Abandoned calls over dispatched calls, counted from a call frame (docs/metrics.md)."""
    return float((calls["source_gap"] == SOURCE_GAP_ABANDONED).sum() / len(calls))


def test_replay_figures_agree_with_the_call_frame(capsys: pytest.CaptureFixture[str]) -> None:
    """``replay --json``: the abandoned-call rate is the share of abandoned rows of the API's
    call frame, the longest silence the episode frame's maximum, an infinite zombie time is
    ``"inf"``, and the assumptions are the replay's."""
    doc = run_json(["replay", "bundled:corpus", "--policy", "uniform:5"], capsys)
    result = replay(open_corpus("bundled:corpus"), Policy.uniform(5.0), engine="vectorized")
    summary = doc["summary"]
    assert summary["abandoned_call_rate"] == pytest.approx(_abandoned_rate(result.calls))
    assert summary["abandoned_call_rate"] > 0.0
    assert summary["max_silence_sec"] == pytest.approx(result.episodes["max_silence_sec"].max())
    assert summary["calls"] == len(result.calls)
    assert math.isinf(result.summary["zombie_sec"]) and summary["zombie_sec"] == "inf"
    assert doc["units"]["abandoned_call_rate"] == "fraction"
    assert doc["units"]["max_silence_sec"] == "seconds"
    assert doc["units"]["calls"] == "count"
    assert doc["assumptions"]["censored"] == "wedge"
    tools = {row["tool"]: row for row in doc["tables"]["tools"]}
    read = result.calls[result.calls["tool"] == "read_file"]
    assert tools["read_file"]["calls"] == len(read)


def test_dash_o_json_writes_the_same_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o FILE.json`` writes the document ``--json`` prints, and says so on stdout."""
    out = tmp_path / "replay.json"
    assert main(["replay", "bundled:incident", "-o", str(out)]) == 0
    assert f"to {out}" in capsys.readouterr().out
    printed = run_json(["replay", "bundled:incident"], capsys)
    assert json.loads(out.read_text(encoding="utf-8")) == printed


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "bundled:incident", "--table", "episodes"],
        ["incident", "bundled:incident", "--top", "0"],
    ],
)
def test_a_refused_option_prints_no_document(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An option the command refuses with ``-o FILE.json`` or ``--json`` exits 2 with one stderr
    line and writes no document."""
    out = tmp_path / "x.json"
    code = main([*argv, "-o", str(out)] if argv[0] == "replay" else [*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert not out.exists()


def test_sweep_points_agree_with_a_replay(capsys: pytest.CaptureFixture[str]) -> None:
    """``sweep --json``: the point at scale 1 has the abandoned-call rate of the base policy's
    replay, and the table holds every point."""
    doc = run_json(["sweep", "bundled:corpus", "--scale", "0.5,1,2", "--top", "1"], capsys)
    points = doc["tables"]["points"]
    assert [p["scale"] for p in points] == [0.5, 1.0, 2.0]
    assert doc["summary"]["points"] == 3
    calls = replay(open_corpus("bundled:corpus"), Policy.ouroboros(), engine="vectorized").calls
    assert points[1]["abandoned_call_rate"] == pytest.approx(_abandoned_rate(calls))
    assert sum(p["pareto"] for p in points) == doc["summary"]["pareto_points"]


def test_tune_summary_is_the_replay_of_its_policy(capsys: pytest.CaptureFixture[str]) -> None:
    """``tune --json``: the document's policy, replayed through the API, has the abandoned-call
    rate the summary states; the budgets table says every budget is met."""
    doc = run_json(["tune", "bundled:corpus"], capsys)
    policy = Policy.from_dict(doc["policy"])
    calls = replay(open_corpus("bundled:corpus"), policy, engine="vectorized").calls
    assert doc["summary"]["met"] is True
    assert doc["summary"]["abandoned_call_rate"] == pytest.approx(_abandoned_rate(calls))
    assert all(row["met"] for row in doc["tables"]["budgets"])
    limits = {row["budget"]: row["limit"] for row in doc["tables"]["budgets"]}
    assert limits["abandoned_call_rate"] == "inf"  # no budget: an infinite limit, as text


def test_presets_are_the_shipped_tables_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """``presets --json``: each preset's tool bound is the number ``presets.toml`` holds, and a
    bound it does not set is ``"inf"`` (no bound)."""
    doc = run_json(["presets"], capsys)
    shipped = tomllib.loads(data_path("presets.toml").read_text(encoding="utf-8"))["presets"]
    rows = {row["name"]: row for row in doc["tables"]["presets"]}
    assert set(rows) == set(shipped)
    for name, table in shipped.items():
        assert rows[name]["tool_sec"] == table.get("tool_sec", "inf"), name
    assert doc["summary"]["presets"] == len(shipped)


def test_presets_score_agrees_with_a_replay(capsys: pytest.CaptureFixture[str]) -> None:
    """``presets score --no-recommend --json``: ouroboros's row has the abandoned-call rate of
    its replay on the whole corpus."""
    argv = ["presets", "score", "bundled:corpus", "--no-recommend", "--preset", "codex-cli"]
    doc = run_json(argv, capsys)
    rows = {row["preset"]: row for row in doc["tables"]["scores"]}
    calls = replay(open_corpus("bundled:corpus"), Policy.ouroboros(), engine="vectorized").calls
    assert rows["reviewlab ouroboros"]["abandoned_call_rate"] == pytest.approx(
        _abandoned_rate(calls)
    )


def test_clocks_counts_agree_with_a_replay(capsys: pytest.CaptureFixture[str]) -> None:
    """``clocks --json``: the calls the tool timeout ended are the abandoned rows of the twin's
    call frame, and the clocks' counts add up to every call."""
    doc = run_json(["clocks", "bundled:corpus"], capsys)
    calls = replay(open_corpus("bundled:corpus"), Policy.ouroboros(), engine="twin").calls
    ended = doc["summary"]["ended_by"]
    assert ended["tool_timeout"] == int((calls["source_gap"] == SOURCE_GAP_ABANDONED).sum())
    assert sum(ended.values()) == doc["summary"]["calls"] == len(calls)
    assert doc["summary"]["dropped_late_median_sec"] is None  # nothing dropped: not defined


def test_incident_longest_silence_agrees_with_the_unbounded_replay(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``incident --json``: the longest silence is the longest silence of the pre-fix replay
    that lets a censored call return when last seen, and the pre-fix bound of the wedged call
    is ``"inf"``."""
    doc = run_json(["incident", "bundled:incident", "--top", "2"], capsys)
    observed = replay(
        open_corpus("bundled:incident"), Policy.unbounded(), censored="observed", engine="twin"
    )
    longest = doc["tables"]["silences"][0]
    assert doc["summary"]["longest_silence_sec"] == pytest.approx(
        observed.episodes["max_silence_sec"].max()
    )
    assert longest["completed"] is False
    assert longest["bounded_sec.pre-fix (unbounded)"] == "inf"
    assert doc["units"]["silence_sec"] == "seconds"


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "bundled:incident"],
        ["sweep", "bundled:incident", "--scale", "1"],
        ["presets", "score", "bundled:incident", "--no-recommend", "--preset", "codex-cli"],
        ["clocks", "bundled:incident"],
    ],
)
def test_json_with_a_table_output_writes_the_table_and_prints_only_the_document(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json -o FILE.csv``: the CSV is written (one row per call, point or policy) and stdout
    still holds the document alone."""
    out = tmp_path / "frame.csv"
    doc = run_json([*argv, "-o", str(out)], capsys)
    assert doc["command"] == ("presets score" if argv[0] == "presets" else argv[0])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 2  # a header and at least one row


def test_tune_that_keeps_no_budget_still_prints_its_document_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bundled corpus has 4 calls that never return among 6,308, so no timeout keeps an
    abandoned-call rate of 0.0001: ``tune --json`` exits 1, stdout is the document with
    ``met`` false, stderr one line, and ``-o`` writes no policy file."""
    policy = tmp_path / "tuned.toml"
    argv = ["tune", "bundled:corpus", "--max-abandoned-rate", "0.0001", "--json", "-o", str(policy)]
    assert main(argv) == 1
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    check_document(doc, "tune")
    assert doc["summary"]["met"] is False
    assert doc["summary"]["abandoned_call_rate"] >= 4 / 6308
    assert len(captured.err.strip().splitlines()) == 1 and "not written" in captured.err
    assert not policy.exists()


def test_tune_learned_prints_one_document_with_its_fit_and_held_out_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tune learned --json``: one document of the schema, named ``tune``, holding the fit and
    the held-out comparison, the quantile the bounds use and the learned policy."""
    corpus = tmp_path / "sized.jsonl.gz"
    assert main(["synth", "-n", "120", "--arg-effect", "1", "-o", str(corpus)]) == 0
    capsys.readouterr()
    doc = run_json(["tune", "learned", str(corpus), "--quantile", "0.95"], capsys)
    check_document(doc, "tune")
    assert set(doc["tables"]) == {"fit", "held_out"}
    assert doc["summary"]["quantile"] == 0.95
    assert doc["policy"]["learned"]["quantile"] == 0.95
