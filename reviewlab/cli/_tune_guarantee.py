"""``reviewlab tune guarantee``: per tool, the shortest timeout certified to hold P of its calls.

Calls :func:`~reviewlab.analysis._tune.recommend` with ``guarantee``: instead of the search, each
tool gets the shortest timeout within which a call finishes with probability at least P,
certified from the recorded durations (censored ones included) at a stated confidence; a tool
whose data cannot support it keeps the base timeout. The budgets are reported, not searched
within, so there is no ``--objective``.
"""

from __future__ import annotations

import argparse

from reviewlab.cli._args import EXAMPLE_CORPUS
from reviewlab.cli._command import Command
from reviewlab.cli._library import library_option
from reviewlab.cli._tune_shared import (
    RECOMMEND,
    budget_options,
    connect_options,
    corpus_options,
    output_option,
    run_recommendation,
)


def _arguments(p: argparse.ArgumentParser) -> None:
    corpus_options(p)
    library_option(
        p,
        "-p",
        "--probability",
        dest="guarantee",
        target=RECOMMEND,
        type=float,
        required=True,
        metavar="P",
        help="the probability a call finishes within its tool's timeout (0 < P < 1)",
    )
    library_option(
        p,
        "--certificate-confidence",
        dest="guarantee_confidence",
        target=RECOMMEND,
        type=float,
        metavar="C",
        help="the confidence each certificate is stated with (default %(library_default)s)",
    )
    budget_options(p, objective=False)
    connect_options(p)
    output_option(p, "certified")


def cmd_tune_guarantee(args: argparse.Namespace) -> int:
    """Certify per-tool timeouts, print the certificates and the budgets they keep or not;
    ``-o`` writes the policy."""
    return run_recommendation(args)


TUNE_GUARANTEE = Command(
    name="tune guarantee",
    help="per tool, the shortest timeout within which a call finishes with probability >= P, "
    "certified from the recorded durations",
    arguments=_arguments,
    handler=cmd_tune_guarantee,
    examples=f"  reviewlab tune guarantee {EXAMPLE_CORPUS} --probability 0.95 -o certified.toml\n"
    f"  reviewlab tune guarantee {EXAMPLE_CORPUS} -p 0.9 --certificate-confidence 0.99 --json",
)
