"""``reviewlab tune``: per tool, the shortest timeout within the budgets, and what it buys.

The handler calls :func:`~reviewlab.analysis.tune.recommend` on the opened corpus, as a user
would: the tuner replays the compiled columns and fits its duration and tail models to them,
so no ``Episode`` object is built (except to price rounds with ``--prices``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from reviewlab.cli._args import (
    CORPUS_HELP,
    EXAMPLE_CORPUS,
    POLICY_HELP,
    PRICES_HELP,
    cost_line,
    echo,
    on_error_option,
    output_path,
    policy_arg,
    positive_seconds,
    prices_arg,
    rate,
    scheduler_options,
)
from reviewlab.cli._checks import check_policy_file, refuse_ignored, strict_option
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import (
    computing_on,
    dask_client,
    open_for,
    report_skipped,
    require_episodes,
)
from reviewlab.cli._errors import PROG, UserError
from reviewlab.cli._json import JSON_SUFFIX, document, emit, is_json, json_option

if TYPE_CHECKING:
    from reviewlab.core.policy import Policy

__all__ = ["TUNE", "cmd_tune"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help=CORPUS_HELP)
    on_error_option(p)
    p.add_argument(
        "--max-timeout-coverage-loss",
        type=float,
        default=None,
        metavar="RATE",
        help="budget: largest share of requested read lines lost because of abandonment "
        "(default 0.01), held at its 95%% upper bound over episodes",
    )
    p.add_argument(  # the former name of --max-timeout-coverage-loss
        "--max-coverage-loss", type=float, default=None, help=argparse.SUPPRESS
    )
    p.add_argument(
        "--max-abandoned-rate",
        type=float,
        default=None,
        metavar="RATE",
        help="budget: largest abandoned-call rate, at its 95%% upper bound (default: no budget)",
    )
    p.add_argument(
        "--objective",
        default=None,
        help="what the tightening steps minimise: wall_p95 (default), wall_p99, wall_p50, "
        "wall_max, max_silence, zombie, cost (needs --prices), or a summary column",
    )
    p.add_argument(
        "--prices",
        default=None,
        metavar="TOML",
        help="price every candidate's replay and state the cost per episode: " + PRICES_HELP,
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=None,
        metavar="P",
        help="one-sided confidence of the budgets' upper bounds (default 0.95; 0.5: point "
        "estimates)",
    )
    p.add_argument(
        "--base",
        default=None,
        metavar="TOML",
        help="the policy to improve on (its narrowing too); " + POLICY_HELP,
    )
    p.add_argument(
        "--min-calls",
        type=int,
        default=20,
        metavar="N",
        help="a tool with fewer recorded calls keeps the base timeout (default 20)",
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
    p.add_argument(
        "--allow-abandoning",
        action="append",
        default=[],
        metavar="TOOL",
        help="let a side-effecting (or unknown) tool be tightened into abandoning calls that "
        "completed in the recording (repeatable)",
    )
    p.add_argument(
        "--max-added-abandoned-rate",
        default=None,
        metavar="RATE|none",
        help="budget: calls abandoned beyond what the loosest timeouts abandon, as a share of "
        "all dispatched calls (default 0.01; none: no budget)",
    )
    p.add_argument(
        "--max-tool-added-abandoned-rate",
        default=None,
        metavar="RATE|none",
        help="the same budget per tool, as a share of that tool's calls (default 0.05)",
    )
    p.add_argument(
        "--guarantee",
        type=float,
        default=None,
        metavar="P",
        help="instead of the search, give each tool the shortest timeout within which a call "
        "finishes with probability >= P, certified from the recorded durations (censored ones "
        "included); tools whose data cannot support it keep the base timeout",
    )
    p.add_argument(
        "--guarantee-confidence",
        type=float,
        default=None,
        metavar="P",
        help="the confidence each certificate is stated with (default 0.999)",
    )
    p.add_argument(
        "--baselines",
        action="store_true",
        help="also compare, on held-out episodes, the recommendation made on the rest with the "
        "percentile rule (p99 x 1.5 of completed calls), an RFC 6298 adaptive timer and the best "
        "preset, and say where it does not dominate them",
    )
    p.add_argument(
        "--learned",
        action="store_true",
        help="instead of the search, fit learned conditional timeouts (a per-tool survival model "
        "of the call's arguments, with lifelines; censored calls kept), show on held-out episodes "
        "whether they beat the static per-tool timeouts, and write them with -o",
    )
    p.add_argument(
        "--learned-quantile",
        type=float,
        default=None,
        metavar="Q",
        help="with --learned: each call's bound is its conditional Q-quantile (default 0.99)",
    )
    p.add_argument(
        "--held-out",
        type=float,
        default=None,
        metavar="SHARE",
        help="with --baselines or --learned: the share of episodes held out (default 0.5)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="with --baselines or --learned: the seed of the split (default 0)",
    )
    scheduler_options(
        p,
        "tune a corpus of Parquet partitions (a directory or an fsspec URL) on an existing Dask "
        "cluster: its workers read the partitions and profile the tools; this machine receives "
        "fixed-size partials (docs/cluster.md)",
    )
    strict_option(p)
    json_option(p)
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="TOML|JSON",
        help="write the recommended policy (.json: the --json document, the policy in it)",
    )


def _optional_rate(text: str | None, flag: str, default: float) -> float | None:
    """A budget option: a rate, ``none`` (no budget), or the default when not given."""
    if text is None:
        return default
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{flag}: expected a rate in [0, 1] or 'none', got {text!r}") from None
    rate(value, flag)
    return value


def _with_kinds(base: Policy, specs: list[str]) -> Policy:
    """``base`` with the ``--kind TOOL=KIND`` declarations laid over its kinds."""
    kinds: dict[str, Any] = {}
    for spec in specs:
        tool, sep, kind = spec.partition("=")
        if not sep or not tool.strip() or not kind.strip():
            raise UserError(f"--kind: expected TOOL=read_only or TOOL=side_effect, got {spec!r}")
        kinds[tool.strip()] = kind.strip()
    if not kinds:
        return base
    try:
        return base.with_kinds(**kinds)
    except ValueError as exc:
        raise UserError(f"--kind: {exc}") from None


def cmd_tune(args: argparse.Namespace) -> int:
    """Recommend a policy for the corpus within the budgets; print the answer and the figures;
    ``-o`` writes the policy file (exit 1, nothing written, when no candidate keeps them)."""
    out = output_path(args.output, (".toml", JSON_SUFFIX)) if args.output else None
    split = args.baselines or args.learned
    refuse_ignored(
        [
            (
                "--learned-quantile",
                args.learned_quantile is not None,
                args.learned,
                "used only with --learned",
            ),
            (
                "--held-out",
                args.held_out is not None,
                split,
                "used only with --baselines or --learned",
            ),
            ("--seed", args.seed is not None, split, "used only with --baselines or --learned"),
            (
                "--connect-timeout",
                args.connect_timeout is not None,
                bool(args.scheduler),
                "used only with --scheduler",
            ),
            (
                "--guarantee-confidence",
                args.guarantee_confidence is not None,
                args.guarantee is not None,
                "used only with --guarantee",
            ),
        ]
    )
    if args.learned:  # the fit has its own rule: the search's options would be ignored
        searched = "--learned fits its own timeouts; the search's options do not apply"
        refuse_ignored(
            [
                (flag, given, False, searched)
                for flag, given in (
                    ("--max-timeout-coverage-loss", args.max_timeout_coverage_loss is not None),
                    ("--max-coverage-loss", args.max_coverage_loss is not None),
                    ("--max-abandoned-rate", args.max_abandoned_rate is not None),
                    ("--max-added-abandoned-rate", args.max_added_abandoned_rate is not None),
                    (
                        "--max-tool-added-abandoned-rate",
                        args.max_tool_added_abandoned_rate is not None,
                    ),
                    ("--objective", args.objective is not None),
                    ("--confidence", args.confidence is not None),
                    ("--prices", args.prices is not None),
                    ("--allow-abandoning", bool(args.allow_abandoning)),
                )
            ]
        )
    args.objective = "wall_p95" if args.objective is None else args.objective
    args.confidence = 0.95 if args.confidence is None else args.confidence
    args.learned_quantile = 0.99 if args.learned_quantile is None else args.learned_quantile
    args.held_out = 0.5 if args.held_out is None else args.held_out
    args.seed = 0 if args.seed is None else args.seed
    typed_base = policy_arg(args.base, "--base")
    base = _with_kinds(typed_base, args.kind)
    from reviewlab.analysis.safety import (
        DEFAULT_MAX_ADDED_ABANDONED_RATE,
        DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE,
    )

    added = _optional_rate(
        args.max_added_abandoned_rate,
        "--max-added-abandoned-rate",
        DEFAULT_MAX_ADDED_ABANDONED_RATE,
    )
    tool_added = _optional_rate(
        args.max_tool_added_abandoned_rate,
        "--max-tool-added-abandoned-rate",
        DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE,
    )
    budget = args.max_timeout_coverage_loss
    if args.max_coverage_loss is not None:
        if budget is not None:
            raise UserError(
                "--max-coverage-loss: the former name of --max-timeout-coverage-loss; give one"
            )
        budget = args.max_coverage_loss
    used = "--max-coverage-loss" if args.max_coverage_loss is not None else None
    rate(budget, used or "--max-timeout-coverage-loss")
    rate(args.max_abandoned_rate, "--max-abandoned-rate")
    prices = prices_arg(args.prices)
    from reviewlab.analysis.sweep import objective_column

    try:
        objective = objective_column(args.objective)
    except ValueError:
        objective = args.objective  # recommend names the choices
    if objective.startswith("cost") and prices is None:
        raise UserError(f"--objective {args.objective}: needs --prices TOML (or --prices sample)")
    options = {
        "max_timeout_coverage_loss": budget,
        "max_abandoned_rate": args.max_abandoned_rate,
        "objective": args.objective,
        "base": base,
        "confidence": args.confidence,
        "min_calls": args.min_calls,
        "allow_abandoning": args.allow_abandoning,
        "max_added_abandoned_rate": added,
        "max_tool_added_abandoned_rate": tool_added,
    }
    if args.scheduler:
        return _tune_on_cluster(args, typed_base, base, options, out)
    corpus = open_for(args.corpus, args.on_error)
    if len(corpus):
        check_policy_file(args.base, typed_base, corpus.tools, strict=args.strict, flag="--base")
    if args.learned:
        require_episodes(corpus, args.corpus)
        return _learned(args, corpus, base, out)
    require_episodes(corpus, args.corpus)
    from reviewlab.analysis.tune import recommend
    from reviewlab.ui.answers import tune_text

    with computing_on(args.corpus, derives_policy=True):
        recommendation = recommend(corpus, prices=prices, **options, **_guarantee(args))
    comparison = _baselines(args, corpus, options) if args.baselines else None
    report_skipped(corpus, args.corpus)
    if not args.json:
        echo(tune_text(recommendation, base_label=f"base ({base.label})"))
        if prices is not None:
            summary, baseline = recommendation.summary, recommendation.baseline
            echo(f"cost per episode: recommended {cost_line(summary, prices.currency)}")
            echo(f"cost per episode: base ({base.label}) {cost_line(baseline, prices.currency)}")
        if comparison is not None:
            _print_baselines(comparison)
    if args.json or is_json(out):
        emit(_document(recommendation, base, comparison), stdout=args.json, out=out)
    return _conclude(args, recommendation, out)


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
    if not recommendation.met and args.guarantee is not None and not args.json:
        echo(
            "note: the certified timeouts do not keep every budget (see the budget table); "
            "--guarantee reports the budgets, it does not search within them"
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


def _guarantee(args: argparse.Namespace) -> dict[str, Any]:
    """``--guarantee`` and its confidence as :func:`recommend`'s keywords."""
    from reviewlab.analysis.certify import DEFAULT_GUARANTEE_CONFIDENCE

    confidence = args.guarantee_confidence
    return {
        "guarantee": args.guarantee,
        "guarantee_confidence": DEFAULT_GUARANTEE_CONFIDENCE if confidence is None else confidence,
    }


