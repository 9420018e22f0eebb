"""``--busy``: run a benchmark beside a CPU-bound neighbour, as on a developer's laptop or CI.

Every ``benchmarks/bench_*.py`` takes ``--busy``. With it, the measurement runs while one
other process spins on the CPU (a pure-Python loop, started before the measurement and
killed after it), so a goal is judged on a machine that is not idle. The neighbour is a
separate process, not a thread, so it does not share the benchmark's GIL: it competes for
the cores the way another program does.

Use::

    parser = argparse.ArgumentParser(...)
    add_busy_flag(parser)
    args = parser.parse_args()
    with neighbour(args.busy):
        ...  # measure

``machine_label(busy)`` names the condition in the printed figures ("quiet" / "busy").
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator

_SPIN = "while True:\n    pass\n"


def add_busy_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--busy`` (run the measurement beside one CPU-bound neighbour process)."""
    parser.add_argument(
        "--busy",
        action="store_true",
        help="measure with one CPU-bound neighbour process running (as on a busy machine)",
    )


def machine_label(busy: bool) -> str:
    """``"busy"`` or ``"quiet"``: the condition a figure was measured under."""
    return "busy" if busy else "quiet"


@contextlib.contextmanager
def neighbour(busy: bool, processes: int = 1) -> Iterator[None]:
    """Run ``processes`` CPU-bound neighbours for the duration of the block when ``busy``.

    The neighbours are started (and given a moment to be scheduled) before the block and
    killed after it, whatever the block raises.
    """
    if not busy:
        yield
        return
    spinners = [
        subprocess.Popen([sys.executable, "-c", _SPIN], stdin=subprocess.DEVNULL)
        for _ in range(processes)
    ]
    try:
        time.sleep(0.2)
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
