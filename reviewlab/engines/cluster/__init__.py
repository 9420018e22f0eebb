"""Work on a Dask cluster whose client side does not grow with the corpus.

Layout: :mod:`._keys` (the shared bin grid), :mod:`._merge` (sums by sub-cell),
:mod:`._select` (exact order statistics), :mod:`._pairwise` (NumPy's float sum reassembled),
:mod:`._overlap` (the peak of loose workers) and :mod:`._partials` (a point's partials and
their merge) are the pieces; :mod:`._ids` checks ids across partitions; :mod:`._connect`
reaches the cluster and :mod:`._session` (:class:`ClusterCorpus`) runs them on the workers.
:mod:`._replay` (``replay(..., client=...)``) and :mod:`reviewlab.analysis._partitioned`
(sweeps) are built on it. Running on an existing cluster: ``docs/cluster.md``.
"""

from reviewlab.engines.cluster._connect import (
    CLUSTER_EXTRA,
    connect,
    distributed_module,
    partitions_of,
)
from reviewlab.engines.cluster._errors import ClusterError, PartitionFailed, SchedulerLost
from reviewlab.engines.cluster._replay import replay_on_cluster
from reviewlab.engines.cluster._session import ClusterCorpus

__all__ = [
    "CLUSTER_EXTRA",
    "ClusterCorpus",
    "ClusterError",
    "PartitionFailed",
    "SchedulerLost",
    "connect",
    "distributed_module",
    "partitions_of",
    "replay_on_cluster",
]
