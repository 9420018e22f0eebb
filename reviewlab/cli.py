"""The ``reviewlab`` command line: one subcommand per module, thin over the library.

Every subcommand parses its arguments, calls one library function and prints
or writes what it returned; no metric or policy logic lives here. Lifecycle of
one invocation: parse → run the subcommand → exit status. ``main`` returns
the status instead of exiting so tests can call it directly. This module holds
the parser, its help texts and the entry point; the subcommand handlers are in
:mod:`reviewlab._cli_commands`.

Invariants:

* A user error (missing file, malformed recording, invalid policy TOML, bad
  grid spec, unwritable output…) is ONE line on stderr, ``reviewlab: error:
  …``, with exit status 2, never a traceback. ``--debug`` re-raises instead.
* Outputs are written whole or not at all (see :func:`reviewlab.ui.report.write_table`).
* Heavy imports (pandas, SimPy, Dask, Jupyter) happen inside the subcommand
  that needs them, so ``reviewlab --help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from reviewlab._cli_commands import (
    PROG,
    UserError,
    cmd_convert,
    cmd_dashboard,
    cmd_demo,
    cmd_export,
    cmd_import,
    cmd_incident,
    cmd_lab,
    cmd_record,
    cmd_replay,
    cmd_sweep,
    cmd_synth,
    cmd_tune,
    one_line,
)
from reviewlab.core.vocab import CENSORING_MODES, IMPORT_FORMATS, REACTIONS

__all__ = ["UserError", "build_parser", "main"]

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 70  # EX_SOFTWARE

# UserError is defined beside the handlers that raise it; this module is its public home.
UserError.__module__ = __name__


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the subcommand's ``--help``."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(EXIT_USER_ERROR)


# -- parser --------------------------------------------------------------------------------
_DESCRIPTION = """\
Tool-call timeout policy for LLM reviewer-agent loops: bound every tool call,
abandon the ones that outlive their bound, and measure what that costs.
Run `reviewlab demo` for the guided tour (live episode, incident replay, sweep,
recommendation, out/report.html)."""


_CORPUS = "data/episodes/synthetic-1k.jsonl.gz"
_PRICES_HELP = (
    "a price table in TOML (per-model token prices, slot and zombie seconds); 'sample' is "
    "the sourced table shipped as reviewlab/data/prices.toml"
)
_EXAMPLES = {
    "demo": "  reviewlab demo                     # writes out/report.html\n"
    "  reviewlab demo --quick --out /tmp/r",
    "record": "  reviewlab record --base-url http://localhost:8000/v1 --model qwen2.5-coder \\\n"
    "      --root ~/src/project --task 'Review the staged change' -o live.jsonl",
    "replay": f"  reviewlab replay {_CORPUS}\n"
    "  reviewlab replay data/incidents/wedged-query-code.jsonl --policy unbounded "
    "--engine twin --slots 6\n"
    f"  reviewlab replay {_CORPUS} --policy tuned.toml -o calls.parquet",
    "sweep": f"  reviewlab sweep {_CORPUS} --tool read_file=5,30,120 --tool query_code=60,120 \\\n"
    "      --narrowing inherit,reserve:30 --sort wall_p95_sec -o sweep.csv\n"
    f"  reviewlab sweep {_CORPUS} --scale 0.25,0.5,1,2 --scheduler tcp://10.0.0.5:8786",
    "tune": f"  reviewlab tune {_CORPUS} --max-timeout-coverage-loss 0.005 -o tuned.toml\n"
    f"  reviewlab tune {_CORPUS} --objective cost --prices prices.toml\n"
    f"  reviewlab tune {_CORPUS} --max-abandoned-rate 0.002 --objective max_silence",
    "incident": "  reviewlab incident data/incidents/wedged-query-code.jsonl\n"
    "  reviewlab incident day.jsonl --top 10 --policy ouroboros --policy tuned.toml",
    "synth": "  reviewlab synth -n 1000 --seed 0 -o corpus.jsonl.gz\n"
    "  reviewlab synth -n 1000000 -o corpus.parquet\n"
    "  reviewlab synth --incident -o incident.jsonl",
    "convert": f"  reviewlab convert {_CORPUS} corpus.parquet\n"
    "  reviewlab convert corpus.parquet corpus-parts --rows-per-partition 100000\n"
    "  reviewlab convert corpus-parts corpus.jsonl.gz",
    "import": "  reviewlab import openhands output.jsonl -o openhands.jsonl\n"
    "  reviewlab import inspect logs/run.eval -o inspect.jsonl\n"
    "  reviewlab import otel otelcol-traces.jsonl -o traces.jsonl\n"
    "  reviewlab import auto run.traj -o swe.jsonl",
    "export": f"  reviewlab export otel {_CORPUS} -o corpus.otlp.jsonl",
    "lab": "  reviewlab lab --dry-run",
    "dashboard": f"  reviewlab dashboard --corpus {_CORPUS} --port 8866",
}


def build_parser() -> argparse.ArgumentParser:
    """The full ``reviewlab`` parser; each subparser's ``handler`` runs the subcommand."""
    parser = _Parser(
        prog=PROG, description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for errors (for bug reports)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(
        name: str, help_: str, handler: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        examples = _EXAMPLES.get(name)
        p = sub.add_parser(
            name,
            help=help_,
            description=help_,
            epilog=f"examples:\n{examples}" if examples else None,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(handler=handler, parser=p)
        return p

    policy_help = (
        "policy: a TOML file with [policy] and optional [narrowing] tables, or a preset: "
        "ouroboros (default), unbounded (the pre-fix behaviour), uniform:SEC"
    )

    p = command(
        "demo",
        "run the main job: a live episode with a wedged tool, the incident and the "
        "bundled corpus replayed under the pre-fix and the ouroboros policies, a sweep, a "
        "recommended policy and a report (OUT/report.html with PNG charts)",
        cmd_demo,
    )
    p.add_argument(
        "--out", default="out", metavar="DIR", help="where the report goes (default: out)"
    )
    p.add_argument("--quick", action="store_true", help="a smaller corpus and grid (a smoke run)")

    p = command(
        "record",
        "record one live review episode against an OpenAI-compatible endpoint "
        "into the reviewlab.episode/1 JSONL format",
        cmd_record,
    )
    p.add_argument(
        "--base-url", required=True, metavar="URL", help="endpoint, e.g. http://localhost:8000/v1"
    )
    p.add_argument("--model", required=True, metavar="NAME", help="model name sent to the endpoint")
    p.add_argument(
        "--root", required=True, metavar="REPO", help="the workspace the reviewer may read"
    )
    p.add_argument("--task", required=True, metavar="TEXT", help="the review task")
    p.add_argument("--api-key", default=None, help="API key (default: $OPENAI_API_KEY)")
    p.add_argument("--policy", default=None, metavar="TOML", help=policy_help)
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl", help="recording to write")
    p.add_argument(
        "--append", action="store_true", help="add the episode to an existing recording at -o"
    )
    p.add_argument(
        "--force", action="store_true", help="replace an existing non-empty recording at -o"
    )
    p.add_argument(
        "--mcp",
        default=None,
        metavar="COMMAND",
        help="give the reviewer the tools of this MCP server, started over stdio in --root "
        '(e.g. "npx @modelcontextprotocol/server-filesystem ."); recorded as reviewlab.episode/2',
    )

    p = command(
        "replay",
        "replay a recorded corpus under a policy and print its summary and per-tool breakdown",
        cmd_replay,
    )
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="a malformed corpus line: stop with its error (default), or skip it and report it",
    )
    p.add_argument("--policy", default=None, metavar="TOML", help=policy_help)
    p.add_argument(
        "--engine",
        choices=("twin", "vectorized", "real"),
        default="vectorized",
        help="twin: SimPy reference (needed for --slots); vectorized: NumPy, fast (default); "
        "real: real threads on a scaled clock",
    )
    p.add_argument(
        "--censored",
        choices=(*CENSORING_MODES, "bounds"),
        default="wedge",
        help="what a call that never returned in the recording does: wedge (never returns; "
        "default), observed (returns when last seen), impute (a seeded Kaplan-Meier draw), "
        "bounds (observed and wedge side by side)",
    )
    p.add_argument(
        "--reaction",
        choices=REACTIONS,
        default="as_recorded",
        help="what the model does after an abandonment: as_recorded (later rounds unchanged; "
        "default), reissue (asks again once), skip_target (gives up on the abandoned path)",
    )
    p.add_argument(
        "--slots",
        type=int,
        default=None,
        metavar="N",
        help="simulate a pool of N reviewer slots (twin engine)",
    )
    p.add_argument("--seed", type=int, default=None, help="seed for --censored impute")
    p.add_argument(
        "--time-scale",
        type=float,
        default=None,
        metavar="F",
        help="engine real: recorded seconds are slept times F (default 0.001)",
    )
    p.add_argument(
        "--table",
        choices=("calls", "episodes", "tools"),
        default="calls",
        help="which frame -o writes (default: calls)",
    )
    p.add_argument(
        "-o", "--output", default=None, metavar="CSV|PARQUET", help="write the frame here"
    )

    p = command(
        "sweep", "replay a corpus under a grid of policies; one row per policy point", cmd_sweep
    )
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="a malformed corpus line: stop with its error (default), or skip it and report it",
    )
    p.add_argument(
        "--tool",
        action="append",
        default=[],
        metavar="TOOL=SEC,...",
        help="timeouts to try for one tool, e.g. read_file=5,30,120 (repeatable)",
    )
    p.add_argument(
        "--scale",
        default=None,
        metavar="F,...",
        help="multipliers of the base policy, e.g. 0.5,1,2",
    )
    p.add_argument(
        "--narrowing",
        default=None,
        metavar="MODE,...",
        help="narrowing modes: inherit, none, unbounded, reserve:SEC, fraction:F",
    )
    p.add_argument("--base", default=None, metavar="TOML", help="base policy; " + policy_help)
    p.add_argument(
        "--engine",
        choices=("vectorized", "twin"),
        default="vectorized",
        help="vectorized: NumPy, fast (default); twin: the SimPy reference, slow",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="run the points on an existing Dask cluster (corpus scattered once)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="in-process, replay N points at once (default: the cores, at most 8; "
        "the vectorized engine only)",
    )
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="SEC",
        help="how long to try reaching --scheduler (default 10)",
    )
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
        "rounds): " + _PRICES_HELP + "; repeat it to sweep prices too (one row per point and "
        "table, named by the file's stem)",
    )
    p.add_argument(
        "--hedge",
        action="append",
        default=[],
        metavar="TOOL=SEC,...",
        help="hedge delays to try for one tool, e.g. read_file=0.5,1,2: a second attempt "
        "starts after that long without an answer (repeatable; the tool is marked idempotent)",
    )
    p.add_argument(
        "--hedge-share",
        type=float,
        default=0.05,
        metavar="RATE",
        help="the largest share of a hedged tool's calls that may be hedged (default 0.05)",
    )
    p.add_argument(
        "--breaker",
        default=None,
        metavar="N,...",
        help="breaker thresholds to try: consecutive abandonments of a tool that withhold it "
        "(0: no breaker), e.g. 0,3,5",
    )
    p.add_argument(
        "--breaker-cooldown",
        type=int,
        default=2,
        metavar="ROUNDS",
        help="model rounds a tripped breaker withholds its tool (default 2)",
    )
    p.add_argument(
        "--breaker-scope",
        choices=("episode", "slot"),
        default="episode",
        help="where a breaker's count lives: each episode (default) or the reviewer slot",
    )
    p.add_argument(
        "-o", "--output", default=None, metavar="CSV|PARQUET", help="write the sweep table"
    )

    p = command(
        "tune",
        "per tool, the shortest timeout whose timeout-caused coverage loss and abandoned-call "
        "rate stay within budget, and what that buys",
        cmd_tune,
    )
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="a malformed corpus line: stop with its error (default), or skip it and report it",
    )
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
        default="wall_p95",
        help="what the tightening steps minimise: wall_p95 (default), wall_p99, wall_p50, "
        "wall_max, max_silence, zombie, cost (needs --prices), or a summary column",
    )
    p.add_argument(
        "--prices",
        default=None,
        metavar="TOML",
        help="price every candidate's replay and state the cost per episode: " + _PRICES_HELP,
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        metavar="P",
        help="one-sided confidence of the budgets' upper bounds (default 0.95; 0.5: point "
        "estimates)",
    )
    p.add_argument(
        "--base",
        default=None,
        metavar="TOML",
        help="the policy to improve on and its narrowing; " + policy_help,
    )
    p.add_argument(
        "-o", "--output", default=None, metavar="TOML", help="write the recommended policy"
    )

    p = command(
        "incident",
        "find the longest silences of a recorded corpus: slot, episode, round, tool, arguments, "
        "clock time, and what each candidate policy bounds them to",
        cmd_incident,
    )
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument("--top", type=int, default=5, help="silences to show (default 5)")
    p.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="TOML",
        help="a candidate policy (repeatable; default: the pre-fix behaviour and ouroboros); "
        + policy_help,
    )
    p.add_argument(
        "--censored",
        choices=("wedge", "observed", "impute"),
        default="wedge",
        help="what a call that never returned does in the replays (default wedge: never returns)",
    )

    p = command("synth", "write a synthetic corpus (or the wedged-query_code incident)", cmd_synth)
    p.add_argument(
        "-n", type=int, default=1000, help="episodes (default 1000; ignored with --incident)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--incident",
        action="store_true",
        help="write the incident day instead: a six-slot pool whose reviewer-3 wedges on "
        "query_code for 26,160 s",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl[.gz]|OUT.parquet")

    p = command(
        "convert",
        "copy a corpus into another format: JSONL (.jsonl, .jsonl.gz) or columnar Parquet "
        "(.parquet, or a directory of partitions)",
        cmd_convert,
    )
    p.add_argument("source", help="corpus to read: .jsonl[.gz], .parquet or a partition directory")
    p.add_argument(
        "output", help="corpus to write: .jsonl[.gz], .parquet, or any other name for a directory"
    )
    p.add_argument(
        "--rows-per-partition",
        type=int,
        default=None,
        metavar="N",
        help="write a directory of partitions of N episodes (default 250000 for a directory)",
    )
    p.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="skip: leave out bad episodes, one stderr line each (default: stop at the first)",
    )

    p = command("import", "convert another agent system's log into reviewlab.episode/1", cmd_import)
    p.add_argument(
        "format",
        choices=(*IMPORT_FORMATS, "auto"),
        help="the log's format; auto: detect it from the content",
    )
    p.add_argument(
        "file",
        help="OpenHands trajectory (.json/.jsonl), Inspect AI eval log (.json/.eval), SWE-agent "
        "trajectory (.traj) or OpenTelemetry trace (OTLP/JSON, e.g. the Collector's file exporter)",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl")

    p = command("export", "write recorded episodes in another system's format", cmd_export)
    p.add_argument("format", choices=("otel",), help="otel: OTLP/JSON, one trace per episode")
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl")

    p = command("lab", "open JupyterLab on the notebooks/", cmd_lab)
    p.add_argument(
        "--notebooks", default=None, metavar="DIR", help="notebook folder (default notebooks/)"
    )
    p.add_argument("--port", type=int, default=None, help="port for JupyterLab")
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")

    p = command("dashboard", "serve the interactive dashboard with Voilà", cmd_dashboard)
    p.add_argument(
        "--corpus", default=None, help="recorded episodes to open (default: bundled corpus)"
    )
    p.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default 8866)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    return parser


