"""Running a sweep: one replay per policy point, in-process or on a Dask cluster, as one frame.

Lifecycle: the engine object (:func:`~reviewlab.engines._engine.engine_of`) admits every point
or refuses one by name before any work; in-process, the corpus is opened once
(:func:`~reviewlab.engines._corpus.open_corpus`) and each point is the engine's summary on it
(the vectorized engine's from the compiled columns, on a few threads: ``threads=``; points that
hedge or have a breaker, and the twin, from the episodes); with ``client=`` (the
:class:`~reviewlab.engines._engine.Cluster` engine) the Parquet partitions are read and replayed
where they live (:mod:`reviewlab.analysis._partitioned`, the one cluster adapter). The frame is
the same either way: one row per point, its parameters then every summary metric (and, with
``prices``, its cost), in grid order. :func:`tool_curves` varies one tool's timeout at a
time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reviewlab.analysis._cost import COST_KEYS, PricedCorpus
from reviewlab.analysis._known_tools import check_tools, grid_tools
from reviewlab.analysis.sweep._frame import SweepFrame, sweep_frame
from reviewlab.analysis.sweep._grid import Grid, PolicyPoint, make_grid
from reviewlab.core._errors import ParameterError
from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.core._prices import PriceTable
from reviewlab.core._vocab import DEFAULT_CENSORING, SWEEP_ENGINES, CensoringMode
from reviewlab.engines._corpus import Corpus, CorpusSource, open_corpus
from reviewlab.engines._engine import Cluster, Engine, Vectorized, engine_of, episodes_needed
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._locations import is_url

_PROGRESS_MIN_POINTS = 50  # below this a bar is noise


Priced = Mapping[str, PricedCorpus]
"""The corpus priced at each price table of a sweep, by the table's name."""


def _costs(priced: Priced, result: Any) -> dict[str, Any]:
    """The ``_costs`` entry of a row: each table's cost summary of ``result``, by name."""
    return {"_costs": {name: corpus.cost(result).summary for name, corpus in priced.items()}}


