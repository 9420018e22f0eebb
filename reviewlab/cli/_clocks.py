"""``reviewlab clocks CORPUS``: which clock ended each call, and what the servers did with cancels.

Replays the corpus in the twin under ``--policy`` (and a host's ceilings with ``--preset``),
prints how many calls each clock ended, the valid results dropped (calls that came back after
their abandonment, with how late), the recorded cancels' verdicts, and with
``--typescript-sdk TIMEOUT,CAP`` how far the TypeScript SDK's clocks would run past their cap
(:func:`~reviewlab.analysis._clocks.clock_table`, :func:`~reviewlab.analysis._cancels.
cancel_faithfulness`). ``-o`` writes the per-call table.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from reviewlab.cli._args import (
    CORPUS_HELP,
    EXAMPLE_CORPUS,
    TABLE_SUFFIXES,
    censored_option,
    echo,
    number,
    output_path,
    policy_arg,
)
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import computing_on, open_for, require_episodes
from reviewlab.cli._errors import UserError
from reviewlab.cli._json import JSON_SUFFIX, document, emit, is_json, json_option


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help=CORPUS_HELP)
    p.add_argument("--policy", metavar="FILE|PRESET", help="the policy (default: ouroboros)")
    p.add_argument(
        "--preset", metavar="NAME", help="a host's ceilings on top (a `reviewlab presets` name)"
    )
    p.add_argument(
        "--typescript-sdk",
        metavar="TIMEOUT,CAP",
        help="also the MCP TypeScript SDK's clocks: TIMEOUT reset on progress, CAP checked only "
        "when progress arrives (e.g. 60,120)",
    )
    censored_option(p)
    json_option(p)
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT.csv|OUT.parquet|OUT.json",
        help="the per-call table (.json: the --json document)",
    )


def _sdk(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) != 2:
        raise UserError(f"--typescript-sdk: expected TIMEOUT,CAP in seconds, got {text!r}")
    timeout, cap = (number("--typescript-sdk", part) for part in parts)
    if not (timeout > 0 and cap > 0 and math.isfinite(timeout) and math.isfinite(cap)):
        raise UserError(f"--typescript-sdk: expected positive finite seconds, got {text!r}")
    return timeout, cap


def _seconds(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:g} s"


def cmd_clocks(args: argparse.Namespace) -> int:
    """Print which clock ended each call, the valid results dropped and the cancels' verdicts."""
    from reviewlab.analysis._cancels import cancel_faithfulness
    from reviewlab.analysis._clocks import clock_summary, clock_table

    out = output_path(args.output, (*TABLE_SUFFIXES, JSON_SUFFIX)) if args.output else None
    policy = policy_arg(args.policy)
    sdk = _sdk(args.typescript_sdk)
    corpus = open_for(args.corpus)
    require_episodes(corpus, args.corpus)
    with computing_on(args.corpus):
        table = clock_table(
            corpus, policy, preset=args.preset, typescript_sdk=sdk, censored=args.censored
        )
        faithfulness = cancel_faithfulness(corpus)
    summary = clock_summary(table)
    if not args.json:
        _print(summary, faithfulness, policy, args, sdk)
    if out is not None and not is_json(out):
        if out.suffix == ".parquet":
            table.to_parquet(out, index=False)
        else:
            table.to_csv(out, index=False)
        if not args.json:  # with --json, stdout holds the document alone
            echo(f"wrote the per-call table to {out}")
    if args.json or is_json(out):
        assumptions = {"engine": "twin", "censored": args.censored}
        if args.preset:
            assumptions["preset"] = args.preset
        if sdk is not None:
            assumptions["typescript_sdk"] = f"{sdk[0]:g},{sdk[1]:g}"
        doc = document(
            "clocks",
            assumptions=assumptions,
            summary=summary,
            tables={"cancels": faithfulness},
            units={
                "ended_by": "count",
                "valid_results_dropped": "count",
                "sdk_overruns": "count",
                "cancels_sent": "count",
                "stopped": "count",
                "acknowledged": "count",
                "kept_working": "count",
                "answered_anyway": "count",
            },
            policy=policy,
            notes=["the per-call table: -o OUT.csv or OUT.parquet"],
        )
        emit(doc, stdout=args.json, out=out)
    return 0


def _print(
    summary: dict, faithfulness: Any, policy: Any, args: argparse.Namespace, sdk: Any
) -> None:
    """The text answer: the clocks' counts, the dropped results, the cancels' verdicts."""
    host = f" with the ceilings of preset {args.preset}" if args.preset else ""
    echo(
        f"clocks of {summary['calls']} call(s) under {policy.label}{host} "
        f"(twin, censored={args.censored}):"
    )
    ended = ", ".join(f"{name} {count}" for name, count in summary["ended_by"].items())
    echo(f"  ended by: {ended or 'nothing (no call ran)'}")
    echo(
        f"  valid results dropped: {summary['valid_results_dropped']} (came back "
        f"{_seconds(summary['dropped_late_median_sec'])} late at the median, "
        f"{_seconds(summary['dropped_late_max_sec'])} at most)"
    )
    if sdk is not None:
        echo(
            f"  TypeScript SDK ({sdk[0]:g} s reset on progress, cap {sdk[1]:g} s checked on "
            f"progress): {summary['sdk_overruns']} call(s) run past the cap, by up to "
            f"{summary['sdk_overrun_max_sec']:g} s"
        )
    if faithfulness.empty:
        echo("  cancels: none recorded")
    for row in faithfulness.itertuples():
        echo(
            f"  cancels to {row.server} · {row.tool}: {row.cancels_sent} sent, {row.stopped} "
            f"stopped ({row.acknowledged} said so), {row.kept_working} kept working, "
            f"{row.answered_anyway} answered anyway"
        )


CLOCKS = Command(
    name="clocks",
    help="which clock ended each call; valid results dropped; what servers did with cancels",
    arguments=_arguments,
    handler=cmd_clocks,
    examples=(
        f"  reviewlab clocks {EXAMPLE_CORPUS}\n"
        f"  reviewlab clocks {EXAMPLE_CORPUS} --preset claude-code --typescript-sdk 60,120 "
        "-o clocks.csv"
    ),
)
