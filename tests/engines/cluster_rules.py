"""A timeout rule that acts once inside a Dask worker: the cluster failure tests' trigger.

Workers import it by name (this directory is on their ``sys.path``): a rule pickles by
reference, and its action runs only where :func:`distributed.get_worker` finds a worker, so
the in-process reference sweep of the same rule never triggers it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["OnceInAWorker"]


@dataclass(frozen=True)
class OnceInAWorker:
    """Every tool gets ``seconds``; the first worker to resolve a timeout creates ``marker``
    (atomically: once across every process) and then ``action``s: ``"kill"`` its own process,
    or ``"hang"`` until killed with the scheduler (at most a minute)."""

    seconds: float
    marker: str
    action: str

    def timeout_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float:
        """``seconds``, after the action the first time in a worker."""
        if not os.path.exists(self.marker) and _in_a_worker():
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return self.seconds
            if self.action == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            deadline = time.monotonic() + 60.0
            while time.monotonic() < deadline:
                time.sleep(0.05)
        return self.seconds


def _in_a_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True
