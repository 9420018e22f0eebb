"""A served page's process (Voilà, JupyterLab) that never outlives the command that started it.

Lifecycle: started in a session of its own (:func:`start_server`: a terminal's Ctrl-C reaches
the command, not the server, and the whole group can be signalled; on Linux the server is also
sent SIGTERM if the command dies without a word) → waited on (:func:`supervise`) → stopped on
whichever comes first: it exits by itself; the command gets SIGTERM, SIGHUP (a closed terminal,
a process manager) or SIGINT (Ctrl-C); the command's own parent dies. Stopping is SIGTERM to the
server's process group (Voilà and Jupyter shut their kernels down on it; a kernel also exits by
itself once its server is gone), then SIGKILL to the group after :data:`STOP_GRACE_SEC`.
docs/architecture.md, "Stopping a served page".
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)
)
"""The signals that stop a served page (and the command serving it)."""
STOP_GRACE_SEC = 10.0
"""How long a server gets to shut its kernels down after SIGTERM before its group is killed."""
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGTERM when the process that started it dies."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def start_server(argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Start ``argv`` as a served page's process: a session of its own, and (Linux) a SIGTERM
    when this process dies. ``popen`` goes to :class:`subprocess.Popen`."""
    extra: dict[str, Any] = {}
    if os.name == "posix":
        extra["start_new_session"] = True
        if sys.platform.startswith("linux"):
            extra["preexec_fn"] = _die_with_parent
    return subprocess.Popen(list(argv), **extra, **popen)


def stop_server(process: subprocess.Popen[Any], grace_sec: float = STOP_GRACE_SEC) -> None:
    """SIGTERM to the server's process group, then SIGKILL after ``grace_sec``; returns when
    the server has exited (its group is then killed outright, whatever is left in it)."""
    if process.poll() is None:
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(timeout=grace_sec)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait()
    if os.name == "posix":
        _signal_group(process, signal.SIGKILL)  # stragglers that kept the group alive


def _signal_group(process: subprocess.Popen[Any], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "posix":
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)


def supervise(process: subprocess.Popen[Any]) -> int:
    """Wait for a served page's process and stop it on every way out (module docstring).

    Returns its exit status when it ends by itself, 0 when it was stopped on request (a stop
    signal, or this process's parent gone). The previous signal handlers come back afterwards.
    """
    from reviewlab.live._stopping import stopping

    try:
        with stopping():
            return process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop_server(process)
