"""How fast the real engine may run a corpus: its per-call overhead and the default time scale."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

import numpy as np

from reviewlab.engines._censoring import effective_observation
from reviewlab.live._executor import BoundedExecutor
from reviewlab.recording._schema import Episode

OVERHEAD_SHARE_GOAL = 0.01
"""The default ``time_scale`` keeps the engine's own overhead under this share of wall time."""
_SCALE_RANGE = (1e-4, 1.0)
_overhead_cache: list[float] = []
"""The calibration's measurements, once per process: the mean and the largest lateness."""


def measure_overhead_sec(samples: int = 64) -> float:
    """This machine's real overhead per replayed call, in seconds: executor handoff and timer
    overshoot.

    Runs ``samples`` calls that each wait 0.5 ms through a fresh
    :class:`BoundedExecutor` and returns the mean time beyond 0.5 ms (measured
    once per process, then cached).
    """
    _calibrate(samples)
    return _overhead_cache[0]


def clock_resolution_sec() -> float:
    """The real clock's measured resolution, in real seconds: the largest lateness one handed-off
    wait showed in :func:`measure_overhead_sec`'s calibration.

    The real engine reads a deadline window this close (divided by its ``time_scale``) below the
    tool timeout as a tie (docs/semantics.md, "Ties on the real clock").
    """
    _calibrate(64)
    return _overhead_cache[1]


def _calibrate(samples: int) -> None:
    if _overhead_cache:
        return
    executor = BoundedExecutor(loose_cap=None, name="replay-calibrate")
    pause = threading.Event()
    try:
        extra = []
        for _ in range(samples):
            started = time.perf_counter()
            executor.run(lambda: pause.wait(0.0005), bound=5.0)
            extra.append(time.perf_counter() - started - 0.0005)
    finally:
        executor.shutdown()
    _overhead_cache.extend([max(float(np.mean(extra)), 1e-6), max(float(np.max(extra)), 1e-6)])


def default_time_scale(episodes: Iterable[Episode], overhead_sec: float | None = None) -> float:
    """The ``time_scale`` at which the engine's overhead is about 1 % of the corpus's wall time.

    Every send and call costs about ``overhead_sec`` real seconds
    (:func:`measure_overhead_sec` by default) on top of its scaled recorded
    time, so the share is ``events × overhead / (scale × recorded seconds)``;
    solved for :data:`OVERHEAD_SHARE_GOAL`, clipped to ``[1e-4, 1]``. The
    recorded seconds are the sends plus each call's effective duration (its
    observed time if censored); under a bounded policy the replayed wall is
    shorter, which ``assumptions["overhead_share"]`` then reports as measured.
    """
    corpus = list(episodes)
    per_event = measure_overhead_sec() if overhead_sec is None else overhead_sec
    events = sum(len(ep.rounds) + len(ep.calls) for ep in corpus)
    seconds = sum(
        sum(r.send_sec for r in ep.rounds) + sum(effective_observation(c)[0] for c in ep.calls)
        for ep in corpus
    )
    if events == 0 or seconds <= 0:
        return _SCALE_RANGE[1]
    scale = events * per_event / (OVERHEAD_SHARE_GOAL * seconds)
    return float(min(max(scale, _SCALE_RANGE[0]), _SCALE_RANGE[1]))
