"""Reaching a Dask cluster: the optional dependency, the client, the partitions, the sizes.

Lifecycle: :func:`connect` turns a ``distributed.Client`` or a scheduler address into a client
(and says whether the caller must close it); :func:`partitions_of` names the Parquet
partitions a cluster reads where they live; :func:`register_sizes` tells Dask what a
worker-side object weighs, so the tasks that read it stay beside it.

Invariants: the base install has no dask, and nothing here imports it before it is needed
(:func:`distributed_module` names the extra that installs it, in one line); an address that
cannot be reached is :class:`~reviewlab.engines.cluster._errors.SchedulerLost`.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from reviewlab.core._errors import ParameterError
from reviewlab.engines.cluster._errors import SchedulerLost

CLUSTER_EXTRA = "pip install 'reviewlab[cluster]'"
"""How to install what a Dask cluster needs (the base install has no dask)."""


def distributed_module() -> Any:
    """``dask.distributed``, or a ``ParameterError`` (``client``) saying in one line which
    extra installs it."""
    try:
        import distributed
    except ImportError:
        raise ParameterError(
            "client",
            f"a Dask cluster needs dask.distributed, which this install lacks: {CLUSTER_EXTRA}",
        ) from None
    return distributed


def connect(client: Any, timeout_sec: float | None = None) -> tuple[Any, bool]:
    """``client`` (a ``distributed.Client`` or a scheduler address) and whether it was made
    here (and must be closed here). An address that cannot be reached within ``timeout_sec``
    (default: Dask's ``distributed.comm.timeouts.connect``, 30 s unless configured) is
    :class:`~._errors.SchedulerLost`."""
    if not isinstance(client, str):
        return client, False
    Client = distributed_module().Client

    try:
        if timeout_sec is None:
            return Client(client), True
        return Client(client, timeout=f"{timeout_sec}s"), True
    except (OSError, TimeoutError) as exc:
        raise SchedulerLost(client, f"cannot connect ({exc})") from None


def partitions_of(source: Any) -> list[str]:
    """The partition files of a corpus path, URL or opened :class:`~reviewlab.Corpus`
    (only the names are read)."""
    from reviewlab.recording._locations import is_url
    from reviewlab.recording.columnar import partition_paths

    path = getattr(source, "path", source)  # an opened corpus knows where it lives
    if not isinstance(path, str | os.PathLike):
        raise ValueError(
            "corpus: a cluster reads the corpus's Parquet partitions where they are; pass a "
            "path or URL (episodes in memory: run in-process)"
        )
    where = str(path) if is_url(path) else os.fspath(path)
    if not is_url(where) and not (where.endswith(".parquet") or os.path.isdir(where)):
        raise ValueError(
            f"{where}: a cluster sweep reads Parquet partitions; convert it first "
            "(reviewlab convert CORPUS DIR --rows-per-partition N)"
        )
    return [str(part) for part in partition_paths(where)]


def array_bytes(obj: Any) -> int:
    """The bytes of the arrays an object holds in its attributes (what Dask's ``sizeof`` says
    of a compiled partition or a worker-side state: the scheduler then keeps the tasks that
    read it where it is, rather than moving it as if it were small)."""
    import numpy as np

    held = vars(obj).values() if hasattr(obj, "__dict__") else ()
    return 1024 + sum(value.nbytes for value in held if isinstance(value, np.ndarray))


@functools.cache
def register_sizes(*types: type) -> None:
    """Tell Dask the size of these worker-side types (once per process and set of types)."""
    from dask.sizeof import sizeof

    for kind in types:
        sizeof.register(kind)(array_bytes)
