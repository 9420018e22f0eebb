"""The handlers of the ``reviewlab`` subcommands, and the argument syntax they share.

Each ``cmd_*`` takes the parsed :class:`argparse.Namespace`, checks the
arguments' syntax, calls one library function, prints or writes what it
returned and answers an exit status; no metric or policy logic lives here.
A problem the user can fix is raised as :class:`UserError` (or the library's
own ``ValueError``/``OSError``); :func:`reviewlab.cli.main` turns it into one
line on stderr. Heavy imports happen inside the handler that needs them, so
``reviewlab --help`` answers at once.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "PROG",
    "REAL_REPLAY_MAX_SEC",
    "UserError",
    "cmd_convert",
    "cmd_dashboard",
    "cmd_demo",
    "cmd_import",
    "cmd_incident",
    "cmd_lab",
    "cmd_record",
    "cmd_replay",
    "cmd_sweep",
    "cmd_synth",
    "cmd_tune",
    "one_line",
]

PROG = "reviewlab"


class UserError(Exception):
    """Something the user can fix (an argument, a file); shown as one line, no traceback."""


def one_line(exc: BaseException) -> str:
    """An exception as one readable line."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # pydantic appends a "For further information visit
    # https://errors.pydantic.dev/..." line per error.
    lines = [line for line in lines if not line.startswith("For further information")]
    return "; ".join(lines)


# -- argument helpers (syntax only; meaning lives in the library) ----------------------------
def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise UserError(f"{text}: no such file")
    if path.is_dir():
        raise UserError(f"{text}: is a directory, expected a file")
    return path


def _load_corpus(path_text: str, on_error: str = "raise") -> list[Any]:
    """The episodes of a corpus file; with ``on_error="skip"`` the skip report goes to stderr."""
    path = _existing_file(path_text)
    from reviewlab.recording.files import load_episodes

    episodes = load_episodes(path, on_error="skip" if on_error == "skip" else "raise")
    for skipped in episodes.skipped:  # nothing is dropped without a line saying so
        sys.stderr.write(
            f"{PROG}: skipped {path_text}:{skipped.line}: {skipped.field}: {skipped.message}\n"
        )
    if episodes.skipped:
        sys.stderr.write(
            f"{PROG}: skipped {len(episodes.skipped)} line(s) of {path_text} (--on-error skip); "
            f"loaded {len(episodes)} episode(s)\n"
        )
    if not episodes:
        raise UserError(f"{path_text}: holds no episodes")
    return list(episodes)


@contextlib.contextmanager
def _computing_on(corpus: str) -> Iterator[None]:
    """Numbers the corpus holds that arithmetic cannot take (1e308 doubled) name the corpus."""
    from reviewlab.core.policy import PolicyError

    try:
        yield
    except ArithmeticError as exc:  # OverflowError, ZeroDivisionError, FloatingPointError
        raise UserError(
            f"{corpus}: values too extreme to compute with ({type(exc).__name__}: {one_line(exc)})"
        ) from None
    except PolicyError as exc:  # a policy derived from the corpus (tune) that cannot be held
        raise UserError(f"{corpus}: {one_line(exc)}") from None


def _seed(text: int | None, flag: str = "--seed") -> int | None:
    if text is not None and text < 0:
        raise UserError(f"{flag}: expected a non-negative integer, got {text}")
    return text


def _rate(value: float | None, flag: str) -> float | None:
    """A rate option: a finite number in [0, 1] (``None`` passes: no limit)."""
    if value is not None and not 0.0 <= value <= 1.0:  # also refuses nan
        raise UserError(f"{flag}: expected a rate between 0 and 1, got {value}")
    return value


def _port(value: int | None) -> int | None:
    if value is not None and not 1 <= value <= 65535:
        raise UserError(f"--port: expected a TCP port 1-65535, got {value}")
    return value


def _positive_seconds(value: float, flag: str) -> float:
    if not 0.0 < value < float("inf"):  # also refuses nan
        raise UserError(f"{flag}: expected a positive finite number, got {value}")
    return value