def _summaries(
    source: Corpus,
    points: Sequence[PolicyPoint],
    engine: Engine,
    censored: CensoringMode,
    seed: int,
    priced: Priced | None = None,
) -> list[dict[str, Any]]:
    """Summaries of ``points`` by ``engine`` on one opened corpus, through the dispatch's
    engine objects (the vectorized engine answers from the compiled columns when it can)."""
    out = []
    for point in points:
        if priced is None:
            out.append(
                engine.summary(
                    source, point.policy, censored=censored, reaction="as_recorded", seed=seed
                )
            )
            continue
        result = engine.result(
            source, point.policy, censored=censored, reaction="as_recorded", seed=seed
        )
        assert isinstance(result, ReplayResult)  # an in-process engine: frames to price
        out.append({**result.summary, **_costs(priced, result)})
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
    engine: Engine | str = "vectorized",
    client: Any = None,
    progress: bool | None = None,
    censored: CensoringMode = DEFAULT_CENSORING,
    seed: int = 0,
    chunk_size: int | None = None,
    allow_unknown_tools: bool = False,
    prices: PriceTable | Mapping[str, PriceTable] | None = None,
    threads: int | None = None,
    on_tools: Callable[[list[str]], None] | None = None,
) -> SweepFrame:
    """Replay ``corpus`` under every point of ``grid``; one row per
    point (see the module docstring), in a :class:`~reviewlab.analysis.sweep.SweepFrame` that
    keeps the assumptions (``censored``, ``reaction``, ``engine``, ``seed``).

    ``engine``: ``"vectorized"`` (default), ``"twin"`` (the reference, slow) or an engine
    object (:mod:`reviewlab.engines._engine`). ``client``: a ``dask.distributed.Client`` or a
    scheduler address (``"tcp://host:port"``) to run the points on a cluster's Parquet
    partitions (an in-memory corpus or a JSONL file is refused there: write it as
    partitions). ``progress``: a tqdm bar (notebook-aware); by default only for grids of 50
    points or more.
    ``censored``/``seed``: as in :func:`reviewlab.engines._replay.replay`.
    ``corpus``: anything :func:`~reviewlab.engines._corpus.open_corpus` takes (a path — JSONL,
    ``.parquet`` or a partition directory —, episodes, a compiled corpus or an open
    :class:`~reviewlab.engines._corpus.Corpus`); a path is compiled from its columns once, with
    no ``Episode`` object unless a point needs one.
    A grid that sets the timeout of a tool the corpus never calls is refused
    (:func:`check_tools`) unless ``allow_unknown_tools``. ``prices`` appends the
    cost columns :data:`~reviewlab.analysis._cost.COST_KEYS` (Episode objects or a
    path; not a compiled corpus, which has no token counts). Several tables by
    name (``{"list": t1, "cheap slots": t2}``) sweep the prices too: one row per
    point and table, in that order, named in a ``prices`` column; each point is
    replayed once. ``threads``: in-process, the vectorized engine replays this many points at
    once on threads (its array work runs without the GIL, so a sweep uses the machine's
    cores); default :func:`default_threads`, ``1`` one point after another. The frame is the
    same whatever the number, in grid order. ``on_tools(tools)`` sees the corpus's tools before
    any point runs (on a cluster, as the workers report them: the client never reads them).
    """
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise ParameterError(
            "threads", f"expected a whole number of threads, at least 1, got {threads!r}"
        )
    if threads is not None and threads > 1 and client is not None:
        raise ParameterError("threads", "points on a Dask cluster run on its workers, not threads")
    points = list(grid)
    if isinstance(engine, str) and engine not in SWEEP_ENGINES:
        raise ParameterError(
            "engine", f"expected one of {', '.join(SWEEP_ENGINES)}, got {engine!r}"
        )
    for index, point in enumerate(points):
        if not isinstance(point, PolicyPoint):
            raise TypeError(f"grid[{index}]: expected a PolicyPoint, got {type(point).__name__}")
    tables = _price_tables(prices)
    chosen = engine_of(engine, client=client)
    for point in points:  # every point admitted (or refused by name) before any work
        chosen.admit(point.policy, censored, "as_recorded")
    run = _Run(points, chosen, censored, seed, chunk_size, progress, allow_unknown_tools, on_tools)
    assumed = {"censored": censored, "reaction": "as_recorded", "engine": chosen.name, "seed": seed}
    if isinstance(chosen, Cluster):  # the one cluster adapter: partitions read where they live
        if tables is not None:
            raise ParameterError(
                "prices",
                "the token counts live in Episode objects, which a sweep on a cluster "
                "never gathers; sweep in-process for costs",
            )
        return sweep_frame(run.on_cluster(corpus, chosen.client), assumed)
    if is_url(corpus):
        raise ParameterError(
            str(corpus),
            "a corpus behind a URL is swept on a Dask cluster (client=...); copy it "
            "to a local path otherwise",
        )
    return sweep_frame(run.in_process(open_corpus(corpus), tables, threads), assumed)


def _price_tables(
    prices: PriceTable | Mapping[str, PriceTable] | None,
) -> dict[str, PriceTable] | None:
    """The price tables of a sweep by name (``""``: the one unnamed table), checked."""
    if prices is None:
        return None
    tables = {"": prices} if isinstance(prices, PriceTable) else dict(prices)
    if not tables:
        raise ParameterError("prices", "expected a price table or at least one named table")
    for name, table in tables.items():
        if not isinstance(table, PriceTable):
            raise TypeError(f"prices[{name!r}]: expected a PriceTable, got {type(table).__name__}")
    return tables


