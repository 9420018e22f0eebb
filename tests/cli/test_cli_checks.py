"""What the user typed, checked the same way everywhere (:mod:`reviewlab.cli._checks`): tool names
with the one did-you-mean, options an invocation would ignore refused, tables with their
assumptions and their policy's rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewlab.cli import main

TYPO = "[policy]\ndefault_sec = 60\n[policy.tools_sec]\nraed_file = 5\n"


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def typo(tmp_path: Path) -> Path:
    """A policy file that bounds ``raed_file`` (meant: read_file)."""
    path = tmp_path / "typo.toml"
    path.write_text(TYPO, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "bundled:corpus", "--policy", "{typo}"],
        ["sweep", "bundled:corpus", "--base", "{typo}", "--scale", "1"],
        ["incident", "bundled:incident", "--top", "1", "--policy", "{typo}"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_policy_file_naming_an_unknown_tool_warns_and_strict_refuses(
    argv: list[str], typo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo'd tool in a policy file is a warning on stderr naming it and read_file; with
    ``--strict`` it is a one-line error."""
    argv = [a.format(typo=typo) for a in argv]
    code, out, err = _run(capsys, argv)
    assert code == 0 and out
    assert err.startswith("reviewlab: warning: ") and "raed_file" in err
    assert "did you mean read_file" in err and "--strict" in err
    code, out, err = _run(capsys, [*argv, "--strict"])
    assert code == 2 and not out
    assert err.startswith("reviewlab: error: ") and "did you mean read_file" in err
    assert len(err.strip().splitlines()) == 1


def test_a_preset_or_a_clean_file_gives_no_warning(tmp_path: Path, capsys) -> None:
    """Only unknown names warn: ``ouroboros`` and a file naming known tools are silent."""
    clean = tmp_path / "clean.toml"
    clean.write_text("[policy]\ndefault_sec = 60\n[policy.tools_sec]\nread_file = 5\n")
    for policy in ("ouroboros", str(clean)):
        code, _, err = _run(capsys, ["replay", "bundled:corpus", "--policy", policy, "--strict"])
        assert code == 0 and err == ""


def test_a_hedge_on_a_tool_the_corpus_never_calls_is_refused(capsys) -> None:
    """``sweep --hedge raed_file=3`` says which tool was meant, like ``--tool`` does."""
    code, _, err = _run(capsys, ["sweep", "bundled:corpus", "--hedge", "raed_file=3"])
    assert code == 2 and "--hedge" in err and "did you mean read_file" in err


def test_a_tool_option_on_a_tool_the_corpus_never_calls_names_the_options(capsys) -> None:
    """``sweep --tool raed_file=3``: one line naming --tool, the meant tool and
    --allow-unknown-tools (the library's parameter names never reach the user)."""
    code, _, err = _run(capsys, ["sweep", "bundled:corpus", "--tool", "raed_file=3"])
    assert code == 2 and err.startswith("reviewlab: error: --tool: the corpus never calls")
    assert "did you mean read_file" in err and "(--allow-unknown-tools sweeps it anyway)" in err
    assert "grid" not in err and "allow_unknown_tools" not in err


