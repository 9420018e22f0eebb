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

Cost and scale — ``benchmarks/bench_cluster.py`` on the 2-core, 24 GiB development machine,
2026-12-03, shared with other work (load average about 4 during the runs); a 2-worker
``LocalCluster``, one thread per worker process:

* client memory: a 6-point sweep in 4 partitions, peak traced memory of the client's process
  (the scheduler included) 1.3 MiB for 50,000 episodes and 1.5 MiB for 200,000 (×1.13 for ×4
  the episodes; before this module's partials: 8.7 and 34.1 MiB). It grows with partitions
  instead: 4.8 MiB for the 200,000 in 16 partitions, about 280 KiB a partition (the
  scheduler's tasks and the futures; the answers are folded in as they arrive);
* 4,000,000 synthetic episodes (24.7 M calls) in 16 partitions of 250,000, 10 points, end to
  end: open 34.7 s (survey, compile, id check) + sweep 9.4 s = 44.1 s (the in-process sweep
  of the same partitions: 72 s, peak RSS 5.5 GiB), frame equal to the in-process one in every
  column; client peak RSS 0.21 GiB (scheduler included), each worker 2.4 GiB holding 8
  compiled partitions; 3 answer passes per chunk of points;
* one partition of 250,000 episodes alone, CPU seconds on one core: survey 0.20 s, compile
  1.89 s, 44 ms a point (its replay and every answer pass).

Extrapolated from those per-partition costs to 100,000,000 episodes in 400 partitions of
250,000 on one-core workers: opening costs 400 × 2.1 s ≈ 14 worker-minutes, each point
400 × 44 ms ≈ 18 worker-seconds; 10 points ≈ 0.3 worker-hours (about 2 min on 10 workers,
10 s on 100), 100 points ≈ 0.7 worker-hours (4 min on 10, 25 s on 100). The client's part
is tasks, not episodes: about 10,000 tasks for 10 points and 20,000 for 100, at the measured
5.8 ms of client and scheduler CPU a task about 1 and 2 minutes, and about 110 MiB of client
memory for 400 partitions at the measured 280 KiB a partition — against the ~17 GiB, ~100 s
and 6 GB a point the exact merge of whole arrays needed before. Workers need the compiled
partitions in memory: about 0.3 GiB per partition of 250,000 (2.4 GiB for 8 measured), so
400 partitions want about 120 GiB across the cluster.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from reviewlab.engines.cluster import ClusterCorpus, connect

__all__ = ["sweep_partitions"]


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
