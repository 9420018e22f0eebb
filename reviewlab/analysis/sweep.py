"""Policy sweeps: one replay per policy point, in-process or on a Dask cluster, as one tidy frame.

A :class:`Grid` is an ordered tuple of :class:`PolicyPoint` objects (a policy,
a narrowing and the parameters that name the point). :func:`make_grid` builds
the usual product: base policies × scales × per-tool timeouts × narrowings.
:func:`sweep` replays the corpus under every point and returns one row per
point: the point's parameters (``policy_name``, ``scale``, ``timeout.<tool>``,
``narrowing.mode``, ``narrowing.reserve_sec``, ``narrowing.fraction``) followed
by every :data:`reviewlab.core.metrics.SUMMARY_KEYS` metric, in grid order.

Hedges and breakers (issue 14) are grid axes too: ``hedges={"read_file": [0.5, 1,
2]}`` hedges the tool after each delay (``hedge_share`` caps the share of its
calls hedged; parameter columns ``hedge.<tool>.after_sec`` and
``hedge.max_share``), ``breakers=[None, BreakerRule(3), ...]`` tries each breaker
(``breaker.consecutive``, ``breaker.window``, ``breaker.cooldown``,
``breaker.scope``; ``None`` is no breaker). A point that hedges or has a breaker is
replayed through :func:`reviewlab.engines.replay.replay` on the episodes (the
rewrite fixed point and the hedge plan need them), not on the compiled corpus;
such points need Episode objects or a path (the corpus handle loads them once).

With ``prices`` (a :class:`~reviewlab.core.prices.PriceTable`) every row also
carries the cost of its replay, :data:`~reviewlab.analysis.cost.COST_KEYS`
(``cost_per_episode`` is the objective ``cost``; see
:mod:`reviewlab.analysis.cost`): the corpus's token prices are worked out once
(:class:`~reviewlab.analysis.cost.PricedCorpus`) and each point's replay is
priced from its frames. A corpus path is then read as episodes (the token
counts live there), and the cost is the same whichever engine replays.

Lifecycle of a sweep: open the corpus (:func:`~reviewlab.engines.corpus.open_corpus`) and
compile it once (from a file's columns, without an ``Episode`` per row); in-process, evaluate the
points on a few threads (``threads=``); with ``client=``, scatter the compiled
corpus to every worker ONCE and send the points in chunks, each task replaying
its chunk against the worker's copy. The frame is the same either way.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.analysis.cost import COST_KEYS, PricedCorpus
from reviewlab.analysis.known_tools import check_tools, grid_tools
from reviewlab.core import metrics
from reviewlab.core.breaker import BreakerRule
from reviewlab.core.policy import Narrowing, Policy, SupportsTimeoutFor, TimeoutPolicy
from reviewlab.core.prices import PriceTable
from reviewlab.core.vocab import CensoringMode
from reviewlab.engines.corpus import Corpus, CorpusSource, open_corpus
from reviewlab.engines.vectorized import CompiledCorpus
from reviewlab.recording.locations import is_url
from reviewlab.recording.schema import Episode

__all__ = [
    "MAX_THREADS",
    "OBJECTIVE_ALIASES",
    "PARETO_OBJECTIVES",
    "Grid",
    "PolicyPoint",
    "default_threads",
    "make_grid",
    "objective_column",
    "pareto",
    "replays_episodes",
    "sweep",
    "tool_curves",
]

ENGINES = ("vectorized", "twin")
_PROGRESS_MIN_POINTS = 50  # below this a bar is noise
PARETO_OBJECTIVES = ("timeout_coverage_loss_rate", "wall_p95_sec", "max_silence_sec")
"""What :func:`pareto` trades by default: the coverage the timeouts cost, p95 wall time, and the
longest silence (so a policy that never bounds a wedged call is not on the front)."""
OBJECTIVE_ALIASES = {
    "wall_p50": "wall_p50_sec",
    "wall_p95": "wall_p95_sec",
    "wall_p99": "wall_p99_sec",
    "wall_max": "wall_max_sec",
    "p50_wall": "wall_p50_sec",
    "p95_wall": "wall_p95_sec",
    "p99_wall": "wall_p99_sec",
    "max_wall": "wall_max_sec",
    "max_silence": "max_silence_sec",
    "zombie": "zombie_sec",
    "timeout_coverage_loss": "timeout_coverage_loss_rate",
    "coverage_loss": "coverage_loss_rate",
    "abandoned_rate": "abandoned_call_rate",
    "cost": "cost_per_episode",
}
"""Short names of summary columns, as the CLI and
:func:`reviewlab.analysis.tune.recommend` take them."""


def objective_column(name: str) -> str:
    """The summary column an objective name stands for (an alias or the column itself)."""
    if name in OBJECTIVE_ALIASES:
        return OBJECTIVE_ALIASES[name]
    if name in metrics.SUMMARY_KEYS or name in PARETO_OBJECTIVES or name in COST_KEYS:
        return name
    raise ValueError(
        f"objective: expected one of {', '.join(OBJECTIVE_ALIASES)} or a summary column "
        f"({', '.join(metrics.SUMMARY_KEYS + COST_KEYS)}), got {name!r}"
    )


@dataclass(frozen=True)
class PolicyPoint:
    """One point of a grid: what to replay and the parameter columns that name it."""

    policy: Policy
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Grid:
    """An ordered, immutable list of policy points; ``grid_a + grid_b`` concatenates."""

    points: tuple[PolicyPoint, ...]

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[PolicyPoint]:
        return iter(self.points)

    def __add__(self, other: Grid) -> Grid:
        return Grid(self.points + other.points)

    def frame(self) -> pd.DataFrame:
        """The parameter columns of every point (the left part of a sweep frame)."""
        return pd.DataFrame([dict(p.params) for p in self.points])


def _narrowing_params(narrowing: Narrowing) -> dict[str, Any]:
    return {
        "narrowing.mode": narrowing.mode,
        "narrowing.reserve_sec": narrowing.reserve_sec,
        "narrowing.fraction": narrowing.fraction,
    }


def make_grid(
    base: Policy | TimeoutPolicy | Sequence[Policy | TimeoutPolicy] | None = None,
    *,
    tools: Mapping[str, Sequence[float]] | None = None,
    scales: Sequence[float] | None = None,
    narrowings: Sequence[Narrowing] | None = None,
    hedges: Mapping[str, Sequence[float]] | None = None,
    hedge_share: float = 0.05,
    breakers: Sequence[BreakerRule | None] | None = None,
) -> Grid:
    """The product base policies × ``scales`` × per-tool timeouts × hedges × breakers ×
    ``narrowings``.

    ``base``: one policy or several (default :meth:`Policy.ouroboros`), each a
    :class:`Policy` whose ``timeouts`` is a :class:`TimeoutPolicy` (or a bare TimeoutPolicy).
    ``scales``: multipliers of each base's timeouts (:meth:`TimeoutPolicy.scaled`).
    ``tools``: per tool, the timeouts to try, set EXACTLY (not raised by the
    base's floor: :meth:`TimeoutPolicy.with_tool_timeouts`), after scaling.
    ``narrowings``: default: each base's own narrowing. ``hedges``: per tool, the
    delays after which to hedge it (the tool is marked idempotent), each point
    hedging at most ``hedge_share`` of its calls. ``breakers``: the breakers to
    try (``None``: none). Every point carries the columns ``policy_name, scale,
    timeout.<tool>…, narrowing.mode, narrowing.reserve_sec, narrowing.fraction``,
    plus ``hedge.<tool>.after_sec``, ``hedge.max_share`` and ``breaker.*`` when
    those axes are given.
    """
    given: list[Policy | TimeoutPolicy | None] = (
        [base] if isinstance(base, Policy | TimeoutPolicy) else [*base] if base else [None]
    )
    bases = []
    for index, policy in enumerate(given):
        spine = Policy.of(policy)
        if not isinstance(spine.timeouts, TimeoutPolicy):
            raise TypeError(
                f"base[{index}]: expected a Policy whose timeouts is a TimeoutPolicy, "
                f"got {type(spine.timeouts).__name__}"
            )
        bases.append(spine)
    tool_axes = {tool: [float(v) for v in values] for tool, values in (tools or {}).items()}
    for tool, values in tool_axes.items():
        if not values:
            raise ValueError(f"tools.{tool}: expected at least one timeout")
    scale_axis: list[float | None] = [float(s) for s in scales] if scales else [None]
    narrowing_axis: list[Narrowing | None] = list(narrowings) if narrowings else [None]
    for index, narrowing in enumerate(narrowing_axis):
        if narrowing is not None and not isinstance(narrowing, Narrowing):
            raise TypeError(
                f"narrowings[{index}]: expected a Narrowing, got {type(narrowing).__name__}"
            )
    hedge_axes = {tool: [float(v) for v in values] for tool, values in (hedges or {}).items()}
    for tool, values in hedge_axes.items():
        if not values:
            raise ValueError(f"hedges.{tool}: expected at least one delay")
    breaker_axis: list[BreakerRule | None] = list(breakers) if breakers else []
    for index, rule in enumerate(breaker_axis):
        if rule is not None and not isinstance(rule, BreakerRule):
            raise TypeError(
                f"breakers[{index}]: expected a BreakerRule or None, got {type(rule).__name__}"
            )
    names = list(tool_axes)
    hedged_tools = list(hedge_axes)
    points = []
    for spine, scale, combo, delays, rule, narrowing in itertools.product(
        bases,
        scale_axis,
        itertools.product(*tool_axes.values()),
        itertools.product(*hedge_axes.values()),
        breaker_axis or [_NO_AXIS],
        narrowing_axis,
    ):
        timeouts: TimeoutPolicy = spine.timeouts
        if scale is not None:
            timeouts = timeouts.scaled(scale)
        chosen = dict(zip(names, combo, strict=True))
        if chosen:
            suffix = ",".join(f"{tool}={sec:g}" for tool, sec in chosen.items())
            timeouts = timeouts.with_tool_timeouts(name=f"{timeouts.name}[{suffix}]", **chosen)
        point = spine.replace(timeouts=timeouts, name="")
        if narrowing is not None:
            point = point.replace(narrowing=narrowing)
        params: dict[str, Any] = {
            "policy_name": timeouts is spine.timeouts and spine.name or timeouts.name,
            "scale": 1.0 if scale is None else scale,
        }
        params.update({f"timeout.{tool}": sec for tool, sec in chosen.items()})
        for tool, after in zip(hedged_tools, delays, strict=True):
            if tool not in point.idempotent_tools:
                point = point.with_idempotent(tool)
            point = point.with_hedge(tool, after_sec=after, max_share=hedge_share)
            params[f"hedge.{tool}.after_sec"] = after
        if hedged_tools:
            params["hedge.max_share"] = hedge_share
        if rule is not _NO_AXIS:
            point = point.replace(breaker=rule)
            params.update(_breaker_params(rule))
        params.update(_narrowing_params(point.narrowing))
        points.append(PolicyPoint(point.replace(name=_point_name(point, spine)), params))
    return Grid(tuple(points))


def _point_name(point: Policy, base: Policy) -> str:
    """A point's label: the base's name when it named itself, else the derived label."""
    return base.name if base.name and point == base.replace(name="") else ""


_NO_AXIS: Any = object()  # no breaker axis: the base policies keep their own breakers


def _breaker_params(rule: BreakerRule | None) -> dict[str, Any]:
    if rule is None:
        return {
            "breaker.consecutive": 0,
            "breaker.window": math.nan,
            "breaker.cooldown": "",
            "breaker.scope": "",
        }
    return {
        "breaker.consecutive": rule.consecutive,
        "breaker.window": math.nan if rule.window is None else rule.window,
        "breaker.cooldown": (
            f"{rule.cooldown_rounds} rounds"
            if rule.cooldown_rounds is not None
            else f"{rule.cooldown_sec:g} s"
        ),
        "breaker.scope": rule.scope,
    }


def replays_episodes(policy: Policy) -> bool:
    """Whether a policy must be replayed on episodes (it hedges or has a breaker), not on a
    compiled corpus."""
    return policy.breaker is not None or bool(policy.hedges)


def points_grid(policies: Iterable[Policy | SupportsTimeoutFor | tuple[Any, Narrowing]]) -> Grid:
    """A grid of explicit policies (a ``(rule, narrowing)`` pair is read by :meth:`Policy.of`),
    each named by its label."""
    points = []
    for item in policies:
        spine = Policy.of(*item) if isinstance(item, tuple) else Policy.of(item)
        params = {"policy_name": spine.label, "scale": 1.0, **_narrowing_params(spine.narrowing)}
        points.append(PolicyPoint(spine, params))
    return Grid(tuple(points))


# -- running ------------------------------------------------------------------


Priced = Mapping[str, PricedCorpus]
"""The corpus priced at each price table of a sweep, by the table's name."""


def _costs(priced: Priced, result: Any) -> dict[str, Any]:
    """The ``_costs`` entry of a row: each table's cost summary of ``result``, by name."""
    return {"_costs": {name: corpus.cost(result).summary for name, corpus in priced.items()}}


def _evaluate_chunk(
    corpus: CompiledCorpus, points: Sequence[PolicyPoint], priced: Priced | None = None
) -> list[dict[str, Any]]:
    """Summaries of ``points`` on one compiled corpus (the unit of work of a Dask task)."""
    if priced is None:
        return [corpus.summary(point.policy) for point in points]
    out = []
    for point in points:
        result = corpus.result(point.policy)
        out.append({**result.summary, **_costs(priced, result)})
    return out


def _replay_chunk(
    episodes: Sequence[Episode],
    points: Sequence[PolicyPoint],
    engine: str,
    censored: CensoringMode,
    seed: int,
    priced: Priced | None = None,
) -> list[dict[str, Any]]:
    """Summaries of ``points`` replayed on the episodes by :func:`~reviewlab.engines.replay.replay`
    (points that hedge or have a breaker)."""
    from reviewlab.engines.replay import replay

    out = []
    for point in points:
        result = replay(
            episodes,
            point.policy,
            engine=engine,  # type: ignore[arg-type]
            censored=censored,
            seed=seed,
        )
        row = {key: result.summary[key] for key in metrics.SUMMARY_KEYS}
        if priced is not None:
            row.update(_costs(priced, result))
        out.append(row)
    return out


def _twin_chunk(
    episodes: Sequence[Episode],
    points: Sequence[PolicyPoint],
    censored: CensoringMode,
    seed: int,
    priced: Priced | None = None,
) -> list[dict[str, Any]]:
    from reviewlab.engines.twin import simulate

    out = []
    for point in points:
        result = simulate(episodes, point.policy, censored=censored, seed=seed)
        row = {key: result.summary[key] for key in metrics.SUMMARY_KEYS}
        if priced is not None:
            row.update(_costs(priced, result))
        out.append(row)
    return out


MAX_THREADS = 8
"""The most threads an in-process sweep uses by default (each point holds its own temporaries:
tens of MB a point at a million episodes)."""


def default_threads() -> int:
    """Threads an in-process vectorized sweep uses by default: the cores this process may run
    on, at most :data:`MAX_THREADS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def _progress_bar(total: int, progress: bool | None) -> Any:
    show = total >= _PROGRESS_MIN_POINTS if progress is None else bool(progress)
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="sweep", unit="point")


def _chunks(points: Sequence[PolicyPoint], size: int) -> list[tuple[PolicyPoint, ...]]:
    return [tuple(points[i : i + size]) for i in range(0, len(points), size)]


def _partitioned(source: Corpus) -> bool:
    """Whether ``source`` is Parquet on disk not yet compiled here (a cluster reads it there)."""
    path = source.path
    return path is not None and not source.loaded and (path.suffix == ".parquet" or path.is_dir())


def sweep(
    corpus: CorpusSource,
    grid: Grid | Iterable[PolicyPoint],
    *,
    engine: str = "vectorized",
    client: Any = None,
    progress: bool | None = None,
    censored: CensoringMode = "wedge",
    seed: int = 0,
    chunk_size: int | None = None,
    allow_unknown_tools: bool = False,
    prices: PriceTable | Mapping[str, PriceTable] | None = None,
    threads: int | None = None,
) -> pd.DataFrame:
    """Replay ``corpus`` under every point of ``grid``; one row per
    point (see the module docstring).

    ``engine``: ``"vectorized"`` (default) or ``"twin"`` (the reference, slow).
    ``client``: a ``dask.distributed.Client`` or a scheduler address
    (``"tcp://host:port"``) to run the points on a cluster. ``progress``: a tqdm
    bar (notebook-aware); by default only for grids of 50 points or more.
    ``censored``/``seed``: as in :func:`reviewlab.engines.replay.replay`.
    ``corpus``: anything :func:`~reviewlab.engines.corpus.open_corpus` takes (a path — JSONL,
    ``.parquet`` or a partition directory —, episodes, a compiled corpus or an open
    :class:`~reviewlab.engines.corpus.Corpus`); a path is compiled from its columns once, with
    no ``Episode`` object unless a point needs one, and with ``client`` each worker reads and
    replays its own Parquet partitions (:mod:`reviewlab.analysis.partitioned`).
    A grid that sets the timeout of a tool the corpus never calls is refused
    (:func:`check_tools`) unless ``allow_unknown_tools``. ``prices`` appends the
    cost columns :data:`~reviewlab.analysis.cost.COST_KEYS` (Episode objects or a
    path; not a compiled corpus, which has no token counts). Several tables by
    name (``{"list": t1, "cheap slots": t2}``) sweep the prices too: one row per
    point and table, in that order, named in a ``prices`` column; each point is
    replayed once. ``threads``: in-process, the vectorized engine replays this many points at
    once on threads (its array work runs without the GIL, so a sweep uses the machine's
    cores); default :func:`default_threads`, ``1`` one point after another. The frame is the
    same whatever the number, in grid order.
    """
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise ValueError(
            f"threads: expected a whole number of threads, at least 1, got {threads!r}"
        )
    if threads is not None and threads > 1 and client is not None:
        raise ValueError("threads: points on a Dask cluster run on its workers, not threads")
    points = list(grid)
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    for index, point in enumerate(points):
        if not isinstance(point, PolicyPoint):
            raise TypeError(f"grid[{index}]: expected a PolicyPoint, got {type(point).__name__}")
    priced: dict[str, PricedCorpus] | None = None
    tables: dict[str, PriceTable] | None = None
    if prices is not None:
        tables = {"": prices} if isinstance(prices, PriceTable) else dict(prices)
        if not tables:
            raise ValueError("prices: expected a price table or at least one named table")
        for name, table in tables.items():
            if not isinstance(table, PriceTable):
                raise TypeError(
                    f"prices[{name!r}]: expected a PriceTable, got {type(table).__name__}"
                )
    if is_url(corpus):  # Parquet behind an fsspec URL: swept where it lives, on a cluster
        episodic = any(replays_episodes(point.policy) for point in points)
        if client is None or engine != "vectorized" or tables is not None or episodic:
            raise ValueError(
                f"{corpus}: a corpus behind a URL is swept on a Dask cluster (client=...) by "
                "the vectorized engine, without prices, hedges or breakers; copy it to a local "
                "path otherwise"
            )
        rows = _sweep_partitions(
            corpus, points, client, censored, seed, chunk_size, progress, allow_unknown_tools
        )
        return _frame(points, rows)
    source = open_corpus(corpus)
    engine_of_points = engine
    if any(replays_episodes(point.policy) for point in points):
        # Hedges and breakers are replayed on episodes (reviewlab.engines.replay).
        source.episodes(reason="grid: a point hedges or has a breaker (replayed by replay())")
        engine = "episodes"
    if tables is not None:  # the token counts live in the episodes
        episodes = source.episodes(reason="prices: the token counts live in the episodes")
        priced = {name: PricedCorpus.of(episodes, table) for name, table in tables.items()}
    if client is not None and engine == "vectorized" and _partitioned(source):
        # Parquet partitions on a cluster: each worker reads and replays its own, and the
        # client merges fixed-size partials (reviewlab.analysis.partitioned).
        rows = _sweep_partitions(
            source, points, client, censored, seed, chunk_size, progress, allow_unknown_tools
        )
        return _frame(points, rows)
    if not allow_unknown_tools:
        check_tools(grid_tools(points), source.tools, what="grid")
    if threads is not None and threads > 1 and engine != "vectorized":
        # Only the vectorized engine's points run on threads; say so rather than ignore it.
        raise ValueError(
            "threads: engine='twin' and points that hedge or have a breaker run one after "
            "another; leave threads unset"
        )
    if engine == "episodes":
        shared: Any = source.episodes()
        run: Callable[..., list[dict[str, Any]]] = _replay_chunk
        extra: tuple[Any, ...] = (engine_of_points, censored, seed, priced)
    elif engine == "twin":
        shared = source.episodes(reason="engine='twin' replays Episode objects")
        run = _twin_chunk
        extra = (censored, seed, priced)
    else:  # compiled once, from the columns of a file or the objects of a list
        shared = source.compiled(censored, seed)
        run, extra = _evaluate_chunk, (priced,)
    bar = _progress_bar(len(points), progress)
    try:
        if client is None:
            rows = []
            workers = (threads or default_threads()) if engine == "vectorized" else 1
            chunks = _chunks(points, chunk_size or (1 if workers > 1 else 16))
            workers = min(workers, len(chunks))
            if workers > 1:
                with ThreadPoolExecutor(workers, thread_name_prefix="reviewlab-sweep") as pool:
                    done = pool.map(lambda chunk: run(shared, chunk, *extra), chunks)
                    for chunk, got in zip(chunks, done, strict=True):
                        rows.extend(got)
                        if bar is not None:
                            bar.update(len(chunk))
            else:  # one after another, on the caller's thread
                for chunk in chunks:
                    rows.extend(run(shared, chunk, *extra))
                    if bar is not None:
                        bar.update(len(chunk))
        else:
            rows = _run_on_cluster(client, shared, points, run, extra, chunk_size, bar)
    finally:
        if bar is not None:
            bar.close()
    return _frame(points, rows, priced=None if tables is None else list(tables))


def _sweep_partitions(
    source: Any,
    points: list[PolicyPoint],
    client: Any,
    censored: CensoringMode,
    seed: int,
    chunk_size: int | None,
    progress: bool | None,
    allow_unknown_tools: bool,
) -> list[dict[str, Any]]:
    from reviewlab.analysis.partitioned import sweep_partitions

    def known(tools: list[str]) -> None:
        if not allow_unknown_tools:
            check_tools(grid_tools(points), tools, what="grid")

    bar = _progress_bar(len(points), progress)
    try:
        return sweep_partitions(
            source,
            points,
            client=client,
            censored=censored,
            seed=seed,
            chunk_size=chunk_size,
            check_tools=known,
            done=None if bar is None else bar.update,
        )
    finally:
        if bar is not None:
            bar.close()


def _run_on_cluster(
    client: Any,
    corpus: Any,
    points: list[PolicyPoint],
    run: Callable[..., Any],
    extra: tuple[Any, ...],
    chunk_size: int | None,
    bar: Any,
) -> list[dict[str, Any]]:
    """Scatter the corpus once, map chunks of points over it, gather in grid order."""
    from distributed import as_completed

    from reviewlab.engines.cluster import connect

    client, made = connect(client)  # an address that cannot be reached is SchedulerLost
    owned = client if made else None
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        size = chunk_size or max(1, math.ceil(len(points) / (4 * workers)))
        chunks = _chunks(points, size)
        shared = client.scatter(corpus, broadcast=True)
        futures = [client.submit(run, shared, chunk, *extra, pure=False) for chunk in chunks]
        index = {future.key: i for i, future in enumerate(futures)}
        results: list[list[dict[str, Any]] | None] = [None] * len(chunks)
        for future in as_completed(futures):
            results[index[future.key]] = future.result()
            if bar is not None:
                bar.update(len(chunks[index[future.key]]))
        return [row for part in results for row in (part or [])]
    finally:
        if owned is not None:
            owned.close()


def _frame(
    points: Sequence[PolicyPoint],
    rows: Sequence[Mapping[str, Any]],
    *,
    priced: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per point (per point and price table when ``priced`` names several)."""
    params = [dict(p.params) for p in points]
    values = [{key: row[key] for key in metrics.SUMMARY_KEYS} for row in rows]
    keys: tuple[str, ...] = metrics.SUMMARY_KEYS
    if priced is not None:
        keys = keys + COST_KEYS
        named = len(priced) > 1 or priced[0] != ""
        expanded_params, expanded_values = [], []
        for param, value, row in zip(params, values, rows, strict=True):
            for name in priced:
                expanded_params.append({**param, **({"prices": name} if named else {})})
                expanded_values.append({**value, **row["_costs"][name]})
        params, values = expanded_params, expanded_values
    return pd.concat([pd.DataFrame(params), pd.DataFrame(values, columns=list(keys))], axis=1)


# -- reading a sweep -----------------------------------------------------------


def pareto(
    frame: pd.DataFrame, objectives: Sequence[str] | str | None = None, *more: str
) -> pd.Series:
    """Which points no other point dominates, every objective to be minimised (a boolean Series).

    ``objectives``: the columns to trade (default :data:`PARETO_OBJECTIVES`, the
    columns of it the frame has; ``coverage_loss_rate`` stands in for the
    timeout share in a frame without it); names may be
    :data:`OBJECTIVE_ALIASES`. The two-column form ``pareto(frame, x, y)`` is
    accepted too. A point dominates another when it is no worse on every
    objective and better on one; ``inf`` is worse than every number and NaN is
    read as ``inf``; identical points are all kept.
    """
    if isinstance(objectives, str):
        columns = [objective_column(c) for c in (objectives, *more)]
    elif objectives is None:
        columns = [c for c in PARETO_OBJECTIVES if c in frame.columns]
        if "timeout_coverage_loss_rate" not in frame.columns and "coverage_loss_rate" in frame:
            columns.insert(0, "coverage_loss_rate")
    else:
        columns = [objective_column(c) for c in (*objectives, *more)]
    if not columns:
        raise ValueError("pareto: no objective columns to trade")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"pareto: the frame has no column(s) {', '.join(missing)}; "
            f"objectives are among {', '.join(metrics.SUMMARY_KEYS)}"
        )
    values = np.nan_to_num(
        frame[columns].to_numpy(dtype=float), nan=math.inf, posinf=math.inf, neginf=-math.inf
    )
    n = len(values)
    front = np.ones(n, dtype=bool)
    for i in range(n):
        if not front[i]:
            continue
        # Points that i dominates: no better anywhere, worse somewhere.
        dominated = np.all(values >= values[i], axis=1) & np.any(values > values[i], axis=1)
        front &= ~dominated
    return pd.Series(front, index=frame.index, name="pareto")


def tool_curves(
    corpus: CorpusSource,
    timeouts: Mapping[str, Sequence[float]],
    *,
    base: Policy | TimeoutPolicy | None = None,
    narrowing: Narrowing | None = None,
    **options: Any,
) -> pd.DataFrame:
    """One-at-a-time curves: each tool's timeout varied alone, the others at ``base``.

    Long frame: ``tool, timeout_sec`` and every summary metric (corpus-wide),
    as :func:`reviewlab.ui.charts.rates_vs_timeout` draws it.
    """
    spine = Policy.of(base, narrowing)
    source = open_corpus(corpus)  # compiled once for every tool's sweep
    parts = []
    for tool, values in timeouts.items():
        frame = sweep(source, make_grid(spine, tools={tool: values}), **options)
        frame = frame.rename(columns={f"timeout.{tool}": "timeout_sec"})
        frame.insert(0, "tool", tool)
        parts.append(frame[["tool", "timeout_sec", *metrics.SUMMARY_KEYS]])
    return (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["tool", "timeout_sec", *metrics.SUMMARY_KEYS])
    )
