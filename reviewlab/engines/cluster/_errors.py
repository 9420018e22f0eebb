"""What a sweep on a cluster reports when the cluster, not the input, fails.

Both are :class:`OSError` s (the environment failed, not an argument), so the command line
reports them as one line (:mod:`reviewlab.cli._errors`). A bad partition is reported by the
readers' own errors, which name the partition's file or URL
(:class:`~reviewlab.recording._file_errors.EpisodeFormatError`, :class:`FileNotFoundError`).
"""

from __future__ import annotations


class ClusterError(OSError):
    """The cluster could not finish the work; nothing was returned (and nothing written)."""


class SchedulerLost(ClusterError, ConnectionError):
    """The Dask scheduler could not be reached, or went away during the work."""

    def __init__(self, address: str, detail: str) -> None:
        self.address = address
        super().__init__(f"scheduler {address}: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.address, str(self).split(": ", 1)[1]))


class PartitionFailed(ClusterError):
    """A partition's work failed on every worker that tried it (each died running it)."""

    def __init__(self, partition: str, detail: str) -> None:
        self.partition = partition
        super().__init__(f"{partition}: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.partition, str(self).split(": ", 1)[1]))
