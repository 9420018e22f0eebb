"""Running a sweep: one replay per policy point, in-process or on a Dask cluster, as one frame.

Lifecycle: open the corpus (:func:`~reviewlab.engines.corpus.open_corpus`) and compile it
once; in-process, evaluate the points on a few threads (``threads=``); with ``client=``,
scatter the compiled corpus to every worker once and send the points in chunks (Parquet
partitions are read where they live: :mod:`reviewlab.analysis.partitioned`). Points that hedge
or have a breaker are replayed on the episodes. The frame is the same either way: one row per
point, its parameters then every summary metric (and, with ``prices``, its cost), in grid
order. :func:`tool_curves` varies one tool's timeout at a time.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd

from reviewlab.analysis.cost import COST_KEYS, PricedCorpus
from reviewlab.analysis.known_tools import check_tools, grid_tools
from reviewlab.analysis.sweep._grid import Grid, PolicyPoint, make_grid, replays_episodes
from reviewlab.core import metrics
from reviewlab.core.policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.core.prices import PriceTable
from reviewlab.core.vocab import SWEEP_ENGINES, CensoringMode
from reviewlab.engines.corpus import Corpus, CorpusSource, open_corpus
from reviewlab.engines.vectorized import CompiledCorpus
from reviewlab.recording.locations import is_url
from reviewlab.recording.schema import Episode

__all__ = ["MAX_THREADS", "default_threads", "sweep", "tool_curves"]

_PROGRESS_MIN_POINTS = 50  # below this a bar is noise


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
    on_tools: Callable[[list[str]], None] | None = None,
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
    same whatever the number, in grid order. ``on_tools(tools)`` sees the corpus's tools before
    any point runs (on a cluster, as the workers report them: the client never reads them).
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
    if engine not in SWEEP_ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(SWEEP_ENGINES)}, got {engine!r}")
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

    def on_cluster(partitions: Any) -> pd.DataFrame:
        rows = _sweep_partitions(
            partitions,
            points,
            client,
            censored,
            seed,
            chunk_size,
            progress,
            allow_unknown_tools,
            on_tools,
        )
        return _frame(points, rows)

    if is_url(corpus):  # Parquet behind an fsspec URL: swept where it lives, on a cluster
        episodic = any(replays_episodes(point.policy) for point in points)
        if client is None or engine != "vectorized" or tables is not None or episodic:
            raise ValueError(
                f"{corpus}: a corpus behind a URL is swept on a Dask cluster (client=...) by "
                "the vectorized engine, without prices, hedges or breakers; copy it to a local "
                "path otherwise"
            )
        return on_cluster(corpus)
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
        return on_cluster(source)
    if on_tools is not None:
        on_tools(source.tools)
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
    on_tools: Callable[[list[str]], None] | None,
) -> list[dict[str, Any]]:
    from reviewlab.analysis.partitioned import sweep_partitions

    def known(tools: list[str]) -> None:
        if on_tools is not None:
            on_tools(tools)
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
