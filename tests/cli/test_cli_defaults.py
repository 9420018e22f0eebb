"""The command line restates no library default: what a replay assumes when not told is the
library's one constant, read by every command's option and every replay's signature."""

from __future__ import annotations

import argparse
import inspect

import pytest

from reviewlab import longest_silences, recommend, replay
from reviewlab.analysis import score_presets
from reviewlab.cli import build_parser
from reviewlab.core._vocab import DEFAULT_CENSORING, DEFAULT_REACTION


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its words (``"presets score"``)."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = sub
                found.update({f"{name} {k}": v for k, v in _subparsers(sub).items()})
    return found


def _default(parser: argparse.ArgumentParser, dest: str) -> object:
    return next(a.default for a in parser._actions if a.dest == dest)


@pytest.mark.parametrize("command", ["replay", "check", "clocks", "incident", "presets score"])
def test_every_censored_option_defaults_to_the_librarys_assumption(command):
    """``--censored`` left out is the library's default of every function it feeds."""
    parser = _subparsers(build_parser())[command]
    assert _default(parser, "censored") == DEFAULT_CENSORING
    assert f"default: {DEFAULT_CENSORING}" in " ".join(parser.format_help().split())


@pytest.mark.parametrize("command", ["replay", "check"])
def test_every_reaction_option_defaults_to_the_librarys_assumption(command):
    """``--reaction`` left out is the library's default."""
    parser = _subparsers(build_parser())[command]
    assert _default(parser, "reaction") == DEFAULT_REACTION


@pytest.mark.parametrize("function", [replay, recommend, longest_silences, score_presets])
def test_the_library_signatures_read_the_same_constants(function):
    """The public functions that replay take the very defaults the command line shows."""
    parameters = inspect.signature(function).parameters
    assert parameters["censored"].default == DEFAULT_CENSORING
    if "reaction" in parameters:
        assert parameters["reaction"].default == DEFAULT_REACTION