def _tune_on_cluster(
    args: argparse.Namespace,
    typed_base: Policy,
    base: Policy,
    options: dict[str, Any],
    out: Any,
) -> int:
    """``reviewlab tune CORPUS --scheduler ADDRESS``: the search on the cluster's partials; the
    corpus is never opened here, so its tools are checked against ``--base`` from the answer."""
    for flag, given in (
        ("--baselines", args.baselines),
        ("--learned", args.learned),
        ("--prices", args.prices is not None),
        ("--on-error", args.on_error != "raise"),
    ):
        if given:
            raise UserError(
                f"{flag}: reads the episodes on this machine, which a tune on a cluster never "
                "gathers; run it without --scheduler"
            )
    connect_timeout = 10.0 if args.connect_timeout is None else args.connect_timeout
    positive_seconds(connect_timeout, "--connect-timeout")
    from reviewlab.analysis.tune import recommend
    from reviewlab.ui.answers import tune_text

    client = dask_client(args.scheduler, connect_timeout)
    try:
        with computing_on(args.corpus, derives_policy=True):
            recommendation = recommend(args.corpus, **options, **_guarantee(args), client=client)
    finally:
        client.close()
    tools = sorted(recommendation.explain["tool"])
    check_policy_file(args.base, typed_base, tools, strict=args.strict, flag="--base")
    if not args.json:
        echo(tune_text(recommendation, base_label=f"base ({base.label})"))
    if args.json or is_json(out):
        emit(_document(recommendation, base), stdout=args.json, out=out)
    return _conclude(args, recommendation, out)


