"""``reviewlab replay``: a corpus replayed under one policy, its summary and per-tool breakdown.

The handler opens the corpus (:func:`~reviewlab.engines._corpus.open_corpus`) and calls
:func:`~reviewlab.engines._replay.replay` (or :func:`~reviewlab.engines._replay.replay_bounds`)
exactly as a user would; the library checks the options and its errors name them. Both tables
state their assumptions; the summary gains rows, and the per-tool table columns, for the parts
the policy sets: hedged calls, calls the breaker withheld, calls bounded by idleness
(:func:`reviewlab.ui._tables.policy_rows`).
"""

from __future__ import annotations

import argparse
from typing import Any

from reviewlab.cli._args import (
    CORPUS_HELP,
    EXAMPLE_CORPUS,
    POLICY_HELP,
    TABLE_SUFFIXES,
    censored_option,
    echo,
    on_error_option,
    output_path,
    policy_arg,
    reaction_option,
    seed,
)
from reviewlab.cli._checks import check_policy_file, refuse_ignored, strict_option
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import computing_on, open_for, report_skipped, require_episodes
from reviewlab.cli._errors import UserError
from reviewlab.cli._json import JSON_SUFFIX, document, emit, is_json, json_option
from reviewlab.core._vocab import CENSORING_CHOICES, ENGINES, FRAME_NAMES

REAL_REPLAY_MAX_SEC = 3600.0
"""The longest real-time replay ``--engine real --time-scale`` agrees to start."""


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help=CORPUS_HELP)
    on_error_option(p)
    p.add_argument("--policy", default=None, metavar="TOML", help=POLICY_HELP)
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="vectorized",
        help="twin: SimPy reference (needed for --slots); vectorized: NumPy, fast (default); "
        "real: real threads on a scaled clock",
    )
    censored_option(p, CENSORING_CHOICES)
    reaction_option(p)
    p.add_argument(
        "--slots",
        type=int,
        default=None,
        metavar="N",
        help="simulate a pool of N reviewer slots (twin engine)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of what the replay draws: imputed durations (--censored impute) and the "
        "second attempts of a hedging policy (default 0)",
    )
    p.add_argument(
        "--time-scale",
        type=float,
        default=None,
        metavar="F",
        help="engine real: recorded seconds are slept times F (default 0.001)",
    )
    p.add_argument(
        "--table",
        choices=FRAME_NAMES,
        default=None,
        help="which frame -o writes (default: calls)",
    )
    strict_option(p)
    json_option(p)
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="CSV|PARQUET|JSON",
        help="write the frame here (.json: the --json document)",
    )


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay the corpus under ``--policy``; print the assumptions, the summary and the per-tool
    table; ``-o`` writes one frame."""
    out = output_path(args.output, (*TABLE_SUFFIXES, JSON_SUFFIX)) if args.output else None
    policy = policy_arg(args.policy)
    seed(args.seed)
    draws = args.censored == "impute" or bool(policy.hedges)
    refuse_ignored(
        [
            (
                "--table",
                args.table is not None,
                out is not None and not is_json(out),
                "it picks the frame -o writes (a .json output holds the summary and tables)",
            ),
            (
                "--seed",
                args.seed is not None,
                draws,
                "nothing in this replay is drawn (only --censored impute and a policy's hedges "
                "draw)",
            ),
        ]
    )
    table_name = args.table or "calls"
    from reviewlab.engines._replay import replay, replay_bounds
    from reviewlab.engines._result import ReplayResult

    corpus = open_for(args.corpus, args.on_error)
    require_episodes(corpus, args.corpus)
    check_policy_file(args.policy, policy, corpus.tools, strict=args.strict)
    if args.slots is not None and args.slots > len(corpus):
        raise UserError(
            f"--slots: {args.slots:,} slots for {len(corpus):,} episode(s); more slots than "
            f"episodes never queue, so at most {len(corpus):,} is meaningful"
        )
    if args.time_scale is not None and args.engine == "real":
        _check_real_time(corpus.episodes(reason="engine='real' runs Episode objects"), args)
    from reviewlab.ui._calls import per_tool_table
    from reviewlab.ui._report import write_table
    from reviewlab.ui._tables import summary_table

    options: dict[str, Any] = {"engine": args.engine, "reaction": args.reaction}
    for name in ("seed", "slots", "time_scale"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    with computing_on(args.corpus):
        if args.censored == "bounds":
            both = replay_bounds(corpus, policy, **options)
            result = both.pessimistic
            runs = {
                f"{policy.label}, optimistic (observed)": both.optimistic,
                f"{policy.label}, pessimistic (wedge)": result,
            }
        else:
            result = replay(corpus, policy, censored=args.censored, **options)
            runs = {policy.label: result}
        assert isinstance(result, ReplayResult)  # an in-process engine: frames
        tools = per_tool_table(
            result,
            title="per tool"
            + (" (pessimistic end: wedge)" if args.censored == "bounds" else "")
            + ":",
        )
    report_skipped(corpus, args.corpus)
    if not args.json:
        echo(summary_table(runs, title="summary:").text())
        echo("")
        echo(tools.text())
    if out is not None and not is_json(out):
        frame = {"calls": result.calls, "episodes": result.episodes, "tools": tools}[table_name]
        import pandas as pd

        write_table(pd.DataFrame(frame), out)
        if not args.json:  # with --json, stdout holds the document alone
            echo(f"wrote {len(frame):,} rows ({table_name}) to {out}")
    if args.json or is_json(out):
        emit(_document(runs, result, tools), stdout=args.json, out=out)
    return 0


def _document(runs: dict[str, Any], result: Any, tools: Any) -> dict[str, Any]:
    """The ``--json`` document: the summary of ``result`` (with ``--censored bounds``, the
    pessimistic end), every run's summary as a row of the ``runs`` table, the per-tool table."""
    from reviewlab.ui._tables import common_assumptions, policy_rows

    runs_rows = [{"run": label, **run.summary, **policy_rows(run)} for label, run in runs.items()]
    return document(
        "replay",
        assumptions=common_assumptions({label: run.assumptions for label, run in runs.items()}),
        summary={**result.summary, **policy_rows(result)},
        tables={"runs": runs_rows, "tools": tools},
        policy=result.policy,
    )


def _check_real_time(episodes: list[Any], args: argparse.Namespace) -> None:
    """A lower bound on the real engine's wall time: its longest episode, slept at the scale."""
    longest = max(
        sum(r.send_sec for r in e.rounds) + sum(c.duration_sec for c in e.calls if c.completed)
        for e in episodes
    )
    if longest * args.time_scale > REAL_REPLAY_MAX_SEC:
        raise UserError(
            f"--time-scale {args.time_scale:g}: the longest episode alone would take "
            f"{longest * args.time_scale:,.0f} s of real time "
            f"(at most {REAL_REPLAY_MAX_SEC:,.0f} s; use a smaller scale)"
        )


REPLAY = Command(
    name="replay",
    help="replay a recorded corpus under a policy and print its summary and per-tool breakdown",
    arguments=_arguments,
    handler=cmd_replay,
    examples=f"  reviewlab replay {EXAMPLE_CORPUS}\n"
    "  reviewlab replay bundled:incident --policy unbounded --engine twin --slots 6\n"
    f"  reviewlab replay {EXAMPLE_CORPUS} --policy uniform:30 --censored impute --seed 3 --json\n"
    f"  reviewlab tune {EXAMPLE_CORPUS} -o tuned.toml\n"
    f"  reviewlab replay {EXAMPLE_CORPUS} --policy tuned.toml -o calls.parquet",
)