# -- entry point ---------------------------------------------------------------------------
def _user_error_types() -> tuple[type[BaseException], ...]:
    # ValueError covers PolicyError, pydantic's ValidationError and the recording errors;
    # OSError covers missing, unreadable and unwritable files.
    return (UserError, ValueError, OSError, ImportError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``reviewlab`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:  # reported by the subcommand's parser, so the hint names its --help
            getattr(args, "parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:  # --help (0) or a usage error (2, already printed)
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (`reviewlab replay ... | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except _user_error_types() as exc:
        if args.debug or os.environ.get("REVIEWLAB_DEBUG"):
            raise
        sys.stderr.write(f"{PROG}: error: {one_line(exc)}\n")
        return EXIT_USER_ERROR
    except MemoryError:
        if args.debug or os.environ.get("REVIEWLAB_DEBUG"):
            raise
        sys.stderr.write(
            f"{PROG}: error: {args.command}: out of memory; the input or an option asks for more "
            "than this machine has (try a smaller corpus, grid or count)\n"
        )
        return EXIT_USER_ERROR
    except Exception as exc:  # a bug, or an input no check foresaw: still one line, no traceback
        if args.debug or os.environ.get("REVIEWLAB_DEBUG"):
            raise
        sys.stderr.write(
            f"{PROG}: internal error: {type(exc).__name__}: {one_line(exc)} "
            f"(run '{PROG} --debug {args.command} ...' for the traceback and report it)\n"
        )
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
