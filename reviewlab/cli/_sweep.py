"""``reviewlab sweep``: a corpus replayed under a grid of policies, one row per point.

The handler builds the grid with :func:`~reviewlab.analysis.sweep.make_grid` and calls
:func:`~reviewlab.analysis.sweep.sweep` on the opened corpus, as a user would: a Parquet or
JSONL corpus is compiled from its columns once, no ``Episode`` object is built unless a point
needs one (hedges, breakers, prices, the twin), and the library's errors name the options.
The grid's options: :mod:`reviewlab.cli._sweep_grid`; the table's view and ``-o``:
:mod:`reviewlab.cli._sweep_output`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from reviewlab.cli._args import (
    CORPUS_HELP,
    EXAMPLE_CORPUS,
    PRICES_HELP,
    TABLE_SUFFIXES,
    narrowing_grid,
    numbers,
    on_error_option,
    output_path,
    policy_arg,
    positive_seconds,
    prices_args,
    scheduler_options,
    tool_grid,
)
from reviewlab.cli._checks import (
    check_policy_file,
    check_typed_tools,
    refuse_ignored,
    strict_option,
)
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import (
    computing_on,
    dask_client,
    open_for,
    report_skipped,
    require_episodes,
)
from reviewlab.cli._errors import UserError
from reviewlab.cli._json import JSON_SUFFIX, json_option
from reviewlab.cli._library import given
from reviewlab.cli._sweep_grid import breaker_grid, grid_options, hedge_and_breaker_options
from reviewlab.cli._sweep_output import report_sweep
from reviewlab.core._vocab import SWEEP_ENGINES


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help=CORPUS_HELP)
    on_error_option(p)
    grid_options(p)
    _engine_options(p)
    _table_options(p)
    hedge_and_breaker_options(p)
    strict_option(p)
    json_option(p)
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="CSV|PARQUET|JSON",
        help="write the sweep table (.json: the --json document)",
    )


def _engine_options(p: argparse.ArgumentParser) -> None:
    """Where the points are replayed: the engine, a Dask cluster, or threads in-process."""
    p.add_argument(
        "--engine",
        choices=SWEEP_ENGINES,
        default="vectorized",
        help="vectorized: NumPy, fast (default); twin: the SimPy reference, slow",
    )
    scheduler_options(
        p,
        "run the points on an existing Dask cluster (Parquet partitions are read by its "
        "workers; any other corpus is sent to them once)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="in-process, replay N points at once (default: the cores, at most 8; "
        "the vectorized engine only)",
    )


def _table_options(p: argparse.ArgumentParser) -> None:
    """What the table holds and shows: the rows printed, the Pareto flag's objectives, the
    tools it may name, the order, the cost columns."""
    p.add_argument("--top", type=int, default=20, help="rows to print (default 20)")
    p.add_argument(
        "--pareto",
        default=None,
        metavar="METRIC,...",
        help="the objectives the Pareto flag trades, all minimised (default: "
        "timeout_coverage_loss_rate,wall_p95_sec,max_silence_sec; short names such as "
        "wall_p95, max_silence work too)",
    )
    p.add_argument(
        "--allow-unknown-tools",
        action="store_true",
        help="sweep a --tool the corpus never calls (default: an error naming it)",
    )
    p.add_argument(
        "--sort",
        default=None,
        metavar="METRIC",
        help="print the rows sorted by this column, e.g. wall_p95_sec (default: grid order)",
    )
    p.add_argument(
        "--prices",
        action="append",
        default=[],
        metavar="TOML",
        help="add the cost columns (cost_per_episode, token/slot/zombie cost, unpriced "
        "rounds): " + PRICES_HELP + "; repeat it to sweep prices too (one row per point and "
        "table, named by the file's stem)",
    )


def cmd_sweep(args: argparse.Namespace) -> int:
    """Sweep the grid the options describe over the corpus; print the leading rows with the
    Pareto flag; ``-o`` writes the whole table."""
    if not args.scheduler:  # a Parquet file is decoded on another core while the library loads
        from reviewlab.engines._prefetch import prefetch

        prefetch(args.corpus)
    out = output_path(args.output, (*TABLE_SUFFIXES, JSON_SUFFIX)) if args.output else None
    prices = prices_args(args.prices)
    tools = tool_grid(args.tools)
    hedges = tool_grid(args.hedges, option="--hedge")
    base = policy_arg(args.base, "--base")
    _refuse_unused(args, tools, hedges, base)
    breakers = breaker_grid(args) if args.breaker else None
    scales = numbers("--scale", args.scales) if args.scales else None
    narrowings = narrowing_grid(args.narrowings) if args.narrowings else None
    connect_timeout = _checked_run_options(args)
    objectives = _pareto_objectives(args.pareto)
    from reviewlab.analysis.sweep import make_grid

    grid = make_grid(  # a value it refuses names its axis: the option of that dest
        base=base,
        tools=tools or None,
        scales=scales,
        narrowings=narrowings,
        hedges=hedges or None,
        **given(args, "hedge_share"),
        breakers=breakers,
    )
    remote, corpus = _corpus_of(args)

    def check_options(tools: list[str]) -> None:
        check_policy_file(args.base, base, tools, strict=args.strict, flag="--base")
        if hedges and not args.allow_unknown_tools:
            check_typed_tools("--hedge", hedges, tools)

    frame = _swept(args, corpus, grid, prices, check_options, connect_timeout)
    if not remote:
        report_skipped(corpus, args.corpus)
    report_sweep(frame, args, prices, objectives, out)
    return 0


def _refuse_unused(args: argparse.Namespace, tools: Any, hedges: Any, base: Any) -> None:
    """An option given that this invocation would not use is an error naming it and why."""
    refuse_ignored(
        [
            ("--hedge-share", args.hedge_share is not None, bool(hedges), "used only with --hedge"),
            (
                "--breaker-cooldown",
                args.cooldown_rounds is not None,
                bool(args.breaker),
                "used only with --breaker",
            ),
            (
                "--breaker-scope",
                args.scope is not None,
                bool(args.breaker),
                "used only with --breaker",
            ),
            (
                "--connect-timeout",
                args.connect_timeout is not None,
                bool(args.scheduler),
                "used only with --scheduler",
            ),
            (
                "--allow-unknown-tools",
                args.allow_unknown_tools,
                bool(tools or hedges),
                "it lets --tool and --hedge name tools the corpus never calls",
            ),
            (
                "--seed",
                args.seed is not None,
                bool(hedges or base.hedges),
                "nothing in this sweep is drawn (only hedges' second attempts are)",
            ),
        ]
    )


def _checked_run_options(args: argparse.Namespace) -> float:
    """``--top``, ``--connect-timeout`` and ``--threads`` checked before any work; returns the
    connect timeout (default 10 s)."""
    if args.top < 1:
        raise UserError(f"--top: expected a positive number of rows, got {args.top}")
    connect_timeout = 10.0 if args.connect_timeout is None else args.connect_timeout
    positive_seconds(connect_timeout, "--connect-timeout")
    if args.threads is not None and args.scheduler:  # refused before connecting to the cluster
        raise UserError("--threads: points on a Dask cluster run on its workers, not threads")
    return connect_timeout


def _pareto_objectives(pareto: str | None) -> list[str] | None:
    """The summary columns ``--pareto`` names (``None``: the library's default objectives)."""
    if not pareto:
        return None
    from reviewlab.analysis.sweep import objective_column
    from reviewlab.core._errors import ParameterError

    try:
        return [objective_column(part.strip()) for part in pareto.split(",")]
    except ParameterError as exc:  # each --pareto name is an objective the library reads
        raise UserError(f"--pareto: {exc.reason}") from None


def _corpus_of(args: argparse.Namespace) -> tuple[bool, Any]:
    """Whether the corpus is read remotely, and what :func:`sweep` is given: the path itself
    when the workers read it, otherwise the corpus opened here."""
    from reviewlab.recording._locations import is_url

    # With --scheduler (or behind a URL) the workers read the partitions: the corpus is never
    # opened here, and the options are checked against the tools the workers report.
    remote = is_url(args.corpus) or bool(args.scheduler)
    if remote and args.on_error != "raise":
        raise UserError(
            "--on-error: skipping bad lines reads the corpus on this machine; a corpus swept on "
            "a cluster is read by its workers (run it without --scheduler)"
        )
    if remote:
        return True, args.corpus
    corpus = open_for(args.corpus, args.on_error)
    require_episodes(corpus, args.corpus)
    return False, corpus


def _swept(
    args: argparse.Namespace,
    corpus: Any,
    grid: Any,
    prices: Any,
    check_options: Callable[[list[str]], None],
    connect_timeout: float,
) -> Any:
    """The sweep's frame, on the cluster ``--scheduler`` names or in-process; a ``--tool`` the
    corpus never calls is said with the command's own options."""
    from reviewlab.analysis._known_tools import UnknownTools
    from reviewlab.analysis.sweep import sweep

    client: Any = None
    if args.scheduler:
        client = dask_client(args.scheduler, connect_timeout)
    options: dict[str, Any] = {} if args.seed is None else {"seed": args.seed}
    try:
        with computing_on(args.corpus):
            return sweep(
                corpus,
                grid,
                engine=args.engine,
                client=client,
                allow_unknown_tools=args.allow_unknown_tools,
                prices=prices,
                threads=args.threads,
                on_tools=check_options,
                **options,
            )
    except UnknownTools as exc:
        if exc.parameter != "grid":
            raise
        # The grid's tools are the ones --tool named: said with the command's own options.
        raise UserError(exc.message("--tool", "--allow-unknown-tools")) from None
    finally:
        if client is not None:
            client.close()


SWEEP = Command(
    name="sweep",
    help="replay a corpus under a grid of policies; one row per policy point",
    arguments=_arguments,
    handler=cmd_sweep,
    examples=f"  reviewlab sweep {EXAMPLE_CORPUS} --tool read_file=5,30,120 "
    "--tool query_code=60,120 \\\n"
    "      --narrowing inherit,reserve:30 --sort wall_p95_sec -o sweep.csv\n"
    f"  reviewlab sweep {EXAMPLE_CORPUS} --scale 0.5,1,2 --threads 2 --json\n"
    f"  reviewlab convert {EXAMPLE_CORPUS} parts --rows-per-partition 2000\n"
    "  reviewlab sweep parts --scale 0.25,0.5,1,2 --scheduler tcp://10.0.0.5:8786",
)
