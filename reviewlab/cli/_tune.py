"""``reviewlab tune``: per tool, the shortest timeout within the budgets, and what it buys.

The search of :func:`~reviewlab.analysis._tune.recommend`, on the opened corpus as a user would
call it: the tuner replays the compiled columns and fits its duration and tail models to them,
so no ``Episode`` object is built (except to price rounds with ``--prices``). The other ways
to choose timeouts are commands of their own, each with only its options (docs/guide/cli.md,
"tune and its modes"): ``tune guarantee``, ``tune learned``, ``tune baselines``.
:func:`legacy_spelling` keeps the flags they replaced working, with one line of warning.
"""

from __future__ import annotations

import argparse
import sys

from reviewlab.cli._args import EXAMPLE_CORPUS
from reviewlab.cli._command import Command
from reviewlab.cli._errors import PROG, UserError
from reviewlab.cli._tune_shared import (
    budget_options,
    connect_options,
    corpus_options,
    output_option,
    run_recommendation,
)


def _arguments(p: argparse.ArgumentParser) -> None:
    corpus_options(p)
    budget_options(p)
    connect_options(p)
    output_option(p, "recommended")


def cmd_tune(args: argparse.Namespace) -> int:
    """Recommend a policy for the corpus within the budgets; print the answer and the figures;
    ``-o`` writes the policy file (exit 1, nothing written, when no candidate keeps them)."""
    return run_recommendation(args)


_MODE_FLAGS = {"--guarantee": "guarantee", "--learned": "learned", "--baselines": "baselines"}
"""The flags that chose a mode before the modes were commands, and the command of each."""
_RENAMED = {
    "--guarantee": "--probability",
    "--guarantee-confidence": "--certificate-confidence",
    "--learned-quantile": "--quantile",
}
"""Options of a mode that the mode's command spells without the mode's name."""


def legacy_spelling(words: list[str]) -> list[str] | None:
    """``tune CORPUS --guarantee P`` (``--learned``, ``--baselines``): the words after ``tune``
    as the mode's command reads them (``guarantee CORPUS --probability P``), with one warning
    line on stderr; ``None`` when ``words`` use no such flag. Two modes at once are refused."""
    modes: list[str] = []
    rest: list[str] = []
    for word in words:
        flag, eq, value = word.partition("=")
        if flag in _MODE_FLAGS:
            modes.append(flag)
            if flag != "--guarantee":  # a switch; --guarantee carries the probability
                continue
        rest.append(_RENAMED[flag] + eq + value if flag in _RENAMED else word)
    if not modes:
        return None
    if "--learned" in modes and len(set(modes)) > 1:
        raise UserError("--learned: fits its own policy; drop --guarantee and --baselines")
    if len(set(modes)) > 1:
        raise UserError("--baselines: compares the searched recommendation; drop --guarantee")
    mode = _MODE_FLAGS[modes[0]]
    sys.stderr.write(
        f"{PROG}: warning: 'tune {modes[0]}' is now the command 'tune {mode}' "
        f"(reviewlab tune {mode} --help); the old spelling will go\n"
    )
    return [mode, *rest]


TUNE = Command(
    name="tune",
    help="per tool, the shortest timeout whose timeout-caused coverage loss and abandoned-call "
    "rate stay within budget, and what that buys",
    arguments=_arguments,
    handler=cmd_tune,
    examples=f"  reviewlab tune {EXAMPLE_CORPUS} --max-timeout-coverage-loss 0.005 -o tuned.toml\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} --objective cost --prices sample\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} --max-abandoned-rate 0.002 --objective max_silence --json\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} --kind query_code=side_effect "
    "--allow-abandoning query_code",
    rewrite=legacy_spelling,
)
