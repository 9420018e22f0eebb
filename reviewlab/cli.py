"""The ``reviewlab`` command line: one subcommand per module, thin over the library.

Every subcommand parses its arguments, calls one library function and prints
or writes what it returned; no metric or policy logic lives here. Lifecycle of
one invocation: parse → run the subcommand → exit status. ``main`` returns
the status instead of exiting so tests can call it directly.

Invariants:

* A user error (missing file, malformed recording, invalid policy TOML, bad
  grid spec, unwritable output…) is ONE line on stderr, ``reviewlab: error:
  …``, with exit status 2, never a traceback. ``--debug`` re-raises instead.
* Outputs are written whole or not at all (see :func:`reviewlab.report.write_table`).
* Heavy imports (pandas, SimPy, Dask, Jupyter) happen inside the subcommand
  that needs them, so ``reviewlab --help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["UserError", "build_parser", "main"]

PROG = "reviewlab"
EXIT_USER_ERROR = 2


class UserError(Exception):
    """Something the user can fix (an argument, a file); shown as one line, no traceback."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the subcommand's ``--help``."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(EXIT_USER_ERROR)


# -- argument helpers (syntax only; meaning lives in the library) ----------------------------
def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise UserError(f"{text}: no such file")
    if path.is_dir():
        raise UserError(f"{text}: is a directory, expected a file")
    return path


def _load_corpus(path_text: str) -> list[Any]:
    path = _existing_file(path_text)
    from reviewlab.recording.files import load_episodes

    episodes = list(load_episodes(path))
    if not episodes:
        raise UserError(f"{path_text}: holds no episodes")
    return episodes


def _policy_arg(spec: str | None) -> tuple[Any, Any]:
    """``--policy``: a TOML file, or a preset ``ouroboros`` | ``unbounded`` | ``uniform:SEC``."""
    from reviewlab.policy import Narrowing, TimeoutPolicy, load_policy_file

    if spec is None or spec == "ouroboros":
        return TimeoutPolicy.ouroboros(), Narrowing()
    if spec in ("unbounded", "pre-fix", "prefix"):
        return TimeoutPolicy.ouroboros(), Narrowing.unbounded()
    if spec.startswith("uniform:"):
        return TimeoutPolicy.uniform(_number("--policy uniform", spec.partition(":")[2])), Narrowing()
    if not spec.endswith(".toml") and not Path(spec).exists():
        raise UserError(f"--policy: {spec}: no such policy file (or use ouroboros, unbounded, uniform:SEC)")
    return load_policy_file(spec)