def _learned(args: argparse.Namespace, corpus: Any, base: Policy, out: Any) -> int:
    """``--learned``: fit on the whole corpus (what ``-o`` writes), and measure the gain on a
    held-out split (:func:`reviewlab.analysis.learned.learned_gain`)."""
    if args.guarantee is not None or args.baselines:
        raise UserError("--learned: fits its own policy; drop --guarantee and --baselines")
    if not 0.0 < args.held_out < 1.0:
        raise UserError(
            f"--held-out: expected a share strictly between 0 and 1, got {args.held_out}"
        )
    import warnings

    import numpy as np

    from reviewlab.analysis.learned import fit_learned, learned_gain
    from reviewlab.ui.tables import as_table

    episodes = corpus.episodes(reason="learned timeouts: call arguments")
    order = np.random.default_rng(args.seed).permutation(len(episodes))
    cut = int(round(len(episodes) * (1 - args.held_out)))
    if not 0 < cut < len(episodes):
        raise UserError(
            f"--held-out: {args.held_out:g} of {len(episodes)} episode(s) leaves a part empty"
        )
    train = [episodes[i] for i in sorted(order[:cut])]
    held = [episodes[i] for i in sorted(order[cut:])]
    options = {"base": base, "quantile": args.learned_quantile, "min_calls": max(args.min_calls, 2)}
    with computing_on(args.corpus, derives_policy=True), warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # lifelines' convergence chatter; the fit table says how it went
        fit = fit_learned(episodes, **options)
        gain = learned_gain(train, held, **options)
    report_skipped(corpus, args.corpus)
    if not args.json:
        echo(
            "learned conditional timeouts: per tool a Weibull accelerated-failure-time model of "
            "the call's arguments (lifelines; calls that never returned are censored, not "
            f"dropped); a call's bound is its conditional {args.learned_quantile:g}-quantile"
        )
        echo(
            as_table(
                fit.table,
                assumptions="fitted on every episode of the corpus; calls that never returned are "
                "censored observations",
            ).text()
        )
        echo("")
        echo(
            as_table(
                gain.curves,
                title="held-out comparison with the static per-tool timeouts:",
                assumptions=gain.assumptions,
            ).text()
        )
        echo(gain.verdict)
    if args.json or is_json(out):
        emit(
            document(
                "tune",
                assumptions=gain.assumptions,
                summary={"quantile": args.learned_quantile, "verdict": gain.verdict},
                tables={"fit": fit.table, "held_out": gain.curves},
                policy=fit.policy,
                notes=["fit: on every episode; held_out: fitted on the rest, scored on these"],
            ),
            stdout=args.json,
            out=out,
        )
    if out is not None and not is_json(out):
        fit.policy.save(out)
        if not args.json:
            echo(f"wrote the learned policy to {out} (use it with --policy {out})")
    return 0


