"""A library error names its parameter as an attribute; the command line prints the option of
that name (reviewlab/cli/_errors.py), and never reads the library's wording."""

from __future__ import annotations

import argparse
import ast
import pickle
from pathlib import Path

import pytest

import reviewlab.cli
from reviewlab.cli import build_parser, main
from reviewlab.cli._errors import EXIT_USER_ERROR, option_for, run_reporting
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import PolicyError
from reviewlab.resources import corpus_path

CORPUS = str(corpus_path())
CLI_DIR = Path(reviewlab.cli.__file__).parent


def _toy_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toy")
    parser.add_argument("--time-scale", type=float)
    parser.add_argument("-t", "--tool", dest="tools", action="append")
    actions = parser.add_subparsers(dest="action")
    score = actions.add_parser("score")
    score.add_argument("--held-out", type=float)
    return parser


def test_option_for_reads_the_dest_of_the_parsers_options():
    """The option is the one whose dest is the parameter: its long spelling, a field path kept
    after it, a sub-command's option found too, and nothing for a parameter no option feeds."""
    parser = _toy_parser()
    assert option_for("time_scale", parser) == "--time-scale"
    assert option_for("tools", parser) == "--tool"
    assert option_for("tools.read_file", parser) == "--tool read_file"
    assert option_for("held_out", parser) == "--held-out"
    assert option_for("slots", parser) is None
    assert option_for("time_scale", None) is None


def test_a_parameter_error_keeps_its_parts_text_and_type_across_a_pickle():
    """``str()`` is ``parameter: reason``; a nested field reads ``outer.parameter``; a pickled
    error (a Dask worker's) comes back whole and of its type."""
    error = PolicyError("cooldown_sec", "must be positive and finite, got 0")
    assert isinstance(error, ParameterError) and isinstance(error, ValueError)
    assert str(error) == "cooldown_sec: must be positive and finite, got 0"
    nested = error.within("breaker")
    assert type(nested) is PolicyError and nested.parameter == "breaker.cooldown_sec"
    back = pickle.loads(pickle.dumps(nested))
    assert (type(back), back.parameter, back.reason) == (
        PolicyError,
        nested.parameter,
        error.reason,
    )


def _options() -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    """Every option of every command and sub-command (not --help)."""
    found = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(sub, f"{name} {sub_name}".strip())
            elif action.option_strings and action.dest not in ("help", "debug"):
                found.append((name, parser, action))

    walk(build_parser(), "")
    return found


def test_every_option_names_itself_for_a_library_error_about_its_dest(capsys):
    """For every option of every command, a ParameterError about the parameter the option
    feeds (its dest) is one stderr line naming the option's long spelling, exit status 2."""
    checked = 0
    for _, parser, action in _options():
        if option_for(action.dest, parser) != max(action.option_strings, key=len):
            continue  # two options share a dest (a deprecated spelling): the first one names it

        def handler(_args: argparse.Namespace, dest: str = action.dest) -> int:
            raise ParameterError(dest, "refused for the test")

        status = run_reporting(handler, argparse.Namespace(), parser)
        flag = max(action.option_strings, key=len)
        assert status == EXIT_USER_ERROR
        assert capsys.readouterr().err == f"reviewlab: error: {flag}: refused for the test\n"
        checked += 1
    assert checked > 60  # every command's options, not a handful


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["replay", CORPUS, "--engine", "real", "--time-scale", "0"], "--time-scale: expected a"),
        (["replay", CORPUS, "--slots", "2"], "--slots: not an option of Vectorized"),
        (["sweep", CORPUS, "--threads", "2", "--engine", "twin"], "--threads: engine='twin'"),
        (["sweep", CORPUS, "--scale", "0"], "--scale: must be positive"),
        (["sweep", CORPUS, "--hedge", "read_file=-1"], "--hedge read_file: must be positive"),
        (["tune", CORPUS, "--confidence", "1.5"], "--confidence: expected a probability"),
        (["tune", CORPUS, "--objective", "fastest"], "--objective: expected one of"),
        (["tune", CORPUS, "--min-calls", "0"], "--min-calls: expected a whole number"),
        (["presets", "score", CORPUS, "--held-out", "1"], "--held-out: expected a share"),
    ],
)
def test_the_librarys_refusals_come_out_naming_the_commands_option(argv, line, capsys):
    """A value the library refuses by its parameter's name is one line naming the option the
    user typed (the library's check, not a second one in the command line)."""
    assert main(argv) == EXIT_USER_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"reviewlab: error: {line}"), err


def test_the_command_line_never_reads_an_errors_text():
    """No module of reviewlab/cli imports ``re`` or strips a prefix from an error's text: the
    option comes from the error's ``parameter``."""
    for path in sorted(CLI_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert "re" not in names, f"{path.name}:{node.lineno} imports re"
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("removeprefix", "replace", "partition", "split")
                and isinstance(node.func.value, ast.Call)
                and getattr(node.func.value.func, "id", "") in ("str", "one_line")
            ):
                raise AssertionError(f"{path.name}:{node.lineno} rewrites an error's text")
