"""Sweeps of a corpus of Parquet partitions on a Dask cluster, merged exactly from fixed-size
partials: the client's work grows with the partitions and the points, not the episodes.

Lifecycle of ``sweep(path, grid, client=...)`` (:func:`sweep_partitions`): the client lists the
partitions → each worker surveys, compiles and keeps its own
(:class:`~reviewlab.engines.cluster.ClusterCorpus`) → per chunk of points each worker replays
them and answers passes of small questions (exact counts, a distributed selection for the wall
quantiles, the pairwise sum of zombie seconds, the loose-worker peak) → the client merges the
answers into :func:`reviewlab.core._metrics.summary_from_totals`.

Invariants: the frame equals the in-process sweep value for value; ``inf`` keeps its meaning.
Scope: the vectorized engine's points, ``censored="wedge"`` and ``"observed"`` (``"impute"``
is refused). Measured cost and scale: docs/cluster.md, "Cost and scale".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from reviewlab.core._vocab import DEFAULT_CENSORING
from reviewlab.engines.cluster import ClusterCorpus, connect


def sweep_partitions(
    source: str | os.PathLike[str] | Any,
    points: Sequence[Any],
    *,
    client: Any,
    censored: str = DEFAULT_CENSORING,
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
