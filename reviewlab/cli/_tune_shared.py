"""What the ``tune`` commands share: their options and the run of one recommendation.

``reviewlab tune`` (the search), ``tune guarantee`` and ``tune baselines`` call
:func:`~reviewlab.analysis._tune.recommend` through :func:`run_recommendation`; ``tune learned``
shares only the corpus options. Every option that feeds a library parameter is a
:func:`~reviewlab.cli._library.library_option`: its ``dest`` is the parameter's name and it is
passed only when given, so the defaults are the library's and so are the checks.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from reviewlab.cli._args import (
    CORPUS_HELP,
    POLICY_HELP,
    PRICES_HELP,
    cost_line,
    echo,
    on_error_option,
    output_path,
    policy_arg,
    positive_seconds,
    prices_arg,
    scheduler_options,
)
from reviewlab.cli._checks import check_policy_file, refuse_ignored, strict_option
from reviewlab.cli._corpus import (
    computing_on,
    dask_client,
    open_for,
    report_skipped,
    require_episodes,
)
from reviewlab.cli._errors import PROG, UserError
from reviewlab.cli._json import JSON_SUFFIX, document, emit, is_json, json_option
from reviewlab.cli._library import LibraryDefault, given, library_option

if TYPE_CHECKING:
    from reviewlab.core._policy import Policy


RECOMMEND = "reviewlab.analysis._tune:recommend"
"""The library function the search, the guarantee and the baselines' recommendation call."""
_PASSED = (
    "max_timeout_coverage_loss",
    "max_coverage_loss",
    "max_abandoned_rate",
    "objective",
    "confidence",
    "min_calls",
    "guarantee",
    "guarantee_confidence",
)
"""The options passed to ``recommend`` as given (the library checks them)."""


def corpus_options(p: argparse.ArgumentParser) -> None:
    """The corpus, ``--on-error``, ``--base``, ``--kind``, ``--strict`` and ``--json``."""
    p.add_argument("corpus", help=CORPUS_HELP)
    on_error_option(p)
    p.add_argument(
        "--base",
        default=None,
        metavar="POLICY",
        help="the policy to improve on (its narrowing too); " + POLICY_HELP,
    )
    p.add_argument(
        "--kind",
        action="append",
        default=[],
        metavar="TOOL=KIND",
        help="declare a tool read_only or side_effect (repeatable; over the base policy's "
        "[kinds] and the defaults); a side-effecting or unknown tool is never tightened below "
        "its slowest completed call",
    )
    strict_option(p)
    json_option(p)


def budget_options(p: argparse.ArgumentParser, *, objective: bool = True) -> None:
    """The budgets, the rules of the tightening, ``--prices`` and (``objective``)
    ``--objective``: what :func:`recommend` reads."""
    library_option(
        p,
        "--max-timeout-coverage-loss",
        target=RECOMMEND,
        shown=LibraryDefault("reviewlab.analysis._tune:DEFAULT_MAX_TIMEOUT_COVERAGE_LOSS"),
        type=float,
        metavar="RATE",
        help="budget: largest share of requested read lines lost because of abandonment "
        "(default %(library_default)s), held at its upper bound over episodes",
    )
    p.add_argument(  # the former name of --max-timeout-coverage-loss (the library's too)
        "--max-coverage-loss", type=float, default=None, help=argparse.SUPPRESS
    )
    library_option(
        p,
        "--max-abandoned-rate",
        target=RECOMMEND,
        type=float,
        metavar="RATE",
        help="budget: largest abandoned-call rate, at its upper bound "
        "(default %(library_default)s)",
    )
    for flag, what in (
        ("--max-added-abandoned-rate", "calls abandoned beyond what the loosest timeouts "
         "abandon, as a share of all dispatched calls"),
        ("--max-tool-added-abandoned-rate", "the same, per tool, as a share of its calls"),
    ):  # fmt: skip
        library_option(
            p,
            flag,
            target=RECOMMEND,
            metavar="RATE|none",
            help=f"budget: {what} (default %(library_default)s; none: no budget)",
        )
    if objective:
        library_option(
            p,
            "--objective",
            target=RECOMMEND,
            help="what the tightening steps minimise (default %(library_default)s): wall_p95, "
            "wall_p99, wall_p50, wall_max, max_silence, zombie, cost (needs --prices), or a "
            "summary column",
        )
    p.add_argument(
        "--prices",
        default=None,
        metavar="TOML",
        help="price every candidate's replay and state the cost per episode: " + PRICES_HELP,
    )
    library_option(
        p,
        "--confidence",
        target=RECOMMEND,
        type=float,
        metavar="P",
        help="one-sided confidence of the budgets' upper bounds (default %(library_default)s; "
        "0.5: point estimates)",
    )
    _rule_options(p)