@pytest.mark.parametrize(
    "argv, option",
    [
        (["synth", "--incident", "-n", "5", "-o", "{tmp}/i.jsonl"], "-n"),
        (["synth", "--incident", "--arg-effect", "1", "-o", "{tmp}/i.jsonl"], "--arg-effect"),
        (["replay", "bundled:corpus", "--seed", "3"], "--seed"),
        (["replay", "bundled:corpus", "--table", "tools"], "--table"),
        (["incident", "bundled:incident", "--seed", "3"], "--seed"),
        (["sweep", "bundled:corpus", "--scale", "1", "--hedge-share", "0.2"], "--hedge-share"),
        (
            ["sweep", "bundled:corpus", "--scale", "1", "--breaker-cooldown", "3"],
            "--breaker-cooldown",
        ),
        (
            ["sweep", "bundled:corpus", "--scale", "1", "--connect-timeout", "3"],
            "--connect-timeout",
        ),
        (["sweep", "bundled:corpus", "--scale", "1", "--seed", "2"], "--seed"),
        (
            ["sweep", "bundled:corpus", "--scale", "1", "--allow-unknown-tools"],
            "--allow-unknown-tools",
        ),
        (
            ["convert", "bundled:incident", "{tmp}/c.parquet", "--rows-per-partition", "9"],
            "--rows-per-partition",
        ),
    ],  # fmt: skip
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_an_option_the_invocation_would_ignore_is_an_error(
    argv: list[str], option: str, tmp_path: Path, capsys
) -> None:
    """Every option a command would silently drop is one line naming it, and nothing is written."""
    code, out, err = _run(capsys, [a.format(tmp=tmp_path) for a in argv])
    assert code == 2, out
    assert err.startswith(f"reviewlab: error: {option}: ") and "would ignore it" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["tune", "bundled:corpus", "--held-out", "0.3"], "--held-out"),
        (["tune", "bundled:corpus", "--quantile", "0.9"], "--quantile"),
        (["tune", "bundled:corpus", "--certificate-confidence", "0.9"], "--certificate-confidence"),
        (["tune", "learned", "bundled:corpus", "--objective", "wall_p99"], "--objective"),
        (["tune", "bundled:corpus", "--learned", "--objective", "wall_p99"], "--objective"),
        (["tune", "baselines", "bundled:corpus", "--scheduler", "tcp://h:1"], "--scheduler"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_an_option_of_another_tune_mode_is_refused_by_name(
    argv: list[str], option: str, capsys
) -> None:
    """Each mode of tune takes only its own options: another mode's option (in today's or the
    former spelling) exits 2 with an error line naming it, before any work."""
    code, out, err = _run(capsys, argv)
    assert code == 2 and out == ""
    [error] = [line for line in err.splitlines() if line.startswith("reviewlab: error: ")]
    assert f"unrecognized arguments: {option}" in error


def test_a_hedged_and_breaking_replay_shows_their_rows_in_every_table(
    tmp_path: Path, capsys
) -> None:
    """``replay --policy hedged.toml`` prints the hedge and breaker rows in the summary and their
    columns in the per-tool table, each table with its assumptions."""
    policy = tmp_path / "hedged.toml"
    policy.write_text(
        "[policy]\ndefault_sec = 600\n[hedges.read_file]\nafter_sec = 0.5\nmax_share = 0.05\n"
        "[breaker]\nconsecutive = 2\ncooldown_rounds = 1\n",
        encoding="utf-8",
    )
    code, out, _ = _run(
        capsys, ["replay", "bundled:corpus", "--policy", str(policy), "--engine", "twin"]
    )
    assert code == 0
    assert "hedged calls" in out and "calls the breaker withheld" in out
    assert "hedged_calls" in out and "withheld_calls" in out
    assert out.count("assumes: censored=wedge") == 2


def test_sweep_names_the_objectives_of_its_pareto_flag(capsys) -> None:
    """The sweep table's heading names what ``pareto`` trades, default or ``--pareto``."""
    argv = ["sweep", "bundled:corpus", "--tool", "read_file=5,30"]
    _, out, _ = _run(capsys, argv)
    assert (
        "pareto: on the Pareto front on coverage lost to timeouts, wall p95, longest silence "
        "(all minimised)" in out
    )
    _, out, _ = _run(capsys, [*argv, "--pareto", "wall_p95,max_silence"])
    assert "pareto: on the Pareto front on wall p95, longest silence (all minimised)" in out
    assert "assumes: censored=wedge" in out


def test_tune_names_the_budget_it_applied_and_every_objective_that_changed(capsys) -> None:
    """``tune``'s answer opens with the budgets applied, in percent, and its saved line names
    every objective the recommendation changed."""
    _, out, _ = _run(capsys, ["tune", "bundled:corpus", "--max-timeout-coverage-loss", "0.005"])
    first = out.splitlines()[0]
    assert first.startswith("within: coverage lost to timeouts ≤ 0.5 %")
    saved = next(line for line in out.splitlines() if line.startswith("saved (against"))
    assert "wall max" in saved and "longest silence" in saved  # the real gain, named
    assert out.count("assumes: censored=wedge") == 3  # budgets, per tool, whole policy


def test_a_hedging_sweep_prints_what_the_hedges_cost(capsys) -> None:
    """A grid that hedges shows, beside each point's delay, its hedged calls and extra-call
    share."""
    code, out, _ = _run(capsys, ["sweep", "bundled:corpus", "--hedge", "read_file=0.5,2"])
    header = next(line for line in out.splitlines() if line.startswith("hedge.read_file"))
    assert code == 0 and {"hedges", "extra_call_share"} <= set(header.split())
