"""The options of ``reviewlab sweep`` that describe its grid, and the breaker axis they give.

Each axis of :func:`~reviewlab.analysis.sweep.make_grid` is one option: per-tool timeouts
(``--tool``), scales of the base (``--scale``), narrowings, hedge delays (``--hedge``) and
breaker thresholds (``--breaker``), with the base policy and the settings those axes read.
Invariant: an option's ``dest`` is the library parameter it feeds, so a library error about
that parameter names the option (:mod:`reviewlab.cli._errors`). The handler:
:mod:`reviewlab.cli._sweep`.
"""

from __future__ import annotations

import argparse
from typing import Any

from reviewlab.cli._args import POLICY_HELP, numbers
from reviewlab.cli._errors import UserError
from reviewlab.cli._library import given, library_option
from reviewlab.core._vocab import BREAKER_SCOPES


def grid_options(p: argparse.ArgumentParser) -> None:
    """The grid's timeout axes: per-tool timeouts, scales of the base, narrowings; the base."""
    # An option's dest is the library's parameter it feeds, so a library error about that
    # parameter names the option (reviewlab.cli._errors.option_for).
    p.add_argument(
        "--tool",
        dest="tools",
        action="append",
        default=[],
        metavar="TOOL=SEC,...",
        help="timeouts to try for one tool, e.g. read_file=5,30,120 (repeatable)",
    )
    p.add_argument(
        "--scale",
        dest="scales",
        default=None,
        metavar="F,...",
        help="multipliers of the base policy, e.g. 0.5,1,2",
    )
    p.add_argument(
        "--narrowing",
        dest="narrowings",
        default=None,
        metavar="MODE,...",
        help="narrowing modes: inherit, none, unbounded, reserve:SEC, fraction:F",
    )
    p.add_argument("--base", default=None, metavar="TOML", help="base policy; " + POLICY_HELP)


def hedge_and_breaker_options(p: argparse.ArgumentParser) -> None:
    """The grid's hedge and breaker axes, their settings, and the seed of what hedges draw."""
    p.add_argument(
        "--hedge",
        dest="hedges",
        action="append",
        default=[],
        metavar="TOOL=SEC,...",
        help="hedge delays to try for one tool, e.g. read_file=0.5,1,2: a second attempt "
        "starts after that long without an answer (repeatable; the tool is marked idempotent)",
    )
    library_option(
        p,
        "--hedge-share",
        target="reviewlab.analysis.sweep:make_grid",
        type=float,
        metavar="RATE",
        help="the largest share of a hedged tool's calls that may be hedged (default "
        "%(library_default)s; only with --hedge)",
    )
    p.add_argument(
        "--breaker",
        default=None,
        metavar="N,...",
        help="breaker thresholds to try: consecutive abandonments of a tool that withhold it "
        "(0: no breaker), e.g. 0,3,5",
    )
    library_option(
        p,
        "--breaker-cooldown",
        dest="cooldown_rounds",
        target="reviewlab.core._breaker:BreakerRule",
        type=int,
        metavar="ROUNDS",
        help="model rounds a tripped breaker withholds its tool (default %(library_default)s; "
        "only with --breaker)",
    )
    library_option(
        p,
        "--breaker-scope",
        dest="scope",
        target="reviewlab.core._breaker:BreakerRule",
        choices=BREAKER_SCOPES,
        help="where a breaker's count lives: each episode or the reviewer slot (default "
        "%(library_default)s; only with --breaker)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of what the replays draw (hedges' second attempts; default 0)",
    )


def breaker_grid(args: argparse.Namespace) -> list[Any]:
    """``--breaker 0,3,5`` → no breaker, and breakers tripping after 3 and 5 abandonments."""
    from reviewlab.core._breaker import BreakerRule

    rules: list[Any] = []
    for value in numbers("--breaker", args.breaker):
        if value != int(value) or value < 0:
            raise UserError(f"--breaker: expected whole numbers >= 0, got {value:g}")
        if value == 0:
            rules.append(None)
            continue
        # A refused cooldown names cooldown_rounds: the dest of --breaker-cooldown.
        rules.append(BreakerRule(int(value), **given(args, "cooldown_rounds", "scope")))
    return rules
