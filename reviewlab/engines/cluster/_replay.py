"""``replay(corpus, policy, client=...)``: one policy replayed on a cluster, partition by
partition, its summary merged from the same fixed-size partials as a sweep's.

The answer is a :class:`~reviewlab.engines._result.ReplaySummary` whose summary equals the
in-process ``replay(corpus, policy, engine="vectorized")``'s to the bit; it has no frames: a
call frame holds a row per call, which is what a corpus too large for the client cannot give
it. What the cluster honours is declared once (:data:`reviewlab.engines._honours.CLUSTER`).
"""

from __future__ import annotations

from typing import Any

from reviewlab.core._policy import Policy
from reviewlab.core._vocab import DEFAULT_CENSORING, DEFAULT_REACTION
from reviewlab.engines._honours import CLUSTER
from reviewlab.engines._result import ReplaySummary
from reviewlab.engines.cluster._connect import connect
from reviewlab.engines.cluster._session import ClusterCorpus


def replay_on_cluster(
    corpus: Any,
    policy: Policy,
    *,
    client: Any,
    censored: str = DEFAULT_CENSORING,
    reaction: str = DEFAULT_REACTION,
    seed: int = 0,
) -> ReplaySummary:
    """The replay of ``corpus`` (Parquet partitions: a path, an fsspec URL or an opened corpus
    with a path) under ``policy`` on ``client``'s cluster (a ``distributed.Client`` or a
    scheduler address). What needs Episode objects is refused by name."""
    CLUSTER.check(policy, censored, reaction)
    connected, owned = connect(client)
    try:
        with ClusterCorpus.open(corpus, connected, censored=censored, seed=seed) as on_cluster:
            summary = on_cluster.summaries([policy])[0]
            address = on_cluster.address
            partitions = len(on_cluster.partitions)
    finally:
        if owned:
            connected.close()
    return ReplaySummary(
        summary=summary,
        engine="vectorized",
        policy=policy,
        assumptions={
            "engine": "vectorized",
            "reaction": "as_recorded",
            "censored": censored,
            "seed": seed,
            "cluster": address,
            "partitions": partitions,
        },
    )
