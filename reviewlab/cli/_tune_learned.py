"""``reviewlab tune learned``: learned conditional timeouts, and whether they gain held out.

Calls :func:`~reviewlab.analysis._learned.fit_learned` on every episode (the policy ``-o``
writes) and :func:`~reviewlab.analysis._learned.learned_gain` on a seeded split
(:func:`~reviewlab.analysis._holdout.split_episodes`): per tool a survival model of the call's
arguments (lifelines; censored calls kept), and whether it beats the static per-tool timeouts
on the held-out episodes. The search's budgets do not apply, so they are not options here.
"""

from __future__ import annotations

import argparse
from typing import Any

from reviewlab.cli._args import echo
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import computing_on, open_for, report_skipped, require_episodes
from reviewlab.cli._json import JSON_SUFFIX, document, emit, is_json
from reviewlab.cli._library import given, library_option
from reviewlab.cli._tune_shared import corpus_options, output_option, split_options, tuned_base

FIT = "reviewlab.analysis._learned:fit_learned"
SPLIT = "reviewlab.analysis._holdout:split_episodes"


def _arguments(p: argparse.ArgumentParser) -> None:
    corpus_options(p)
    library_option(
        p,
        "--quantile",
        target=FIT,
        type=float,
        metavar="Q",
        help="each call's bound is its conditional Q-quantile (default %(library_default)s)",
    )
    library_option(
        p,
        "--min-calls",
        target=FIT,
        type=int,
        metavar="N",
        help="a tool with fewer recorded calls gets no model (default %(library_default)s)",
    )
    split_options(p, SPLIT)
    output_option(p, "learned")


def cmd_tune_learned(args: argparse.Namespace) -> int:
    """Fit on the whole corpus, measure the gain on a held-out split, print both; ``-o``
    writes the learned policy."""
    from reviewlab.cli._args import output_path

    out = output_path(args.output, (".toml", JSON_SUFFIX)) if args.output else None
    typed_base, base = tuned_base(args)
    corpus = open_for(args.corpus, args.on_error)
    require_episodes(corpus, args.corpus)
    from reviewlab.cli._checks import check_policy_file

    check_policy_file(args.base, typed_base, corpus.tools, strict=args.strict, flag="--base")
    import warnings

    from reviewlab.analysis._holdout import split_episodes
    from reviewlab.analysis._learned import fit_learned, learned_gain

    episodes = corpus.episodes(reason="learned timeouts: call arguments")
    options = {"base": base, **given(args, "quantile", "min_calls")}
    with computing_on(args.corpus, derives_policy=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lifelines' convergence chatter; the fit table says
        train, held = split_episodes(episodes, **given(args, "held_out", "seed"))
        fit = fit_learned(episodes, **options)
        gain = learned_gain(train, held, **options)
    report_skipped(corpus, args.corpus)
    quantile = fit.policy.timeouts.quantile  # type: ignore[attr-defined]
    if not args.json:
        _print(fit, gain, quantile)
    if args.json or is_json(out):
        emit(
            document(
                "tune",
                assumptions=gain.assumptions,
                summary={"quantile": quantile, "verdict": gain.verdict},
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


def _print(fit: Any, gain: Any, quantile: float) -> None:
    from reviewlab.ui._tables import as_table

    echo(
        "learned conditional timeouts: per tool a Weibull accelerated-failure-time model of "
        "the call's arguments (lifelines; calls that never returned are censored, not "
        f"dropped); a call's bound is its conditional {quantile:g}-quantile"
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


TUNE_LEARNED = Command(
    name="tune learned",
    help="learned conditional timeouts (a per-tool survival model of the call's arguments), "
    "and whether they beat the static per-tool timeouts on held-out episodes",
    arguments=_arguments,
    handler=cmd_tune_learned,
    examples="  reviewlab synth -n 300 --arg-effect 1 -o sized.jsonl.gz\n"
    "  reviewlab tune learned sized.jsonl.gz -o learned.toml",
)
