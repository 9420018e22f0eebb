"""``replay(corpus, policy, client=...)``: one policy replayed on a cluster, partition by
partition, its summary merged from the same fixed-size partials as a sweep's.

The result is a :class:`~reviewlab.engines.result.ReplayResult` whose summary equals the
in-process ``replay(corpus, policy, engine="vectorized")``'s to the bit and whose frames are
never gathered: a call frame holds a row per call, which is what a corpus too large for the
client cannot give it. Reading ``.calls`` or ``.episodes`` is a ``ValueError`` saying so.
"""

from __future__ import annotations

from typing import Any

from reviewlab.core.policy import Policy
from reviewlab.engines.cluster._session import ClusterCorpus, connect
from reviewlab.engines.result import FramesOnDemand, ReplayResult

__all__ = ["replay_on_cluster"]


def _no_frames() -> ReplayResult:
    raise ValueError(
        "frames: a replay on a cluster gathers no call or episode to the client (its summary "
        "is merged from the partitions); replay in-process for the frames"
    )


def replay_on_cluster(
    corpus: Any,
    policy: Policy,
    *,
    client: Any,
    engine: str = "vectorized",
    censored: str = "wedge",
    reaction: str = "as_recorded",
    slots: int | None = None,
    time_scale: float | None = None,
    seed: int = 0,
    **options: Any,
) -> ReplayResult:
    """The replay of ``corpus`` (Parquet partitions: a path, an fsspec URL or an opened corpus
    with a path) under ``policy`` on ``client``'s cluster (a ``distributed.Client`` or a
    scheduler address). What needs Episode objects is refused by name."""
    if engine != "vectorized":
        raise ValueError(
            f"engine: a replay on a cluster is the vectorized engine's, not {engine!r} (the twin "
            "and the real engine replay Episode objects in-process); pass engine='vectorized'"
        )
    if reaction != "as_recorded":
        raise ValueError(
            f"reaction: {reaction!r} rewrites Episode objects; a replay on a cluster keeps the "
            "recorded rounds ('as_recorded')"
        )
    if policy.breaker is not None or policy.hedges:
        raise ValueError(
            "policy: its hedges or breaker are replayed on Episode objects, in-process; a replay "
            "on a cluster replays timeouts, narrowing and idle timeouts"
        )
    policy.refuse("a replay on a cluster", "cap_rule", "tasks")
    if slots is not None or time_scale is not None:
        raise ValueError("slots, time_scale: the twin's and the real engine's, not a cluster's")
    if options:
        raise TypeError(f"replay on a cluster: unexpected options {', '.join(sorted(options))}")
    connected, owned = connect(client)
    try:
        with ClusterCorpus.open(corpus, connected, censored=censored, seed=seed) as on_cluster:
            summary = on_cluster.summaries([policy])[0]
            address = on_cluster.address
            partitions = len(on_cluster.partitions)
    finally:
        if owned:
            connected.close()
    return FramesOnDemand(
        _no_frames,
        summary=summary,
        engine="vectorized",
        policy=policy,
        assumptions={
            "reaction": "as_recorded",
            "censored": censored,
            "seed": seed,
            "cluster": address,
            "partitions": partitions,
        },
    )