def _number(what: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{what}: expected a number, got {text!r}") from None


def _numbers(what: str, text: str) -> list[float]:
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise UserError(f"{what}: expected comma-separated numbers, got {text!r}")
    return [_number(what, item) for item in items]


def _tool_grid(specs: Sequence[str]) -> dict[str, list[float]]:
    """``--tool read_file=5,30,120`` (repeatable) → ``{"read_file": [5, 30, 120]}``."""
    grid: dict[str, list[float]] = {}
    for spec in specs:
        tool, sep, values = spec.partition("=")
        if not sep or not tool.strip() or not values.strip():
            raise UserError(f"--tool: expected TOOL=SEC[,SEC...], got {spec!r}")
        grid[tool.strip()] = _numbers(f"--tool {tool.strip()}", values)
    return grid


def _narrowing_grid(text: str) -> list[Any]:
    """``--narrowing inherit,reserve:30,fraction:0.5,none,unbounded`` → :class:`Narrowing` objects."""
    from reviewlab.policy import Narrowing

    modes: list[Any] = []
    for item in (part.strip() for part in text.split(",")):
        mode, _, value = item.partition(":")
        if mode in ("inherit", "none", "unbounded") and not value:
            modes.append(Narrowing(mode=mode))  # type: ignore[arg-type]
        elif mode == "reserve" and value:
            modes.append(Narrowing(mode="reserve", reserve_sec=_number("--narrowing reserve", value)))
        elif mode == "fraction" and value:
            modes.append(Narrowing(mode="fraction", fraction=_number("--narrowing fraction", value)))
        else:
            raise UserError(
                f"--narrowing: bad mode {item!r}; expected inherit, none, unbounded, reserve:SEC or fraction:F"
            )
    return modes


def _output_path(text: str, suffixes: Sequence[str], flag: str = "-o") -> Path:
    path = Path(text)
    if not any(path.name.endswith(suffix) for suffix in suffixes):
        raise UserError(f"{flag} {text}: expected a file ending in {' or '.join(suffixes)}")
    if path.parent != Path("") and not path.parent.is_dir():
        raise UserError(f"{flag} {text}: directory {path.parent} does not exist")
    return path


_TABLE_SUFFIXES = (".csv", ".parquet")
_JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")


def _print(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")


# -- subcommands ---------------------------------------------------------------------------
def _cmd_demo(args: argparse.Namespace) -> int:
    from reviewlab.demo import run_demo

    run_demo(out_dir=Path(args.out), quick=args.quick, echo=_print)
    return 0


def _cmd_record(args: argparse.Namespace) -> int:
    root = Path(args.root)
    if not root.is_dir():
        raise UserError(f"--root {args.root}: no such directory")
    out = _output_path(args.output, _JSONL_SUFFIXES)
    policy, narrowing = _policy_arg(args.policy)
    from reviewlab.openai_model import record_live
    from reviewlab.report import receipts_table, text_table

    options: dict[str, Any] = {"policy": policy, "narrowing": narrowing}
    if args.api_key is not None:
        options["api_key"] = args.api_key
    result = record_live(args.base_url, args.model, root, args.task, out, **options)
    if result.receipts:
        _print(text_table(receipts_table(result.receipts)))
    usage = result.usage
    _print(f"end reason: {result.end_reason}; rounds: {usage.get('native_rounds')}; "
           f"tool calls: {usage.get('native_tool_calls')}; source gap: {usage.get('native_source_gap') or '-'}")
    _print(f"recorded 1 episode to {out}")
    if result.end_reason == "model_error":
        # The failed episode is still an honest recording, but the command did not do what was asked.
        reason = _one_line(ValueError(usage.get("native_model_error") or "the model endpoint failed"))
        sys.stderr.write(f"{PROG}: error: {reason}\n")
        return 1
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    out = _output_path(args.output, _TABLE_SUFFIXES) if args.output else None
    policy, narrowing = _policy_arg(args.policy)
    if args.slots is not None and args.slots < 1:
        raise UserError(f"--slots: expected a positive number of slots, got {args.slots}")
    episodes = _load_corpus(args.corpus)
    from reviewlab.replay import replay
    from reviewlab.report import summary_table, text_table, write_table

    options: dict[str, Any] = {}
    if args.seed is not None:
        options["seed"] = args.seed
    result = replay(episodes, policy, narrowing, engine=args.engine, censored=args.censored,
                    slots=args.slots, time_scale=args.time_scale, **options)
    label = ("unbounded (pre-fix)" if narrowing.mode == "unbounded"
             else f"{getattr(policy, 'name', 'policy')} / {narrowing.label}")
    _print(text_table(summary_table({label: result.summary})))
    _print("")
    _print(text_table(result.per_tool()))
    if out is not None:
        frame = {"calls": result.calls, "episodes": result.episodes, "tools": result.per_tool()}[args.table]
        write_table(frame, out)
        _print(f"wrote {len(frame):,} rows ({args.table}) to {out}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    out = _output_path(args.output, _TABLE_SUFFIXES) if args.output else None
    tools = _tool_grid(args.tool)
    scales = _numbers("--scale", args.scale) if args.scale else None
    narrowings = _narrowing_grid(args.narrowing) if args.narrowing else None
    base, _ = _policy_arg(args.base)
    episodes = _load_corpus(args.corpus)
    from reviewlab.report import sweep_view, text_table, write_table
    from reviewlab.sweep import make_grid, pareto, sweep

    try:
        grid = make_grid(base=base, tools=tools or None, scales=scales, narrowings=narrowings)
    except ValueError as exc:  # a grid value the policy refuses, e.g. a zero scale or a negative timeout
        raise UserError(f"grid: {_one_line(exc)} (check --tool, --scale and --narrowing)") from None
    client: Any = None
    if args.scheduler:
        client = _dask_client(args.scheduler, args.connect_timeout)
    try:
        frame = sweep(episodes, grid, engine=args.engine, client=client)
    finally:
        if client is not None:
            client.close()
    frame["pareto"] = pareto(frame)
    if args.sort is not None and args.sort not in frame.columns:
        raise UserError(f"--sort: no column {args.sort!r}; try one of {', '.join(frame.columns[-14:])}")
    _print(text_table(sweep_view(frame, sort_by=args.sort, top=args.top)))
    if len(frame) > args.top:
        _print(f"({len(frame)} policy points; {args.top} shown)")
    if out is not None:
        write_table(frame, out)
        _print(f"wrote {len(frame)} policy points to {out}")
    return 0


def _dask_client(address: str, timeout_sec: float) -> Any:
    """Connect to an existing Dask scheduler; an unreachable address is a user error."""
    from distributed import Client

    try:
        return Client(address, timeout=f"{timeout_sec}s")
    except (OSError, TimeoutError) as exc:
        raise UserError(f"--scheduler {address}: cannot connect ({exc})") from None


def _cmd_tune(args: argparse.Namespace) -> int:
    out = _output_path(args.output, (".toml",)) if args.output else None
    base, narrowing = _policy_arg(args.base)
    episodes = _load_corpus(args.corpus)
    from reviewlab.policy import save_policy_file
    from reviewlab.report import summary_table, text_table
    from reviewlab.tune import recommend

    recommendation = recommend(
        episodes, max_coverage_loss=args.max_coverage_loss, max_abandoned_rate=args.max_abandoned_rate,
        objective=args.objective, base=base, narrowing=narrowing,
    )
    _print(text_table(recommendation.explain))
    _print("")
    _print(text_table(summary_table({f"base ({base.name})": recommendation.baseline,
                                     "recommended": recommendation.summary})))
    _print("")
    _print(recommendation.policy.to_toml())
    if out is not None:
        save_policy_file(out, recommendation.policy, recommendation.narrowing)
        _print(f"wrote the recommended policy to {out} (use it with --policy {out})")
    return 0


def _cmd_synth(args: argparse.Namespace) -> int:
    out = _output_path(args.output, _JSONL_SUFFIXES)
    if args.incident:
        from reviewlab.incident import write_incident

        written = write_incident(out, seed=args.seed)
        _print(f"wrote the incident day ({written} episodes, one wedged query_code) to {out}")
        return 0
    if args.n < 1:
        raise UserError(f"-n: expected a positive number of episodes, got {args.n}")
    from reviewlab.synth import write_synthetic

    written = write_synthetic(out, args.n, seed=args.seed)
    _print(f"wrote {written} episode(s) to {out}")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    source = _existing_file(args.file)
    out = _output_path(args.output, _JSONL_SUFFIXES)
    from reviewlab.importers import import_inspect, import_openhands
    from reviewlab.recording.files import save_episodes

    importer = import_openhands if args.format == "openhands" else import_inspect
    episodes = importer(source)
    if not episodes:
        raise UserError(f"{args.file}: no episodes found in this {args.format} log")
    save_episodes(episodes, out)
    calls = sum(len(episode.calls) for episode in episodes)
    censored = sum(not call.completed for episode in episodes for call in episode.calls)
    _print(f"imported {len(episodes)} episode(s), {calls} call(s) ({censored} censored) from {source} to {out}")
    return 0


def _launch(argv: Sequence[str], dry_run: bool) -> int:
    if dry_run:
        _print(shlex.join(argv))
        return 0
    try:
        return subprocess.call(list(argv))
    except FileNotFoundError:
        raise UserError(f"cannot start {argv[0]}: not installed") from None


def _repo_dir(name: str) -> Path:
    """``notebooks/`` next to the package (a source checkout), else under the current directory."""
    candidate = Path(__file__).resolve().parent.parent / name
    return candidate if candidate.is_dir() else Path.cwd() / name


def _cmd_lab(args: argparse.Namespace) -> int:
    notebooks = Path(args.notebooks) if args.notebooks else _repo_dir("notebooks")
    if not notebooks.is_dir():
        raise UserError(f"--notebooks {notebooks}: no such directory")
    from reviewlab.dashboard import lab_command

    return _launch(lab_command(notebooks, args.port), args.dry_run)


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from reviewlab import dashboard

    corpus = _existing_file(args.corpus) if args.corpus else None
    if args.dry_run:
        dashboard.dashboard_env(corpus)  # validates the corpus like a real start would
        argv = dashboard.dashboard_command(args.port, corpus, open_browser=not args.no_browser)
        prefix = f"{dashboard.CORPUS_ENV}={shlex.quote(str(corpus.resolve()))} " if corpus else ""
        _print(prefix + shlex.join(argv))
        return 0
    return int(dashboard.main(args.port, corpus, open_browser=not args.no_browser))


# -- parser --------------------------------------------------------------------------------
_DESCRIPTION = """\
Tool-call timeout policy for LLM reviewer-agent loops: bound every tool call,
abandon the ones that outlive their bound, and measure what that costs.
Run `reviewlab demo` for the guided tour (live episode, incident replay, sweep,
recommendation, out/report.html)."""


_CORPUS = "data/episodes/synthetic-1k.jsonl.gz"
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
    "tune": f"  reviewlab tune {_CORPUS} --max-coverage-loss 0.01 -o tuned.toml",
    "synth": "  reviewlab synth -n 1000 --seed 0 -o corpus.jsonl.gz\n"
             "  reviewlab synth --incident -o incident.jsonl",
    "import": "  reviewlab import openhands output.jsonl -o openhands.jsonl\n"
              "  reviewlab import inspect logs/run.eval -o inspect.jsonl",
    "lab": "  reviewlab lab --dry-run",
    "dashboard": f"  reviewlab dashboard --corpus {_CORPUS} --port 8866",
}


def build_parser() -> argparse.ArgumentParser:
    """The full ``reviewlab`` parser; each subparser's ``handler`` runs the subcommand."""
    parser = _Parser(prog=PROG, description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors (for bug reports)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name: str, help_: str, handler: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        examples = _EXAMPLES.get(name)
        p = sub.add_parser(name, help=help_, description=help_,
                           epilog=f"examples:\n{examples}" if examples else None,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(handler=handler, parser=p)
        return p

    policy_help = ("policy: a TOML file with [policy] and optional [narrowing] tables, or a preset: "
                   "ouroboros (default), unbounded (the pre-fix behaviour), uniform:SEC")

    p = command("demo", "run the main job: a live episode with a wedged tool, the incident and the "
                "bundled corpus replayed under the pre-fix and the ouroboros policies, a sweep, a "
                "recommended policy and a report (OUT/report.html with PNG charts)", _cmd_demo)
    p.add_argument("--out", default="out", metavar="DIR", help="where the report goes (default: out)")
    p.add_argument("--quick", action="store_true", help="a smaller corpus and grid (a smoke run)")

    p = command("record", "record one live review episode against an OpenAI-compatible endpoint "
                "into the reviewlab.episode/1 JSONL format", _cmd_record)
    p.add_argument("--base-url", required=True, metavar="URL", help="endpoint, e.g. http://localhost:8000/v1")
    p.add_argument("--model", required=True, metavar="NAME", help="model name sent to the endpoint")
    p.add_argument("--root", required=True, metavar="REPO", help="the workspace the reviewer may read")
    p.add_argument("--task", required=True, metavar="TEXT", help="the review task")
    p.add_argument("--api-key", default=None, help="API key (default: $OPENAI_API_KEY)")
    p.add_argument("--policy", default=None, metavar="TOML", help=policy_help)
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl", help="recording to write")

    p = command("replay", "replay a recorded corpus under a policy and print its summary and "
                "per-tool breakdown", _cmd_replay)
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument("--policy", default=None, metavar="TOML", help=policy_help)
    p.add_argument("--engine", choices=("twin", "vectorized", "real"), default="vectorized",
                   help="twin: SimPy reference (needed for --slots); vectorized: NumPy, fast (default); "
                        "real: real threads on a scaled clock")
    p.add_argument("--censored", choices=("wedge", "impute"), default="wedge",
                   help="what a call that never returned does: wedge forever (default) or return at an "
                        "imputed time")
    p.add_argument("--slots", type=int, default=None, metavar="N",
                   help="simulate a pool of N reviewer slots (twin engine)")
    p.add_argument("--seed", type=int, default=None, help="seed for --censored impute")
    p.add_argument("--time-scale", type=float, default=0.001, metavar="F",
                   help="engine real: recorded seconds are slept times F (default 0.001)")
    p.add_argument("--table", choices=("calls", "episodes", "tools"), default="calls",
                   help="which frame -o writes (default: calls)")
    p.add_argument("-o", "--output", default=None, metavar="CSV|PARQUET", help="write the frame here")

    p = command("sweep", "replay a corpus under a grid of policies; one row per policy point", _cmd_sweep)
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument("--tool", action="append", default=[], metavar="TOOL=SEC,...",
                   help="timeouts to try for one tool, e.g. read_file=5,30,120 (repeatable)")
    p.add_argument("--scale", default=None, metavar="F,...",
                   help="multipliers of the base policy, e.g. 0.5,1,2")
    p.add_argument("--narrowing", default=None, metavar="MODE,...",
                   help="narrowing modes: inherit, none, unbounded, reserve:SEC, fraction:F")
    p.add_argument("--base", default=None, metavar="TOML", help="base policy; " + policy_help)
    p.add_argument("--engine", choices=("vectorized", "twin"), default="vectorized",
                   help="vectorized: NumPy, fast (default); twin: the SimPy reference, slow")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="run the points on an existing Dask cluster (corpus scattered once)")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SEC",
                   help="how long to try reaching --scheduler (default 10)")
    p.add_argument("--top", type=int, default=20, help="rows to print (default 20)")
    p.add_argument("--sort", default=None, metavar="METRIC",
                   help="print the rows sorted by this column, e.g. wall_p95_sec (default: grid order)")
    p.add_argument("-o", "--output", default=None, metavar="CSV|PARQUET", help="write the sweep table")

    p = command("tune", "recommend per-tool timeouts that meet the constraints and best the objective",
                _cmd_tune)
    p.add_argument("corpus", help="recorded episodes (.jsonl or .jsonl.gz)")
    p.add_argument("--max-coverage-loss", type=float, default=0.01, metavar="RATE",
                   help="largest acceptable coverage-loss rate (default 0.01)")
    p.add_argument("--max-abandoned-rate", type=float, default=None, metavar="RATE",
                   help="largest acceptable abandoned-call rate (default: no limit)")
    p.add_argument("--objective", default="p95_wall",
                   help="what to minimise: p50_wall, p95_wall (default), p99_wall, max_wall, max_silence, "
                        "zombie, or a summary column")
    p.add_argument("--base", default=None, metavar="TOML",
                   help="the policy to improve on and its narrowing; " + policy_help)
    p.add_argument("-o", "--output", default=None, metavar="TOML", help="write the recommended policy")

    p = command("synth", "write a synthetic corpus (or the wedged-query_code incident)", _cmd_synth)
    p.add_argument("-n", type=int, default=1000, help="episodes (default 1000; ignored with --incident)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--incident", action="store_true",
                   help="write the incident day instead: a six-slot pool whose reviewer-3 wedges on "
                        "query_code for 26,160 s")
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl[.gz]")

    p = command("import", "convert another agent system's log into reviewlab.episode/1", _cmd_import)
    p.add_argument("format", choices=("openhands", "inspect"), help="the log's format")
    p.add_argument("file", help="OpenHands trajectory (.json) or Inspect AI eval log (.json/.eval)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl")

    p = command("lab", "open JupyterLab on the notebooks/", _cmd_lab)
    p.add_argument("--notebooks", default=None, metavar="DIR", help="notebook folder (default notebooks/)")
    p.add_argument("--port", type=int, default=None, help="port for JupyterLab")
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")

    p = command("dashboard", "serve the interactive dashboard with Voilà", _cmd_dashboard)
    p.add_argument("--corpus", default=None, help="recorded episodes to open (default: bundled corpus)")
    p.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default 8866)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    return parser


# -- entry point ---------------------------------------------------------------------------
def _one_line(exc: BaseException) -> str:
    """An exception as one readable line."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # pydantic appends a "For further information visit https://errors.pydantic.dev/..." line per error.
    lines = [line for line in lines if not line.startswith("For further information")]
    return "; ".join(lines)


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
        sys.stderr.write(f"{PROG}: error: {_one_line(exc)}\n")
        return EXIT_USER_ERROR


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
