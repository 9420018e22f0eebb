"""``reviewlab tune``'s safety and certification options: each reaches the library, and bad
values are one-line errors naming the option (reviewlab/cli/_tune.py and its modes)."""

from __future__ import annotations

import json

import pytest

from reviewlab.cli import main
from reviewlab.core._policy import Policy
from reviewlab.resources import corpus_path

CORPUS = str(corpus_path())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--min-calls", "0"], "--min-calls: expected a whole number of calls >= 1"),
        (["--allow-abandoning", "raed_file"], "(did you mean read_file?)"),
        (["--kind", "edit"], "--kind: expected TOOL=read_only or TOOL=side_effect"),
        (["--kind", "edit=rw"], "--kind: tool_kinds.edit: expected one of read_only"),
        (["--max-added-abandoned-rate", "2"], "--max-added-abandoned-rate: expected a rate"),
    ],
)
def test_bad_values_are_one_line_errors(options, message, capsys):
    """Each bad value exits 2 with one stderr line naming the option."""
    assert main(["tune", CORPUS, *options]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


@pytest.mark.parametrize("value", ["1.5", "0"])
def test_a_guarantee_outside_zero_one_is_one_line_naming_the_option(value, capsys):
    """``tune guarantee -p`` outside (0, 1) exits 2 with one line naming --probability."""
    assert main(["tune", "guarantee", CORPUS, "-p", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "reviewlab: error: --probability: expected a probability strictly between 0 and 1, "
        f"got {float(value)!r}"
    ]


def test_the_former_guarantee_flag_still_works_after_one_warning_line(capsys):
    """``tune CORPUS --guarantee P`` runs ``tune guarantee`` (the same certificates), with one
    warning line on stderr naming the command that replaced it."""
    assert main(["tune", CORPUS, "--guarantee", "0.95", "--json"]) == 0
    former = capsys.readouterr()
    assert main(["tune", "guarantee", CORPUS, "--probability", "0.95", "--json"]) == 0
    today = capsys.readouterr()
    assert former.err.splitlines() == [
        "reviewlab: warning: 'tune --guarantee' is now the command 'tune guarantee' "
        "(reviewlab tune guarantee --help); the old spelling will go"
    ]
    assert today.err == ""
    assert json.loads(former.out) == json.loads(today.out)


def test_guarantee_writes_the_certified_policy_and_states_the_certificates(tmp_path, capsys):
    """--guarantee prints each tool's certificate and writes the certified timeouts, with the
    kinds declared by --kind kept in the policy file."""
    out = tmp_path / "certified.toml"
    code = main(
        [
            "tune",
            "guarantee",
            CORPUS,
            "-p",
            "0.95",
            "--kind",
            "search_code=side_effect",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "certificates:" in text and "at confidence 0.999" in text
    policy = Policy.load(out)
    assert policy.kind_of("search_code") == "side_effect"
    assert 0 < policy.timeout_for(None, "read_file") < 5.0


def test_the_rules_reach_the_output_per_tool(capsys):
    """The default run states the rules, names each tool's standing and the added-abandonment
    budget per tool and overall."""
    assert main(["tune", CORPUS, "--min-calls", "1000"]) == 0
    text = capsys.readouterr().out
    assert "fewer than 1000 recorded calls keeps the base timeout" in text
    assert "list_files: kept base 600 s: 969 call(s) < min_calls 1000" in text
    assert "abandoned calls added (all tools)" in text
    assert "abandoned calls added (read_file)" in text
    assert "whole policy (every tool changed at once):" in text


def test_learned_fits_compares_on_held_out_and_writes_a_policy_replay_reads(tmp_path, capsys):
    """``synth --arg-effect`` writes argument-dependent durations; ``tune learned`` prints the
    fit, the held-out comparison and a verdict, and writes a policy ``replay --policy`` runs."""
    corpus = tmp_path / "sized.jsonl.gz"
    assert main(["synth", "-n", "300", "--arg-effect", "1", "-o", str(corpus)]) == 0
    out = tmp_path / "learned.toml"
    assert main(["tune", "learned", str(corpus), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Weibull AFT" in text and "held-out comparison with the static per-tool" in text
    assert "gain:" in text or "no gain found" in text
    assert "[learned.models.read_file]" in out.read_text()
    assert main(["replay", str(corpus), "--policy", str(out)]) == 0
    assert main(["tune", str(corpus), "--learned", "--guarantee", "0.9"]) == 2  # two modes
    assert "--learned: fits its own policy" in capsys.readouterr().err
