"""Sweeps of a corpus of Parquet partitions on a Dask cluster, merged exactly from fixed-size
partials: the client's work grows with the partitions and the points, not the episodes.

Lifecycle of ``sweep(path, grid, client=...)`` (:func:`sweep_partitions`):

1. The client lists the partitions (a directory, one ``.parquet`` file, or an fsspec URL:
   ``file://``, ``memory://``, ``s3://``… — :mod:`reviewlab.recording.locations`). Nothing
   else of the corpus passes through it.
2. Each worker surveys, compiles and keeps its partitions
   (:class:`~reviewlab.engines.cluster.ClusterCorpus`): arrivals on the whole corpus's clock,
   ids checked unique across partitions on the workers.
3. Per chunk of points, each worker replays the points on its partitions and answers passes of
   small questions (:mod:`reviewlab.engines.cluster._partials`): exact counts, integer line
   sums and maxima; the wall p50/p95/p99 by an exact distributed selection (a histogram on a
   grid shared by every partition, then only the values inside the cell that holds the rank);
   the zombie seconds as NumPy's own pairwise sum reassembled from ``O(log calls)`` pieces per
   partition; the peak of loose workers by a branch and bound over cells of time. ``inf`` (a
   call that never returns) keeps its meaning throughout.
4. The client merges the answers as they arrive and hands the totals to
   :func:`reviewlab.core.metrics.summary_from_totals`, the one definition of the summary.
   The frame equals the in-process ``sweep(path, grid)`` value for value, every column
   (``tests/test_partitioned.py``, ``tests/test_cluster_*.py`` on a real ``LocalCluster``).

Scope: the vectorized engine's points (no hedges, no breaker: those replay Episode objects),
``censored="wedge"`` and ``"observed"``. ``"impute"`` draws from Kaplan–Meier estimates of the
whole corpus in corpus order, which a partition alone cannot reproduce: refused on a cluster.
Partitions are the unit of parallelism: at least as many as the cluster has worker threads.

Cost and scale — measured by ``benchmarks/bench_cluster.py`` on the 2-core, 24 GiB
development machine (figures in the CHANGELOG and below are that benchmark's output):

* client memory: the client's peak traced memory during a sweep (tracemalloc, the scheduler of
  the ``LocalCluster`` included) at the same partition count is flat in the episodes (the
  benchmark's verdict holds it within 1.5x for 4x the episodes);
* end to end: see :data:`MEASURED` (filled from the benchmark's last run);
* 100 M episodes: extrapolated from the measured per-partition costs (:data:`MEASURED`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from reviewlab.engines.cluster import ClusterCorpus, connect

__all__ = ["MEASURED", "sweep_partitions"]

MEASURED: dict[str, Any] = {}
"""The benchmark's figures (``benchmarks/bench_cluster.py``); see the module docstring."""


def sweep_partitions(
    source: str | os.PathLike[str] | Any,
    points: Sequence[Any],
    *,
    client: Any,
    censored: str = "wedge",
    seed: int = 0,
    chunk_size: int | None = None,
    check_tools: Callable[[list[str]], None] | None = None,
    done: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """One summary per point of ``points`` (:class:`~reviewlab.analysis.sweep.PolicyPoint`) on
    the Parquet partitions of ``source`` (a path, an fsspec URL or an opened corpus with a
    path), replayed on ``client``'s cluster (a ``distributed.Client`` or a scheduler address).

    ``check_tools(tools)`` sees the corpus's tools before any point runs (the sweep refuses a
    grid over a tool the corpus never calls); ``done(n)`` is called as chunks of ``n`` points
    finish. Errors: see :mod:`reviewlab.engines.cluster` (one error naming the partition or
    the scheduler; nothing is returned after a failure).
    """
    client, owned = connect(client)
    try:
        with ClusterCorpus.open(source, client, censored=censored, seed=seed) as corpus:
            if check_tools is not None:
                check_tools(corpus.tools)
            return corpus.summaries(
                [point.policy for point in points], chunk_size=chunk_size, done=done
            )
    finally:
        if owned:
            client.close()