@dataclass(frozen=True)
class _Run:
    """One sweep's settings, shared by its in-process and its cluster route."""

    points: list[PolicyPoint]
    engine: Engine
    censored: CensoringMode
    seed: int
    chunk_size: int | None
    progress: bool | None
    allow_unknown_tools: bool
    on_tools: Callable[[list[str]], None] | None

    def known(self, tools: list[str]) -> None:
        """Show ``tools`` to ``on_tools``, and refuse a grid tool the corpus never calls."""
        if self.on_tools is not None:
            self.on_tools(tools)
        if not self.allow_unknown_tools:
            check_tools(grid_tools(self.points), tools, what="grid")

    def on_cluster(self, corpus: Any, client: Any) -> pd.DataFrame:
        """The points on a cluster's Parquet partitions (:mod:`reviewlab.analysis._partitioned`)."""
        from reviewlab.analysis._partitioned import sweep_partitions

        source: Any = corpus
        if not is_url(corpus):
            source = open_corpus(corpus)
            if not _partitioned(source):
                raise ParameterError(
                    "client",
                    "a sweep on a cluster reads Parquet partitions where they live; "
                    f"{source.name} is not (write it with write_columnar or reviewlab convert "
                    "first, or sweep in-process)",
                )
        bar = _progress_bar(len(self.points), self.progress)
        try:
            rows = sweep_partitions(
                source,
                self.points,
                client=client,
                censored=self.censored,
                seed=self.seed,
                chunk_size=self.chunk_size,
                check_tools=self.known,
                done=None if bar is None else bar.update,
            )
        finally:
            if bar is not None:
                bar.close()
        return _frame(self.points, rows)

    def in_process(
        self, source: Corpus, tables: dict[str, PriceTable] | None, threads: int | None
    ) -> pd.DataFrame:
        """The points on this machine: the vectorized engine's column points on threads, the
        others one after another on the caller's thread."""
        engine = self.engine
        columns_only = isinstance(engine, Vectorized) and all(
            episodes_needed(point.policy, engine.name, "as_recorded") is None
            for point in self.points
        )
        if not columns_only:  # hedges, breakers and the twin replay Episode objects
            source.episodes(
                reason="grid: a point hedges or has a breaker (replayed on Episode objects)"
                if isinstance(engine, Vectorized)
                else f"engine={engine.name!r} replays Episode objects"
            )
        priced: dict[str, PricedCorpus] | None = None
        if tables is not None:  # the token counts live in the episodes
            episodes = source.episodes(reason="prices: the token counts live in the episodes")
            priced = {name: PricedCorpus.of(episodes, table) for name, table in tables.items()}
        self.known(source.tools)
        if threads is not None and threads > 1 and not columns_only:
            # Only the vectorized engine's column points run on threads; say so, not ignore it.
            raise ParameterError(
                "threads",
                "engine='twin' and points that hedge or have a breaker run one after "
                "another; leave threads unset",
            )

        def run(chunk: Sequence[PolicyPoint]) -> list[dict[str, Any]]:
            return _summaries(source, chunk, engine, self.censored, self.seed, priced)

        workers = (threads or default_threads()) if columns_only else 1
        chunks = _chunks(self.points, self.chunk_size or (1 if workers > 1 else 16))
        rows = _run_chunks(run, chunks, min(workers, len(chunks)), self.progress)
        return _frame(self.points, rows, priced=None if tables is None else list(tables))


def _run_chunks(
    run: Callable[[Sequence[PolicyPoint]], list[dict[str, Any]]],
    chunks: Sequence[Sequence[PolicyPoint]],
    workers: int,
    progress: bool | None,
) -> list[dict[str, Any]]:
    """Every chunk's rows in grid order: on ``workers`` threads, or on the caller's thread."""
    bar = _progress_bar(sum(len(chunk) for chunk in chunks), progress)
    rows: list[dict[str, Any]] = []
    try:
        if workers > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="reviewlab-sweep") as pool:
                for chunk, got in zip(chunks, pool.map(run, chunks), strict=True):
                    rows.extend(got)
                    if bar is not None:
                        bar.update(len(chunk))
        else:  # one after another, on the caller's thread
            for chunk in chunks:
                rows.extend(run(chunk))
                if bar is not None:
                    bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    return rows


def _frame(
    points: Sequence[PolicyPoint],
    rows: Sequence[Mapping[str, Any]],
    *,
    priced: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per point (per point and price table when ``priced`` names several)."""
    params = [dict(p.params) for p in points]
    values = [{key: row[key] for key in SUMMARY_KEYS} for row in rows]
    keys: tuple[str, ...] = SUMMARY_KEYS
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
        parts.append(frame[["tool", "timeout_sec", *SUMMARY_KEYS]])
    return (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["tool", "timeout_sec", *SUMMARY_KEYS])
    )