def _policy_arg(spec: str | None) -> tuple[Any, Any]:
    """``--policy``: a TOML file, or a preset ``ouroboros`` | ``unbounded`` | ``uniform:SEC``."""
    from reviewlab.core.policy import Narrowing, TimeoutPolicy, load_policy_file

    if spec is None or spec == "ouroboros":
        return TimeoutPolicy.ouroboros(), Narrowing()
    if spec in ("unbounded", "pre-fix", "prefix"):
        return TimeoutPolicy.ouroboros(), Narrowing.unbounded()
    if spec.startswith("uniform:"):
        seconds = _number("--policy uniform", spec.partition(":")[2])
        try:
            return TimeoutPolicy.uniform(seconds), Narrowing()
        except ValueError as exc:
            raise UserError(f"--policy {spec}: {one_line(exc)}") from None
    if not spec.endswith(".toml") and not Path(spec).exists():
        raise UserError(
            f"--policy: {spec}: no such policy file (or use ouroboros, unbounded, uniform:SEC)"
        )
    return load_policy_file(spec)


def _number(what: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{what}: expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise UserError(f"{what}: expected a finite number, got {text!r}")
    return value


def _numbers(what: str, text: str) -> list[float]:
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise UserError(f"{what}: expected comma-separated numbers, got {text!r}")
    return [_number(what, item) for item in items]


def _tool_grid(specs: Sequence[str], option: str = "--tool") -> dict[str, list[float]]:
    """``--tool read_file=5,30,120`` (repeatable) → ``{"read_file": [5, 30, 120]}``."""
    grid: dict[str, list[float]] = {}
    for spec in specs:
        tool, sep, values = spec.partition("=")
        if not sep or not tool.strip() or not values.strip():
            raise UserError(f"{option}: expected TOOL=SEC[,SEC...], got {spec!r}")
        grid[tool.strip()] = _numbers(f"{option} {tool.strip()}", values)
    return grid


def _breaker_grid(args: argparse.Namespace) -> list[Any]:
    """``--breaker 0,3,5`` → no breaker, and breakers tripping after 3 and 5 abandonments."""
    from reviewlab.core.breaker import BreakerRule
    from reviewlab.core.policy import PolicyError

    rules: list[Any] = []
    for value in _numbers("--breaker", args.breaker):
        if value != int(value) or value < 0:
            raise UserError(f"--breaker: expected whole numbers >= 0, got {value:g}")
        if value == 0:
            rules.append(None)
            continue
        try:
            rules.append(
                BreakerRule(
                    int(value), cooldown_rounds=args.breaker_cooldown, scope=args.breaker_scope
                )
            )
        except PolicyError as exc:
            raise UserError(f"--breaker: {one_line(exc)}") from None
    return rules


def _narrowing_grid(text: str) -> list[Any]:
    """``--narrowing inherit,reserve:30,fraction:0.5,none,unbounded`` → :class:`Narrowing`
    objects."""
    from reviewlab.core.policy import Narrowing

    modes: list[Any] = []
    for item in (part.strip() for part in text.split(",")):
        mode, _, value = item.partition(":")
        if mode in ("inherit", "none", "unbounded") and not value:
            modes.append(Narrowing(mode=mode))  # type: ignore[arg-type]
        elif mode == "reserve" and value:
            modes.append(
                Narrowing(mode="reserve", reserve_sec=_number("--narrowing reserve", value))
            )
        elif mode == "fraction" and value:
            modes.append(
                Narrowing(mode="fraction", fraction=_number("--narrowing fraction", value))
            )
        else:
            raise UserError(
                f"--narrowing: bad mode {item!r}; expected inherit, none, unbounded, reserve:SEC "
                "or fraction:F"
            )
    return modes


def _output_path(text: str, suffixes: Sequence[str], flag: str = "-o") -> Path:
    path = Path(text)
    if not any(path.name.endswith(suffix) for suffix in suffixes):
        raise UserError(f"{flag} {text}: expected a file ending in {' or '.join(suffixes)}")
    if path.parent != Path("") and not path.parent.is_dir():
        raise UserError(f"{flag} {text}: directory {path.parent} does not exist")
    if path.is_dir():
        raise UserError(f"{flag} {text}: is a directory, expected a file")
    return path


_TABLE_SUFFIXES = (".csv", ".parquet")
REAL_REPLAY_MAX_SEC = 3600.0
"""The longest real-time replay ``--engine real --time-scale`` agrees to start."""
_JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")


def _print(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")


# -- subcommands ---------------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
    from reviewlab.ui.demo import run_demo

    run_demo(out_dir=Path(args.out), quick=args.quick, echo=_print)
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    root = Path(args.root)
    if not root.is_dir():
        raise UserError(f"--root {args.root}: no such directory")
    out = _output_path(args.output, _JSONL_SUFFIXES)
    if args.append and args.force:
        raise UserError("--append and --force: pass one (add to the recording, or replace it)")
    from reviewlab.recording.files import load_episodes, save_episodes

    kept: list[Any] = []
    if out.exists() and (out.is_dir() or out.stat().st_size > 0):
        if args.append:
            kept = list(load_episodes(out))  # checked before the model is called
        elif not args.force:
            raise UserError(
                f"-o {out}: already holds a recording; pass --append to add to it "
                "or --force to replace it"
            )
    policy, narrowing = _policy_arg(args.policy)
    from reviewlab.recording.capture import record_live
    from reviewlab.ui.report import receipts_table, text_table

    options: dict[str, Any] = {"policy": policy, "narrowing": narrowing}
    if args.api_key is not None:
        options["api_key"] = args.api_key
    if args.mcp:
        options["mcp"] = args.mcp
    from reviewlab.live.mcp import MCPServerError

    # The episode is recorded into a scratch file; OUT changes only once the run succeeded.
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as scratch:
        fresh = Path(scratch) / "episode.jsonl"
        try:
            result = record_live(args.base_url, args.model, root, args.task, fresh, **options)
        except MCPServerError as exc:
            raise UserError(f"--mcp {args.mcp!r}: {exc}") from None
        if result.receipts:
            _print(text_table(receipts_table(result.receipts)))
        usage = result.usage
        _print(
            f"end reason: {result.end_reason}; rounds: {usage.get('native_rounds')}; "
            f"tool calls: {usage.get('native_tool_calls')}; "
            f"source gap: {usage.get('native_source_gap') or '-'}"
        )
        if result.end_reason == "model_error":
            reason = one_line(
                ValueError(usage.get("native_model_error") or "the model endpoint failed")
            )
            sys.stderr.write(f"{PROG}: error: {reason} ({out} left unchanged)\n")
            return 1
        written = save_episodes([*kept, *load_episodes(fresh)], out)
    _print(f"recorded 1 episode to {out}" + (f" ({written} in all)" if kept else ""))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    out = _output_path(args.output, _TABLE_SUFFIXES) if args.output else None
    policy, narrowing = _policy_arg(args.policy)
    if args.slots is not None and args.slots < 1:
        raise UserError(f"--slots: expected a positive number of slots, got {args.slots}")
    # An option the chosen engine would ignore is an error, not a silent no-op.
    if args.slots is not None and args.engine != "twin":
        raise UserError(
            f"--slots: a reviewer pool is simulated only by --engine twin, not {args.engine}"
        )
    if args.seed is not None and args.censored != "impute":
        raise UserError(
            f"--seed: used only with --censored impute (--censored {args.censored} draws nothing)"
        )
    if args.time_scale is not None and args.engine != "real":
        raise UserError(f"--time-scale: used only by --engine real, not {args.engine}")
    if args.time_scale is not None:
        _positive_seconds(args.time_scale, "--time-scale")
    _seed(args.seed)
    episodes = _load_corpus(args.corpus, args.on_error)
    if args.slots is not None and args.slots > len(episodes):
        raise UserError(
            f"--slots: {args.slots:,} slots for {len(episodes):,} episode(s); more slots than "
            f"episodes never queue, so at most {len(episodes):,} is meaningful"
        )
    if args.time_scale is not None:
        # A lower bound on the real engine's wall time: its longest episode, slept at the scale.
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
    from reviewlab.engines.replay import replay, replay_bounds
    from reviewlab.ui.report import assumptions_line, summary_table, text_table, write_table

    options: dict[str, Any] = {"engine": args.engine, "reaction": args.reaction}
    if args.seed is not None:
        options["seed"] = args.seed
    if args.slots is not None:
        options["slots"] = args.slots
    if args.time_scale is not None:
        options["time_scale"] = args.time_scale
    label = (
        "unbounded (pre-fix)"
        if narrowing.mode == "unbounded"
        else f"{getattr(policy, 'name', 'policy')} / {narrowing.label}"
    )
    with _computing_on(args.corpus):
        if args.censored == "bounds":
            both = replay_bounds(episodes, policy, narrowing, **options)
            result = both.pessimistic
            summaries = {
                f"{label}, optimistic (observed)": both.optimistic.summary,
                f"{label}, pessimistic (wedge)": both.pessimistic.summary,
            }
            assumptions = both.assumptions
        else:
            result = replay(episodes, policy, narrowing, censored=args.censored, **options)
            summaries = {label: result.summary}
            assumptions = result.assumptions
    _print(assumptions_line(assumptions))
    _print(text_table(summary_table(summaries)))
    _print("")
    _print(text_table(result.per_tool()))
    if out is not None:
        frame = {"calls": result.calls, "episodes": result.episodes, "tools": result.per_tool()}[
            args.table
        ]
        write_table(frame, out)
        _print(f"wrote {len(frame):,} rows ({args.table}) to {out}")
    return 0


def _prices_arg(spec: str | None) -> Any:
    """The price table ``--prices`` names (``sample``: the shipped one), or ``None``."""
    if spec is None:
        return None
    from reviewlab.core.prices import PriceTableError, load_prices

    if spec == "sample":
        from reviewlab.resources import data_path

        return load_prices(data_path("prices.toml"))
    try:
        return load_prices(spec)
    except PriceTableError as exc:
        raise UserError(f"--prices: {one_line(exc)}") from None


def _cost_line(summary: dict[str, Any], currency: str) -> str:
    """Cost per episode, and how many rounds and zombies it could not price."""
    text = f"{summary['cost_per_episode']:.6g} {currency}"
    unpriced = [
        f"{summary['unpriced_rounds']} of {summary['priced_rounds'] + summary['unpriced_rounds']}"
        " rounds unpriced"
    ]
    if summary["unpriced_zombies"]:
        unpriced.append(f"{summary['unpriced_zombies']} never-returning zombies unpriced")
    return f"{text} ({'; '.join(unpriced)})"


def _prices_args(specs: Sequence[str]) -> Any:
    """One ``--prices`` table, several by name (the file's stem), or ``None``."""
    if not specs:
        return None
    if len(specs) == 1:
        return _prices_arg(specs[0])
    tables = {}
    for spec in specs:
        name = "sample" if spec == "sample" else Path(spec).stem
        if name in tables:
            raise UserError(f"--prices: two tables named {name!r}; give the files other names")
        tables[name] = _prices_arg(spec)
    return tables


def cmd_sweep(args: argparse.Namespace) -> int:
    out = _output_path(args.output, _TABLE_SUFFIXES) if args.output else None
    prices = _prices_args(args.prices)
    tools = _tool_grid(args.tool)
    hedges = _tool_grid(args.hedge, option="--hedge")
    breakers = _breaker_grid(args) if args.breaker else None
    if hedges and not 0.0 < args.hedge_share <= 1.0:
        raise UserError(f"--hedge-share: expected a share in (0, 1], got {args.hedge_share}")
    scales = _numbers("--scale", args.scale) if args.scale else None
    narrowings = _narrowing_grid(args.narrowing) if args.narrowing else None
    base, _ = _policy_arg(args.base)
    if args.top < 1:
        raise UserError(f"--top: expected a positive number of rows, got {args.top}")
    _positive_seconds(args.connect_timeout, "--connect-timeout")
    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads: expected at least 1 thread, got {args.threads}")
    if args.threads is not None and args.scheduler:
        raise UserError("--threads: points on a Dask cluster run on its workers, not threads")
    if args.threads is not None and (args.engine != "vectorized" or args.hedge or args.breaker):
        raise UserError(
            "--threads: only the vectorized engine's points run on threads "
            "(not --engine twin, --hedge or --breaker)"
        )
    objectives = [part.strip() for part in args.pareto.split(",")] if args.pareto else None
    episodes = _load_corpus(args.corpus, args.on_error)
    from reviewlab.analysis.known_tools import check_tools, corpus_tools
    from reviewlab.analysis.sweep import make_grid, objective_column, pareto, sweep
    from reviewlab.ui.report import sweep_view, text_table, write_table

    if objectives is not None:
        try:
            objectives = [objective_column(name) for name in objectives]
        except ValueError as exc:
            raise UserError(f"--pareto: {one_line(exc)}") from None
    if tools and not args.allow_unknown_tools:
        try:
            check_tools(
                tools, corpus_tools(episodes), what="--tool", override="--allow-unknown-tools"
            )
        except ValueError as exc:
            raise UserError(one_line(exc)) from None

    try:
        grid = make_grid(
            base=base,
            tools=tools or None,
            scales=scales,
            narrowings=narrowings,
            hedges=hedges or None,
            hedge_share=args.hedge_share,
            breakers=breakers,
        )
    except (
        ValueError
    ) as exc:  # a grid value the policy refuses, e.g. a zero scale or a negative timeout
        raise UserError(
            f"grid: {one_line(exc)} (check --tool, --scale, --narrowing, --hedge and --breaker)"
        ) from None
    client: Any = None
    if args.scheduler:
        client = _dask_client(args.scheduler, args.connect_timeout)
    try:
        with _computing_on(args.corpus):
            frame = sweep(
                episodes,
                grid,
                engine=args.engine,
                client=client,
                allow_unknown_tools=True,
                prices=prices,
                threads=args.threads,
            )
    finally:
        if client is not None:
            client.close()
    frame["pareto"] = pareto(frame, objectives)
    if args.sort is not None and args.sort not in frame.columns:
        raise UserError(
            f"--sort: no column {args.sort!r}; try one of {', '.join(frame.columns[-14:])}"
        )
    view = sweep_view(frame, sort_by=args.sort, top=args.top)
    shown = frame.sort_values(args.sort, kind="stable") if args.sort else frame
    shown = shown.reset_index(drop=True).head(args.top)
    # The hedge and breaker parameters name their points (the view knows timeouts and scales).
    named = [
        c
        for c in frame.columns
        if c.startswith("hedge.")
        and c.endswith(".after_sec")
        or c in ("breaker.consecutive", "breaker.cooldown")
    ]
    for index, column in enumerate(named):
        view.insert(index, column, shown[column].to_numpy())
    if prices is not None:  # the cost columns go before the Pareto flag
        for column in ("prices", "cost_per_episode", "unpriced_rounds"):
            if column in shown.columns:
                view.insert(len(view.columns) - 1, column, shown[column].to_numpy())
    _print(text_table(view))
    if prices is not None:
        currencies = sorted(
            {
                table.currency
                for table in (prices.values() if isinstance(prices, dict) else [prices])
            }
        )
        _print(f"cost_per_episode in {', '.join(currencies)}; per-point cost columns in -o's table")
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


def cmd_tune(args: argparse.Namespace) -> int:
    out = _output_path(args.output, (".toml",)) if args.output else None
    base, narrowing = _policy_arg(args.base)
    budget = args.max_timeout_coverage_loss
    if args.max_coverage_loss is not None:
        if budget is not None:
            raise UserError(
                "--max-coverage-loss: the former name of --max-timeout-coverage-loss; give one"
            )
        budget = args.max_coverage_loss
    used = "--max-coverage-loss" if args.max_coverage_loss is not None else None
    _rate(budget, used or "--max-timeout-coverage-loss")
    _rate(args.max_abandoned_rate, "--max-abandoned-rate")
    if not 0.0 <= args.confidence < 1.0:
        raise UserError(f"--confidence: expected a probability in [0, 1), got {args.confidence}")
    prices = _prices_arg(args.prices)
    from reviewlab.analysis.sweep import objective_column

    try:
        objective = objective_column(args.objective)
    except ValueError:
        objective = args.objective  # recommend names the choices
    if objective.startswith("cost") and prices is None:
        raise UserError(f"--objective {args.objective}: needs --prices TOML (or --prices sample)")
    episodes = _load_corpus(args.corpus, args.on_error)
    from reviewlab.analysis.tune import recommend
    from reviewlab.ui.answers import tune_text

    with _computing_on(args.corpus):
        recommendation = recommend(
            episodes,
            max_timeout_coverage_loss=budget,
            max_abandoned_rate=args.max_abandoned_rate,
            objective=args.objective,
            base=base,
            narrowing=narrowing,
            confidence=args.confidence,
            prices=prices,
        )
    _print(tune_text(recommendation, base_label=f"base ({base.name})"))
    if prices is not None:
        _print(
            f"cost per episode: recommended {_cost_line(recommendation.summary, prices.currency)}"
        )
        _print(
            f"cost per episode: base ({base.name}) "
            f"{_cost_line(recommendation.baseline, prices.currency)}"
        )
    if not recommendation.met:
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
            + (f"; {out} not written" if out is not None else "")
            + "\n"
        )
        return 1
    if out is not None:
        recommendation.save(out)
        _print(f"wrote the recommended policy to {out} (use it with --policy {out})")
    return 0


def _candidate_name(spec: str, policy: Any, narrowing: Any) -> str:
    """How the incident table names a ``--policy`` candidate: the preset, else the policy's name."""
    from reviewlab.analysis.incident import PRE_FIX

    if narrowing.mode == "unbounded":
        return PRE_FIX
    if spec == "ouroboros" or spec.startswith("uniform:"):
        return spec
    return str(getattr(policy, "name", "") or Path(spec).stem)


def cmd_incident(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise UserError(f"--top: expected a positive number of silences, got {args.top}")
    candidates: dict[str, Any] | None = None
    if args.policy:
        candidates = {}
        for spec in args.policy:
            policy, narrowing = _policy_arg(spec)
            name = _candidate_name(spec, policy, narrowing)
            if name in candidates:
                name = spec
            candidates[name] = (policy, narrowing)
    episodes = _load_corpus(args.corpus)
    from reviewlab.analysis.incident import longest_silences
    from reviewlab.ui.answers import incident_text

    with _computing_on(args.corpus):
        silences = longest_silences(episodes, candidates, top=args.top, censored=args.censored)
    _print(incident_text(silences))
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    out = _output_path(args.output, (*_JSONL_SUFFIXES, ".parquet"))
    _seed(args.seed)
    if args.incident:
        from reviewlab.recording.incident import write_incident

        written = write_incident(out, seed=args.seed)
        _print(f"wrote the incident day ({written} episodes, one wedged query_code) to {out}")
        return 0
    if args.n < 1:
        raise UserError(f"-n: expected at least 1 episode, got {args.n:,}")
    from reviewlab.recording.synth import SynthSizeError, check_size, write_synthetic

    try:
        check_size(args.n)  # before anything is drawn or written
    except SynthSizeError as exc:
        raise UserError(f"-n: {exc}") from None
    written = write_synthetic(out, args.n, seed=args.seed)
    _print(f"wrote {written} episode(s) to {out}")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    source = Path(args.source)
    if not source.exists():
        raise UserError(f"{args.source}: no such file or directory")
    out = Path(args.output)
    if out.parent != Path("") and not out.parent.is_dir():
        raise UserError(f"{args.output}: directory {out.parent} does not exist")
    if args.rows_per_partition is not None and args.rows_per_partition < 1:
        raise UserError(f"--rows-per-partition: expected at least 1, got {args.rows_per_partition}")
    from reviewlab.recording.convert import convert_corpus
    from reviewlab.recording.files import SkippedLine

    skipped: list[SkippedLine] = []
    partitioned = not any(out.name.endswith(s) for s in (*_JSONL_SUFFIXES, ".parquet"))
    written = convert_corpus(
        source,
        out,
        on_error="skip" if args.on_error == "skip" else "raise",
        skipped=skipped,
        rows_per_partition=args.rows_per_partition or (250_000 if partitioned else None),
    )
    for bad in skipped:  # nothing is dropped without a line saying so
        sys.stderr.write(f"{PROG}: skipped {args.source}:{bad.line}: {bad.field}: {bad.message}\n")
    _print(
        f"wrote {written} episode(s) to {out}" + (f" ({len(skipped)} skipped)" if skipped else "")
    )
    return 0


def _log_importer(name: str) -> Any:
    """The importer of format ``name`` (``auto``: detected from the file's content).

    An OpenTelemetry import also prints what it made of the spans, with the ones it could
    not place counted by reason.
    """
    from reviewlab.recording.importers import (
        IMPORTERS,
        ImportFormatError,
        detect_format,
        read_otel,
    )

    def run(source: Path) -> list[Any]:
        found = detect_format(source) if name == "auto" else name
        if found == "otel":
            result = read_otel(source)
            _print(f"{source}: otel: {result.report()}")
            return list(result.episodes)
        if name == "auto":
            _print(f"{source}: detected format {found}")
        try:
            return IMPORTERS[found](source)  # type: ignore[index]
        except ImportFormatError as exc:
            hint = _other_format(source, name)
            if hint is None:
                raise
            raise UserError(f"{exc}; the content looks like {hint}: try 'import {hint}'") from None

    return run


def _other_format(source: Path, name: str) -> str | None:
    """The format ``source`` looks like when that is not ``name`` (``None``: no better guess)."""
    from reviewlab.recording.importers import detect_format

    if name == "auto":
        return None
    try:
        found = detect_format(source)
    except ValueError:
        return None
    return found if found != name else None


def cmd_import(args: argparse.Namespace) -> int:
    source = _existing_file(args.file)
    out = _output_path(args.output, _JSONL_SUFFIXES)
    from reviewlab.recording.files import save_episodes

    importer = _log_importer(args.format)
    try:
        episodes = importer(source)
    except (KeyError, TypeError, AttributeError, IndexError, UnicodeDecodeError) as exc:
        # A log of the wrong shape: say which file, not which line of the importer.
        raise UserError(
            f"{args.file}: not a readable {args.format} log ({type(exc).__name__}: {one_line(exc)})"
        ) from None
    if not episodes:
        raise UserError(f"{args.file}: no episodes found in this {args.format} log")
    save_episodes(episodes, out)
    calls = sum(len(episode.calls) for episode in episodes)
    censored = sum(not call.completed for episode in episodes for call in episode.calls)
    _print(
        f"imported {len(episodes)} episode(s), {calls} call(s) ({censored} censored) from {source} "
        f"to {out}"
    )
    rounds = sum(len(episode.rounds) for episode in episodes)
    priced = sum(rnd.usage_known for episode in episodes for rnd in episode.rounds)
    _print(f"token usage: {priced} of {rounds} round(s) report it (the others are unknown)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    episodes = _load_corpus(args.corpus)
    out = _output_path(args.output, (".jsonl", ".json"))
    from reviewlab.recording.otel_export import export_otel

    with _computing_on(args.corpus):  # e.g. 1e308 s is past what OTLP nanoseconds can hold
        spans = export_otel(episodes, out)
    calls = sum(len(episode.calls) for episode in episodes)
    _print(
        f"exported {len(episodes)} episode(s), {calls} call(s) as {spans} OTLP/JSON span(s) "
        f"to {out}"
    )
    return 0


def _launch(argv: Sequence[str], dry_run: bool) -> int:
    if dry_run:
        _print(shlex.join(argv))
        return 0
    try:
        return subprocess.call(list(argv))
    except FileNotFoundError:
        raise UserError(f"cannot start {argv[0]}: not installed") from None


def _working_notebooks() -> Path:
    """``./notebooks``, filled with a copy of the shipped notebooks when it does not exist yet."""
    import shutil

    from reviewlab.resources import notebooks_dir

    target = Path.cwd() / "notebooks"
    if not target.exists():
        shutil.copytree(notebooks_dir(), target, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        print(f"copied the reviewlab notebooks to {target}", file=sys.stderr)
    return target


def cmd_lab(args: argparse.Namespace) -> int:
    notebooks = Path(args.notebooks) if args.notebooks else _working_notebooks()
    if not notebooks.is_dir():
        raise UserError(f"--notebooks {notebooks}: no such directory")
    _port(args.port)
    from reviewlab.ui.dashboard import lab_command

    return _launch(lab_command(notebooks, args.port), args.dry_run)


def cmd_dashboard(args: argparse.Namespace) -> int:
    from reviewlab.ui import dashboard

    corpus = _existing_file(args.corpus) if args.corpus else None
    _port(args.port)
    if corpus is not None:
        _load_corpus(args.corpus)  # a bad corpus is one line here, before any server starts
    if args.dry_run:
        dashboard.dashboard_env(corpus)  # validates the corpus like a real start would
        argv = dashboard.dashboard_command(args.port, corpus, open_browser=not args.no_browser)
        prefix = f"{dashboard.CORPUS_ENV}={shlex.quote(str(corpus.resolve()))} " if corpus else ""
        _print(prefix + shlex.join(argv))
        return 0
    return int(dashboard.main(args.port, corpus, open_browser=not args.no_browser))