def _rule_options(p: argparse.ArgumentParser) -> None:
    library_option(
        p,
        "--min-calls",
        target=RECOMMEND,
        type=int,
        metavar="N",
        help="a tool with fewer recorded calls keeps the base timeout (default "
        "%(library_default)s)",
    )
    p.add_argument(
        "--allow-abandoning",
        action="append",
        default=[],
        metavar="TOOL",
        help="let a side-effecting (or unknown) tool be tightened into abandoning calls that "
        "completed in the recording (repeatable)",
    )


def output_option(p: argparse.ArgumentParser, what: str) -> None:
    """``-o``: the policy file (TOML), or the ``--json`` document (.json)."""
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="TOML|JSON",
        help=f"write the {what} policy (.json: the --json document, the policy in it)",
    )


def _rate_or_none(text: str | None) -> float | str | None:
    """A budget option's value: ``none`` (no budget), else the number (the library checks
    the range)."""
    if text is None or text.strip().lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        return text  # the library names it: expected a rate in [0, 1]


def tuned_base(args: argparse.Namespace) -> tuple[Policy, Policy]:
    """``(--base as typed, with the --kind declarations laid over it)``."""
    typed = policy_arg(args.base, "--base")
    kinds: dict[str, Any] = {}
    for spec in args.kind:
        tool, sep, kind = spec.partition("=")
        if not sep or not tool.strip() or not kind.strip():
            raise UserError(f"--kind: expected TOOL=read_only or TOOL=side_effect, got {spec!r}")
        kinds[tool.strip()] = kind.strip()
    if not kinds:
        return typed, typed
    try:
        return typed, typed.with_kinds(**kinds)
    except ValueError as exc:
        raise UserError(f"--kind: {exc}") from None


def recommend_options(args: argparse.Namespace, base: Policy) -> dict[str, Any]:
    """:func:`recommend`'s keywords: the options given, nothing restated."""
    options: dict[str, Any] = {
        "base": base,
        **given(args, *(name for name in _PASSED if hasattr(args, name))),
    }
    for name in ("max_added_abandoned_rate", "max_tool_added_abandoned_rate"):
        text = getattr(args, name)
        if text is not None:
            options[name] = _rate_or_none(text)
    if args.allow_abandoning:
        options["allow_abandoning"] = args.allow_abandoning
    return options


def run_recommendation(
    args: argparse.Namespace, *, comparison: Any = None, show: Any = None
) -> int:
    """Recommend on the corpus (on a cluster with ``--scheduler``), print the answer and the
    figures, then ``show(comparison(corpus, options))``; ``-o`` writes the policy (exit 1,
    nothing written, when no candidate keeps the budgets)."""
    out = output_path(args.output, (".toml", JSON_SUFFIX)) if args.output else None
    scheduler = getattr(args, "scheduler", None)
    refuse_ignored(
        [
            (
                "--connect-timeout",
                getattr(args, "connect_timeout", None) is not None,
                bool(scheduler),
                "used only with --scheduler",
            )
        ]
    )
    typed_base, base = tuned_base(args)
    prices = prices_arg(args.prices)
    options = recommend_options(args, base)
    if scheduler:
        return _on_cluster(args, typed_base, options, out)
    corpus = open_for(args.corpus, args.on_error)
    if len(corpus):
        check_policy_file(args.base, typed_base, corpus.tools, strict=args.strict, flag="--base")
    require_episodes(corpus, args.corpus)
    from reviewlab.analysis._tune import recommend

    with computing_on(args.corpus, derives_policy=True):
        recommendation = recommend(corpus, prices=prices, **options)
        compared = None if comparison is None else comparison(corpus, options)
    report_skipped(corpus, args.corpus)
    if not args.json:
        _print(recommendation, base, prices)
        if compared is not None and show is not None:
            show(compared)
    if args.json or is_json(out):
        emit(_document(recommendation, base, compared), stdout=args.json, out=out)
    return _conclude(args, recommendation, out)


def _print(recommendation: Any, base: Policy, prices: Any) -> None:
    from reviewlab.ui._answers import tune_text

    echo(tune_text(recommendation, base_label=f"base ({base.label})"))
    if prices is not None:
        summary, baseline = recommendation.summary, recommendation.baseline
        echo(f"cost per episode: recommended {cost_line(summary, prices.currency)}")
        echo(f"cost per episode: base ({base.label}) {cost_line(baseline, prices.currency)}")


