"""Sweeps over a corpus on disk: compiled from its columns in-process, or partition by partition
on a Dask cluster, with results merged exactly.

Lifecycle of ``sweep(path, grid, client=...)`` (:func:`sweep_path`):

1. The client reads only Parquet metadata and two small columns: the corpus's
   earliest ``started_at`` (arrivals of every partition are measured from it,
   so every clock is the whole corpus's clock to the bit) and the ids (unique
   across partitions).
2. One task per partition file: the worker reads and compiles its own
   partition (:func:`~reviewlab.engines.vectorized.columns.compile_columns`)
   and replays every grid point on it, returning a :class:`Part` per point —
   counts, integer line sums, the per-episode wall times, the longest silence,
   the non-zero zombie seconds with their call positions, and the loose-worker
   intervals. Nothing of size "corpus" passes from the client to a worker.
3. The client rebuilds, per point, the arguments of
   :func:`reviewlab.core.metrics.summarize_arrays` (the one definition of the
   summary) from the parts: the wall times of every episode in corpus order
   (so p50/p95/p99 are the exact order statistics, not approximations), the
   zombie seconds as one array in corpus order (so their float sum is the very
   sum of the single-process replay), the loose-worker intervals of all
   partitions (their peak overlap is corpus-wide), the counts and line sums.
   The frame equals ``sweep(load_episodes(path), grid)`` value for value
   (``tests/test_partitioned.py`` checks it on a real ``LocalCluster``).

Scope: ``censored="wedge"`` and ``"observed"`` (per-call rules). ``"impute"``
draws from Kaplan–Meier estimates of the whole corpus in corpus order, which a
partition alone cannot reproduce: it is refused on a cluster with a clear
error (sweep in-process instead). Partitions are files (``part-*.parquet`` of
a directory, or one ``.parquet`` file): the unit of parallelism.

Cost and scale, measured on the 2-core development machine while other work
shared it (2026-12-01; ``benchmarks/bench_corpus.py``, and for the cluster a sweep of
every tenth point of that benchmark's grid over ``write_tables(..., rows_per_partition=125_000)``
of the same corpus):

* in-process, 1,000,000 synthetic episodes (6.16 M calls) from one Parquet file:
  compile 15.8 s, then 0.36 s per grid point of the benchmark's tuning grid (after the
  compile and sparse-replay work of 11:30 the same day: compile 9.4 s, 0.16 s per point,
  peak 1.71 GiB; at 20:30, with the wall quantiles read from the sorted static walls and
  the points on both cores' threads: compile 8.2-12.5 s from run to run, 0.051 s per point
  of wall time, about 0.087 s of one core, peak 1.69 GiB);
* on a 2-process ``LocalCluster`` (1 thread each), the same corpus as 8
  partitions of 125,000 episodes, 10 points: 39.1 s end to end before that work, 13.5 s
  at 20:55; one partition alone: compile 0.8 s and 0.016 s per point on one core (before:
  2.0 s and 0.045 s), so the workers' share of the 13.5 s is about 3.8 s and the rest is
  the client's: reading the ids, gathering the parts and merging them, about 1 s per point
  at 1 M episodes (the merge alone was 173 ms per point: rebuilding the zombie array of
  6.2 M calls, the quantiles of 1 M wall times).

Extrapolation to 100 M episodes (620 M calls, 800 partitions of 125,000) on N
one-core workers, for P points, from the 20:55 figures: the workers need about
800 × (0.8 + 0.016·P) worker-seconds — for P = 100, about 1,900 s: ~3 min on
N = 10, ~20 s on N = 100 — while the client's part, as built, grows with the corpus:
per point it gathers 800 MB of wall times and rebuilds a 5 GB zombie array
(~100 s and 6 GB of client memory per point from the 1 M figure; hours for 100
points). So the workers scale out and the exact merge does not: at that size the
zombie sum should be merged as per-partition exact sums (``math.fsum``, which differs
from the single-process ``np.sum`` in the last bits) and the percentiles by an
exact two-pass selection (bucket counts, then the one bucket's values); neither
is built here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from reviewlab.core import metrics
from reviewlab.engines.vectorized import CompiledCorpus, Evaluation
from reviewlab.engines.vectorized.columns import compile_columns

__all__ = ["Part", "corpus_origin_us", "evaluate_partition", "merge_parts", "sweep_path"]


@dataclass
class Part:
    """What one partition contributes to one grid point's summary (all exact).

    ``counts``: the number of true values of each boolean argument of
    :func:`~reviewlab.core.metrics.summarize_arrays`; ``sums``: the integer sums of
    its line-count arguments; the per-episode ``wall_sec``; the longest silence;
    the non-zero ``zombie_sec`` values at their call positions ``zombie_at`` (of
    ``calls``); the loose-worker intervals on the absolute clock.
    """

    calls: int
    counts: dict[str, int]
    sums: dict[str, int]
    wall_sec: np.ndarray
    max_silence_sec: float | None
    zombie_at: np.ndarray
    zombie_sec: np.ndarray
    loose_start: np.ndarray
    loose_end: np.ndarray
    tools: list[str] = field(default_factory=list)


_COUNTED = ("dispatched", "abandoned", "bounded", "by_deadline")
_SUMMED = ("requested_lines", "credited_lines", "timeout_lost_lines")


def corpus_origin_us(paths: Sequence[Path]) -> int:
    """The earliest ``started_at`` of the partitions (microseconds), from their own columns."""
    first = None
    for path in paths:
        column = pq.read_table(path, columns=["started_at"]).column("started_at")
        if len(column):
            low = int(np.asarray(column.cast("int64").to_numpy()).min())
            first = low if first is None else min(first, low)
    return 0 if first is None else first


def _loose_intervals(c: CompiledCorpus, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """Loose workers of ``ev`` on the absolute clock, as the settling step records them.

    A loose worker starts when its call's bound passes (the call's clock plus the
    bound) and runs for its zombie seconds; the clocks are the static clock or,
    in settled episodes, the settled block's (as :attr:`Evaluation.start_sec`
    reads them, without subtracting the arrival).
    """
    hit = np.flatnonzero(ev.abandoned & (ev.zombie_sec != 0))
    if ev.unbounded or not hit.size:
        return np.zeros(0), np.zeros(0)
    clock = c.static_clock_before[hit].copy()
    block_of = np.full(c.event_count.size, -1, dtype=np.intp)
    for number, (rows, *_) in enumerate(ev.settled):
        block_of[rows] = number
    rows_of_hit = c.call_row[hit]
    for number, (rows, block_clock, *_) in enumerate(ev.settled):
        mine = np.flatnonzero(block_of[rows_of_hit] == number)
        clock[mine] = block_clock[
            c.call_column[hit[mine]], np.searchsorted(rows, rows_of_hit[mine])
        ]
    start = clock + ev.bound_sec[hit]
    return start, start + ev.zombie_sec[hit]


def evaluate_partition(
    path: str, points: Sequence[Any], censored: str, seed: int, origin_us: int
) -> list[Part]:
    """Read and compile one partition, replay every point on it: one :class:`Part` per point."""
    c = compile_columns(path, censored=censored, seed=seed, origin_us=origin_us)
    parts = []
    for point in points:
        ev = c.evaluate(point.policy)
        arguments = ev.summary_arguments()
        start, end = _loose_intervals(c, ev)
        # The derivation above must give the engine's own peak for this partition.
        assert metrics.peak_overlap(start, end) == arguments["peak_loose_workers"]
        zombie = np.asarray(arguments["zombie_sec"], dtype=float)
        zombie_at = np.flatnonzero(zombie)
        silence = np.asarray(arguments["max_silence_sec"], dtype=float)
        parts.append(
            Part(
                calls=int(zombie.size),
                counts={name: int(np.count_nonzero(arguments[name])) for name in _COUNTED},
                sums={name: int(np.sum(arguments[name])) for name in _SUMMED},
                wall_sec=np.asarray(arguments["wall_sec"], dtype=float),
                max_silence_sec=float(silence.max()) if silence.size else None,
                zombie_at=zombie_at,
                zombie_sec=zombie[zombie_at],
                loose_start=start,
                loose_end=end,
                tools=list(c.tools),
            )
        )
    return parts


def merge_parts(parts: Sequence[Part]) -> dict[str, Any]:
    """The summary of one point from its partitions' parts, in partition (corpus) order.

    It calls :func:`~reviewlab.core.metrics.summarize_arrays` with arrays that have the
    merged counts, sums, maxima, every wall time and the zombie seconds in corpus order.
    """
    calls = sum(p.calls for p in parts)
    zombie = np.zeros(calls)
    offset = 0
    for p in parts:
        zombie[offset + p.zombie_at] = p.zombie_sec
        offset += p.calls
    silences = [p.max_silence_sec for p in parts if p.max_silence_sec is not None]
    empty = np.zeros(0)
    arguments: dict[str, Any] = {
        name: np.ones(sum(p.counts[name] for p in parts), dtype=bool) for name in _COUNTED
    }
    arguments.update(
        {name: np.array([sum(p.sums[name] for p in parts)], dtype=np.int64) for name in _SUMMED}
    )
    return metrics.summarize_arrays(
        **arguments,
        zombie_sec=zombie,
        wall_sec=np.concatenate([p.wall_sec for p in parts]) if parts else empty,
        max_silence_sec=np.array([max(silences)]) if silences else empty,
        peak_loose_workers=metrics.peak_overlap(
            np.concatenate([p.loose_start for p in parts]) if parts else empty,
            np.concatenate([p.loose_end for p in parts]) if parts else empty,
        ),
    )


def _check_ids(paths: Sequence[Path]) -> None:
    """Ids are unique across partitions (each worker checks its own file)."""
    from reviewlab.recording.files import EpisodeFormatError

    seen: dict[str, Path] = {}
    for path in paths:
        for row, episode_id in enumerate(pq.read_table(path, columns=["id"])["id"].to_pylist()):
            first = seen.setdefault(episode_id, path)
            if first != path:
                raise EpisodeFormatError(
                    path, row + 1, "id", f"duplicate episode id {episode_id!r} (first in {first})"
                )


def sweep_path(
    path: str | os.PathLike[str],
    points: Sequence[Any],
    *,
    client: Any = None,
    censored: str = "wedge",
    seed: int = 0,
) -> tuple[CompiledCorpus | None, list[dict[str, Any]] | None, list[str]]:
    """Run ``points`` on the corpus at ``path``.

    Without a client: ``(compiled corpus, None, tools)`` for the in-process sweep to
    replay. With one: ``(None, one summary per point, tools)`` from the partitions.
    """
    from reviewlab.recording.columnar_read import partition_paths

    where = Path(path)
    columnar = where.suffix == ".parquet" or where.is_dir()
    if client is None or not columnar:
        corpus = compile_columns(where, censored=censored, seed=seed)
        if client is None:
            return corpus, None, list(corpus.tools)
        raise ValueError(f"{where}: a cluster sweep reads Parquet partitions; convert it first")
    if censored == "impute":
        raise ValueError(
            "censored='impute' draws from the whole corpus's Kaplan-Meier estimates, which a "
            "partition alone cannot reproduce; sweep it in-process or use 'wedge' or 'observed'"
        )
    parts_paths = partition_paths(where)
    _check_ids(parts_paths)
    origin = corpus_origin_us(parts_paths)
    owned = None
    if isinstance(client, str):
        from distributed import Client

        owned = client = Client(client, timeout="30s")
    try:
        futures = [
            client.submit(
                evaluate_partition, str(part), list(points), censored, seed, origin, pure=False
            )
            for part in parts_paths
        ]
        per_partition = client.gather(futures)
    finally:
        if owned is not None:
            owned.close()
    tools = sorted({tool for parts in per_partition for tool in (parts[0].tools if parts else [])})
    rows = [merge_parts([parts[i] for parts in per_partition]) for i in range(len(points))]
    return None, rows, tools
