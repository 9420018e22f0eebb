"""A command that starts processes (an MCP server of a live episode, a served page) stops them
on the way out.

While :func:`stopping` is open in the main thread, SIGTERM and SIGHUP (a process manager, a
closed terminal) and SIGINT (even where a shell started us ignoring it) raise
:class:`KeyboardInterrupt`, so every ``with`` block on the way out runs (an
:class:`~reviewlab.live.mcp.MCPServer` terminates its stdio server), and a daemon thread sends
this process SIGTERM once the process that started it is gone (it was re-parented). The previous
handlers are restored when the block ends. Elsewhere than the main thread it does nothing: only
the main thread may set signal handlers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

PARENT_POLL_SEC = 0.25
"""How often the parent's pid is looked at."""
_RAISING = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)
)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signal.Signals(signum).name}")


@contextlib.contextmanager
def stopping() -> Iterator[None]:
    """SIGTERM, SIGHUP and the parent's death end the block as Ctrl-C does (module docstring)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in _RAISING}
    done = threading.Event()
    parent = os.getppid()

    def watch() -> None:
        while not done.wait(PARENT_POLL_SEC):
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGTERM)
                return

    watcher = None
    if parent != 1:
        watcher = threading.Thread(target=watch, name="reviewlab-parent-watch", daemon=True)
        watcher.start()
    try:
        yield
    finally:
        done.set()
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
