"""``reviewlab tune baselines``: the search's recommendation against simple rules, held out.

Calls :func:`~reviewlab.analysis._tune.recommend` on the whole corpus (what ``-o`` writes) and
:func:`~reviewlab.analysis._baselines.compare_baselines` on a seeded split: the recommendation
made on one part against the percentile rule (p99 x 1.5 of completed calls), an RFC 6298
adaptive timer and the best preset, all replayed on the held-out part, saying where the
recommendation does not dominate them. The search's options are this command's too.
"""

from __future__ import annotations

import argparse
from typing import Any

from reviewlab.cli._args import EXAMPLE_CORPUS, echo
from reviewlab.cli._command import Command
from reviewlab.cli._library import given
from reviewlab.cli._tune_shared import (
    budget_options,
    corpus_options,
    output_option,
    run_recommendation,
    split_options,
)

COMPARE = "reviewlab.analysis._baselines:compare_baselines"


def _arguments(p: argparse.ArgumentParser) -> None:
    corpus_options(p)
    budget_options(p)
    split_options(p, COMPARE)
    output_option(p, "recommended")


def cmd_tune_baselines(args: argparse.Namespace) -> int:
    """The search, then the held-out comparison with the baselines (computed before anything
    is printed, so a bad option prints nothing else)."""

    def compare(corpus: Any, options: dict[str, Any]) -> Any:
        from reviewlab.analysis._baselines import compare_baselines

        return compare_baselines(corpus, **given(args, "held_out", "seed"), **options)

    return run_recommendation(args, comparison=compare, show=_show)


def _show(comparison: Any) -> None:
    """The comparison's table, its split and whether the recommendation dominates."""
    from reviewlab.ui._tables import as_table

    echo("")
    echo(
        as_table(
            comparison.table,
            title=f"baselines on held-out episodes ({comparison.held_out_episodes} held out, "
            f"{comparison.train_episodes} to fit on):",
            assumptions=comparison.assumptions,
        ).text()
    )
    echo(
        "the recommendation dominates every baseline"
        if comparison.dominated
        else "the recommendation does not dominate every baseline: see the verdicts"
    )


TUNE_BASELINES = Command(
    name="tune baselines",
    help="the recommendation against the percentile rule, an RFC 6298 timer and the best "
    "preset, on held-out episodes",
    arguments=_arguments,
    handler=cmd_tune_baselines,
    examples=f"  reviewlab tune baselines {EXAMPLE_CORPUS}\n"
    f"  reviewlab tune baselines {EXAMPLE_CORPUS} --held-out 0.3 --seed 7 --json",
)
