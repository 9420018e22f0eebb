"""Test doubles that run live: a clock that moves only when told, a registry with a held tool.

:class:`ManualClock` (installed with :func:`manual_clock`) lets a test of deadlines never sleep;
:class:`WedgedRegistry` (built by :func:`wedged_factory`) holds one tool until an event is set,
the wedged call of the incident on demand: tests wait on its ``entered`` and ``returned`` events
instead of racing the clock. The demo uses them too; :mod:`reviewlab.testing` re-exports them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reviewlab.core._deadline import clock_scope
from reviewlab.live._inspection import inspection_registry

RegistryFactory = Callable[..., tuple[Any, Any, Any]]
"""``factory(root, drive_root=None, task_id="") -> (registry, ctx, schemas)``, as
:func:`~reviewlab.live._inspection.inspection_registry`."""


class ManualClock:
    """A monotonic clock reading :attr:`now` seconds until it is moved; it never goes back.

    Call it for the time (it is the ``clock`` :func:`clock_scope` wants). Moving it is
    explicit: :meth:`advance` by seconds or :meth:`advance_to` an absolute time. NaN,
    infinite and backward moves are refused with the parameter's name.
    """

    def __init__(self, start: float = 0.0) -> None:
        self.now = _finite("start", start)

    def __call__(self) -> float:
        """The current time in seconds."""
        return self.now

    def advance(self, seconds: float) -> float:
        """Move the clock ``seconds`` (≥ 0) forward; return the new time."""
        if _finite("seconds", seconds) < 0:
            raise ValueError(f"seconds: a monotonic clock does not go back, got {seconds!r}")
        self.now += seconds
        return self.now

    def advance_to(self, at: float) -> float:
        """Move the clock to the absolute time ``at`` (not before :attr:`now`); return it."""
        if _finite("at", at) < self.now:
            raise ValueError(f"at: {at!r} is before the clock's time {self.now!r}")
        self.now = float(at)
        return self.now


@contextmanager
def manual_clock(start: float = 0.0) -> Iterator[ManualClock]:
    """A :class:`ManualClock` made the monotonic clock of the block (restored after it)."""
    clock = ManualClock(start)
    with clock_scope(clock):
        yield clock


class WedgedRegistry:
    """A registry whose ``tool`` blocks until ``release`` is set; every other call passes through.

    Lifecycle of a held call: ``entered`` is set when it starts waiting; once ``release`` is
    set it runs the inner tool, then ``returned`` is set. Its value goes to whoever still
    waits for it — after an abandonment, a loose worker that nobody reads. Every other
    attribute is the inner registry's, so crediting stamps behave as in the real registry.
    """

    def __init__(self, inner: Any, tool: str, release: threading.Event) -> None:
        self.inner = inner
        self.tool = tool
        self.release = release
        self.entered = threading.Event()
        self.returned = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def execute(self, name: str, args: Any) -> str:
        """Run ``name`` on the inner registry, after ``release`` when ``name`` is the held tool."""
        if name != self.tool:
            return str(self.inner.execute(name, args))
        self.entered.set()
        self.release.wait()
        try:
            return str(self.inner.execute(name, args))
        finally:
            self.returned.set()


def wedged_factory(
    tool: str,
    release: threading.Event,
    *,
    factory: RegistryFactory = inspection_registry,
    made: list[WedgedRegistry] | None = None,
) -> RegistryFactory:
    """A registry factory for ``ReviewEpisode`` whose registries hold ``tool`` until ``release``.

    Each registry the factory builds wraps ``factory``'s and is appended to ``made`` when
    given, so a test can wait on its events.
    """

    def build(
        root: str | Path, drive_root: str | Path | None = None, task_id: str = ""
    ) -> tuple[WedgedRegistry, Any, Any]:
        registry, ctx, schemas = factory(root, drive_root, task_id)
        wedged = WedgedRegistry(registry, tool, release)
        if made is not None:
            made.append(wedged)
        return wedged, ctx, schemas

    return build


def _finite(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name}: expected seconds, got {value!r}")
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name}: expected a finite number of seconds, got {value!r}")
    return float(value)
