"""``tune`` and its modes (``tune guarantee``, ``tune learned``, ``tune baselines``): each mode a
command with only its options, the library's defaults as theirs, and the former flags kept
working with one warning line (reviewlab/cli/tune*.py, reviewlab/cli/_library.py)."""

from __future__ import annotations

import argparse
import inspect
import json
from typing import Any

import pytest

import reviewlab.analysis._tune as tune_module
from reviewlab.analysis import longest_silences
from reviewlab.analysis._baselines import compare_baselines
from reviewlab.analysis._holdout import split_episodes
from reviewlab.analysis._learned import fit_learned
from reviewlab.analysis._tune import recommend
from reviewlab.analysis.sweep import make_grid
from reviewlab.cli import build_parser, main
from reviewlab.core._breaker import BreakerRule
from reviewlab.gateway import GatewayLimits
from reviewlab.resources import corpus_path

CORPUS = str(corpus_path())
LIBRARY = {
    "reviewlab.analysis._tune:recommend": recommend,
    "reviewlab.analysis._baselines:compare_baselines": compare_baselines,
    "reviewlab.analysis._learned:fit_learned": fit_learned,
    "reviewlab.analysis._holdout:split_episodes": split_episodes,
    "reviewlab.analysis.sweep:make_grid": make_grid,
    "reviewlab.core._breaker:BreakerRule": BreakerRule,
    "reviewlab.gateway._config:GatewayLimits": GatewayLimits,
    "reviewlab.analysis._incident:longest_silences": longest_silences,
}
"""The functions the commands' options feed, by the name the options give."""
MODES = ("tune", "tune guarantee", "tune learned", "tune baselines")


def _parser(name: str) -> argparse.ArgumentParser:
    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return commands.choices[name]


def _all_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's and sub-command's parser, by its words (``presets score``)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        found[name] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(sub, f"{name} {sub_name}".strip())

    walk(build_parser(), "")
    return found


def _library_options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if hasattr(a, "library_target")]


FED = sorted(name for name, parser in _all_parsers().items() if _library_options(parser))
"""The commands with an option that feeds a library parameter."""


def _shown(value: Any) -> str:
    """How a help text writes a default (independently of the CLI's helper)."""
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def test_the_tune_modes_sweep_and_presets_score_feed_the_library():
    """The commands whose options restated library defaults now feed the library instead."""
    assert set(MODES) | {"sweep", "presets score"} <= set(FED)


@pytest.mark.parametrize("name", FED)
def test_each_option_fed_to_the_library_defaults_to_the_librarys_default(name):
    """Every option that feeds a library parameter is named by it (its dest), is left unset
    when not given (so the library's default applies), and its help states the library's
    default, read here from the function's signature."""
    parser = _all_parsers()[name]
    options = _library_options(parser)
    argv = {"tune guarantee": [CORPUS, "-p", "0.9"], "gateway": ["--config", "x.json"]}.get(
        name, [CORPUS]
    )
    parsed = parser.parse_args(argv)
    for action in options:
        function = LIBRARY[action.library_target]  # type: ignore[attr-defined]
        parameter = inspect.signature(function).parameters[action.dest]
        if action.dest == "guarantee":
            continue  # required: it has no default to take
        assert getattr(parsed, action.dest) is None, action.dest
        default = parameter.default
        if action.dest == "max_timeout_coverage_loss":  # None stands for the module's constant
            assert default is None
            default = tune_module.DEFAULT_MAX_TIMEOUT_COVERAGE_LOSS
        assert f"(default {_shown(default)}" in " ".join(action.help.split()) % {  # type: ignore[union-attr]
            "library_default": action.library_default  # type: ignore[attr-defined]
        }, action.dest


def test_tune_passes_only_what_was_given_and_the_library_checks_it(monkeypatch, capsys):
    """``tune CORPUS`` calls recommend with the base and the prices alone (every other
    parameter at the library's default); a given option reaches it unchanged."""
    calls: list[dict[str, Any]] = []

    def spy(corpus: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        raise KeyboardInterrupt  # stop before printing: the call is what is checked

    monkeypatch.setattr(tune_module, "recommend", spy)
    assert main(["tune", CORPUS]) == 130
    assert (
        main(["tune", CORPUS, "--confidence", "0.9", "--max-added-abandoned-rate", "none"]) == 130
    )
    assert set(calls[0]) == {"base", "prices"} and calls[0]["prices"] is None
    assert calls[1]["confidence"] == 0.9 and calls[1]["max_added_abandoned_rate"] is None
    capsys.readouterr()


@pytest.mark.parametrize(
    ("former", "today"),
    [
        (["tune", CORPUS, "--baselines", "--held-out", "0.4"], ["tune", "baselines", CORPUS]),
        (["tune", CORPUS, "--guarantee=0.9", "--guarantee-confidence", "0.99"], None),
    ],
)
def test_a_former_mode_flag_runs_the_modes_command_after_one_warning(former, today, capsys):
    """``tune --baselines`` (and ``--guarantee=P``) runs the mode's command: the same document,
    with one warning line on stderr naming the command."""
    today = today or ["tune", "guarantee", CORPUS, "-p", "0.9", "--certificate-confidence", "0.99"]
    if "--held-out" in former:
        today = [*today, "--held-out", "0.4"]
    assert main([*former, "--json"]) == 0
    old = capsys.readouterr()
    assert main([*today, "--json"]) == 0
    new = capsys.readouterr()
    [warning] = old.err.splitlines()
    assert (
        warning.startswith("reviewlab: warning: 'tune --") and f"'{' '.join(today[:2])}'" in warning
    )
    assert new.err == "" and json.loads(old.out) == json.loads(new.out)


def test_two_former_mode_flags_at_once_are_one_error_line(capsys):
    """``tune --baselines --guarantee P`` names the conflict in one line, exit 2."""
    assert main(["tune", CORPUS, "--baselines", "--guarantee", "0.9"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("reviewlab: error: --baselines: compares the searched recommendation")


def test_each_mode_takes_only_its_own_options():
    """The modes' options do not collide: an option two modes share means the same thing (it
    feeds the same library parameter), and the options a mode does not use are not its own."""
    flags = {
        name: {a.option_strings[-1]: a for a in _parser(name)._actions if a.option_strings}
        for name in MODES
    }
    assert "--objective" not in flags["tune guarantee"]  # the budgets are reported, not searched
    assert "--held-out" not in flags["tune"] and "--held-out" not in flags["tune guarantee"]
    assert "--max-abandoned-rate" not in flags["tune learned"]
    assert "--probability" not in flags["tune"] and "--quantile" not in flags["tune baselines"]
    for name in MODES:
        for other in MODES:
            for flag in set(flags[name]) & set(flags[other]) - {"-h", "--help"}:
                mine, theirs = flags[name][flag], flags[other][flag]
                assert mine.dest == theirs.dest, (name, other, flag)
                if flag not in ("--min-calls", "--held-out", "--seed"):  # same name, same job
                    assert getattr(mine, "library_target", None) == getattr(
                        theirs, "library_target", None
                    ), (name, other, flag)
