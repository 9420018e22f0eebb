"""``reviewlab check CORPUS --policy POLICY --max-...``: a CI gate on a recording's budgets.

The handler replays the corpus under the policy with :func:`~reviewlab.engines._replay.replay`
(the vectorized engine, as ``reviewlab replay`` by default) and compares three figures of its
summary (docs/metrics.md) with the budgets given: the abandoned-call rate
(``abandoned_call_rate``), the coverage lost to timeouts (``timeout_coverage_loss_rate``) and
the longest silence (``max_silence_sec``, the silence ``reviewlab incident`` ranks:
:data:`reviewlab.ui._numbers.SILENCE`).

Exit status: 0 when every budget given holds; 1 when one breaks, with one line per broken
budget naming its figure (``abandoned-call rate 0.083 > budget 0.05``); 2 on bad input (a
malformed corpus, a bad policy, a bad budget: one line naming what and where). docs/ci-gate.md
shows it in a GitHub Actions job.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from typing import Any

from reviewlab.cli._args import (
    CORPUS_HELP,
    POLICY_HELP,
    censored_option,
    echo,
    policy_arg,
    positive_seconds,
    rate,
    reaction_option,
)
from reviewlab.cli._checks import check_policy_file, strict_option
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import computing_on, open_for, require_episodes
from reviewlab.cli._errors import PROG, UserError
from reviewlab.cli._json import document, emit, json_option

_EXIT_BUDGET_BROKEN = 1
"""The exit status when a budget breaks (2 stays bad input, as in every command)."""


@dataclass(frozen=True)
class _Budget:
    """One budget the gate can hold a replay to: its option and the summary key it bounds."""

    flag: str
    metric: str
    is_rate: bool

    @property
    def dest(self) -> str:
        """The attribute of the parsed arguments that holds this budget."""
        return self.flag.removeprefix("--").replace("-", "_")


_BUDGETS = (
    _Budget("--max-abandoned-call-rate", "abandoned_call_rate", is_rate=True),
    _Budget("--max-timeout-coverage-loss", "timeout_coverage_loss_rate", is_rate=True),
    _Budget("--max-silence", "max_silence_sec", is_rate=False),
)
"""The budgets, in the order the gate reports them."""


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help=CORPUS_HELP + ", e.g. a gateway's --record folder")
    p.add_argument("--policy", required=True, metavar="POLICY", help=POLICY_HELP)
    p.add_argument(
        "--max-abandoned-call-rate",
        type=float,
        default=None,
        metavar="R",
        help="budget: the largest abandoned-call rate (abandoned / dispatched calls), in [0, 1]",
    )
    p.add_argument(
        "--max-timeout-coverage-loss",
        type=float,
        default=None,
        metavar="L",
        help="budget: the largest share of requested read lines lost to timeouts, in [0, 1]",
    )
    p.add_argument(
        "--max-silence",
        type=float,
        default=None,
        metavar="SEC",
        help="budget: the longest silence of any episode (between two model sends), in seconds",
    )
    censored_option(p)
    reaction_option(p)
    strict_option(p)
    json_option(p)


def _limits(args: argparse.Namespace) -> dict[_Budget, float]:
    """The budgets given, checked (a rate in [0, 1], seconds positive); at least one."""
    limits: dict[_Budget, float] = {}
    for budget in _BUDGETS:
        value = getattr(args, budget.dest)
        if value is None:
            continue
        if budget.is_rate:
            rate(value, budget.flag)
        else:
            positive_seconds(value, budget.flag)
        limits[budget] = value
    if not limits:
        raise UserError(
            "check: no budget given; give at least one of "
            + ", ".join(budget.flag for budget in _BUDGETS)
        )
    return limits


def _number(value: float, budget: _Budget) -> str:
    """A figure as the flag takes it: a rate as a fraction, seconds with their unit."""
    text = "inf" if math.isinf(value) else f"{value:.4g}"
    return text if budget.is_rate else f"{text} s"


def _verdict(budget: _Budget, figure: float, limit: float) -> tuple[bool, str]:
    """Whether ``figure`` keeps ``limit``, and the line saying so (a figure that is not
    defined, NaN, breaks nothing: the corpus has nothing it measures)."""
    from reviewlab.ui._numbers import label_of

    label = label_of(budget.metric)
    if math.isnan(figure):
        return True, f"{label} not defined (nothing to measure) under budget {limit:g}"
    held = figure <= limit
    sign = "<=" if held else ">"
    return held, f"{label} {_number(figure, budget)} {sign} budget {_number(limit, budget)}"


def cmd_check(args: argparse.Namespace) -> int:
    """Replay the corpus under ``--policy``; exit 0 when every budget holds, 1 naming each
    broken one with its figure."""
    limits = _limits(args)
    policy = policy_arg(args.policy)
    from reviewlab.engines._replay import replay

    corpus = open_for(args.corpus)
    require_episodes(corpus, args.corpus)
    check_policy_file(args.policy, policy, corpus.tools, strict=args.strict)
    with computing_on(args.corpus):
        result = replay(
            corpus, policy, engine="vectorized", censored=args.censored, reaction=args.reaction
        )
    verdicts = {
        budget: _verdict(budget, float(result.summary[budget.metric]), limit)
        for budget, limit in limits.items()
    }
    broken = [line for held, line in verdicts.values() if not held]
    if args.json:
        emit(_document(result, limits, verdicts), stdout=True)
        for line in broken:
            sys.stderr.write(f"{PROG}: budget broken: {line}\n")
    else:
        from reviewlab.ui._tables import assumptions_line

        echo(f"check {args.corpus} under {policy.label}: {len(corpus):,} episode(s)")
        echo(assumptions_line(result.assumptions))
        for held, line in verdicts.values():
            echo(("held:   " if held else "BROKEN: ") + line)
        echo(
            f"{len(broken)} of {len(verdicts)} budget(s) broken"
            if broken
            else f"every budget holds ({len(verdicts)})"
        )
    return _EXIT_BUDGET_BROKEN if broken else 0


def _document(
    result: Any, limits: dict[_Budget, float], verdicts: dict[_Budget, tuple[bool, str]]
) -> dict[str, Any]:
    """The ``--json`` document: the replay's summary, each budget (``budget.METRIC``, in the
    metric's unit) and whether it held (``held.METRIC``), and the verdict lines."""
    budgets = {f"budget.{budget.metric}": limit for budget, limit in limits.items()}
    held = {f"held.{budget.metric}": verdict[0] for budget, verdict in verdicts.items()}
    broken = sum(not verdict[0] for verdict in verdicts.values())
    return document(
        "check",
        assumptions=result.assumptions,
        summary={
            "passed": broken == 0,
            "budgets_broken": broken,
            **budgets,
            **held,
            **result.summary,
        },
        tables={
            "budgets": [
                {
                    "flag": budget.flag,
                    "metric": budget.metric,
                    "held": verdict[0],
                    "line": verdict[1],
                }
                for budget, verdict in verdicts.items()
            ],
        },
        units={"budgets_broken": "count"},
        policy=result.policy,
        notes=["budget.METRIC: the limit given, in the unit of METRIC; held.METRIC: kept"],
    )


CHECK = Command(
    name="check",
    help="a CI gate: replay a corpus under a policy; exit 0 when every budget holds, 1 naming "
    "each broken budget with its figure, 2 on bad input",
    arguments=_arguments,
    handler=cmd_check,
    examples="  reviewlab check bundled:corpus --policy ouroboros --max-abandoned-call-rate 0.01\n"
    "  reviewlab check bundled:incident --policy uniform:60 --max-silence 900 "
    "--max-timeout-coverage-loss 0.05 --json",
)