def _baselines(args: argparse.Namespace, corpus: Any, options: dict[str, Any]) -> Any:
    """The held-out comparison with the baselines (:mod:`reviewlab.analysis.baselines`),
    computed before anything is printed so a bad option prints nothing else."""
    from reviewlab.analysis.baselines import compare_baselines

    if args.guarantee is not None:
        raise UserError("--baselines: compares the searched recommendation; drop --guarantee")
    with computing_on(args.corpus, derives_policy=True):
        return compare_baselines(corpus, held_out=args.held_out, seed=args.seed, **options)


def _print_baselines(comparison: Any) -> None:
    """The comparison's table, its split and whether the recommendation dominates."""
    from reviewlab.ui.tables import as_table

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


TUNE = Command(
    name="tune",
    help="per tool, the shortest timeout whose timeout-caused coverage loss and abandoned-call "
    "rate stay within budget, and what that buys",
    arguments=_arguments,
    handler=cmd_tune,
    examples=f"  reviewlab tune {EXAMPLE_CORPUS} --max-timeout-coverage-loss 0.005 -o tuned.toml\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} --objective cost --prices sample\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} --max-abandoned-rate 0.002 --objective max_silence --json\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} --guarantee 0.95 -o certified.toml\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} --kind query_code=side_effect "
    "--allow-abandoning query_code",
)