def _document(recommendation: Any, base: Policy, comparison: Any = None) -> dict[str, Any]:
    """The ``--json`` document: the recommended policy's summary (and whether it keeps every
    budget), the base's beside it, the per-tool explanation, the budgets and the baselines."""
    runs = [
        {"run": "recommended", **recommendation.summary},
        {"run": f"base ({base.label})", **recommendation.baseline},
    ]
    tables: dict[str, Any] = {
        "runs": runs,
        "tools": recommendation.explain,
        "budgets": recommendation.budgets,
    }
    notes = [recommendation.rule]
    if comparison is not None:
        tables["baselines"] = comparison.table
        notes.append(
            f"baselines: {comparison.held_out_episodes} episodes held out, "
            f"{comparison.train_episodes} to fit on; dominated: {comparison.dominated}"
        )
    return document(
        "tune",
        assumptions=recommendation.assumptions,
        summary={
            "met": bool(recommendation.met),
            "objective": recommendation.objective,
            **recommendation.summary,
        },
        tables=tables,
        policy=recommendation.policy,
        notes=notes,
    )


def _conclude(args: argparse.Namespace, recommendation: Any, out: Any) -> int:
    """The verdict on the budgets, then ``-o`` (exit 1, nothing written, when no candidate
    keeps them)."""
    certified = getattr(args, "guarantee", None) is not None
    if not recommendation.met and certified:  # reported, not searched within: no failure
        if not args.json:
            echo(
                "note: the certified timeouts do not keep every budget (see the budget table); "
                "tune guarantee reports the budgets, it does not search within them"
            )
    elif not recommendation.met:
        budgets = recommendation.budgets
        unmet = budgets[~budgets["met"].astype(bool)]
        upper = next(c for c in budgets.columns if c.startswith("upper_"))
        detail = "; ".join(
            f"{name} {max(row[upper], row['predicted_unseen']):.4g} > {row['limit']:g} even at "
            "the loosest timeouts"
            for name, row in zip(unmet["budget"], unmet.to_dict("records"), strict=True)
        )
        sys.stderr.write(
            f"{PROG}: error: no candidate policy keeps every budget ({detail}: calls that never "
            "return are abandoned under every bound)"
            + (f"; {out} not written" if out is not None and not is_json(out) else "")
            + "\n"
        )
        return 1
    if out is not None and not is_json(out):
        recommendation.save(out)
        if not args.json:
            echo(f"wrote the recommended policy to {out} (use it with --policy {out})")
    return 0


def _on_cluster(
    args: argparse.Namespace, typed_base: Policy, options: dict[str, Any], out: Any
) -> int:
    """The recommendation on a Dask cluster's partials (``--scheduler``): the corpus is never
    opened here, so its tools are checked against ``--base`` from the answer."""
    for flag, given_here in (
        ("--prices", args.prices is not None),
        ("--on-error", args.on_error != "raise"),
    ):
        if given_here:
            raise UserError(
                f"{flag}: reads the episodes on this machine, which a tune on a cluster never "
                "gathers; run it without --scheduler"
            )
    connect_timeout = 10.0 if args.connect_timeout is None else args.connect_timeout
    positive_seconds(connect_timeout, "--connect-timeout")
    from reviewlab.analysis._tune import recommend

    client = dask_client(args.scheduler, connect_timeout)
    try:
        with computing_on(args.corpus, derives_policy=True):
            recommendation = recommend(args.corpus, **options, client=client)
    finally:
        client.close()
    tools = sorted(recommendation.explain["tool"])
    check_policy_file(args.base, typed_base, tools, strict=args.strict, flag="--base")
    if not args.json:
        _print(recommendation, options["base"], None)
    if args.json or is_json(out):
        emit(_document(recommendation, options["base"]), stdout=args.json, out=out)
    return _conclude(args, recommendation, out)


def split_options(p: argparse.ArgumentParser, target: str) -> None:
    """``--held-out`` and ``--seed``: the held-out split of ``target`` (its defaults)."""
    library_option(
        p,
        "--held-out",
        target=target,
        type=float,
        metavar="SHARE",
        help="the share of episodes held out (default %(library_default)s)",
    )
    library_option(
        p,
        "--seed",
        target=target,
        type=int,
        help="the seed of the split (default %(library_default)s)",
    )


def connect_options(p: argparse.ArgumentParser) -> None:
    """``--scheduler`` and ``--connect-timeout``: the recommendation on a Dask cluster."""
    scheduler_options(
        p,
        "tune a corpus of Parquet partitions (a directory or an fsspec URL) on an existing Dask "
        "cluster: its workers read the partitions and profile the tools; this machine receives "
        "fixed-size partials (docs/cluster.md)",
    )
