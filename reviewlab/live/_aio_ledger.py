"""The ledger of abandoned asyncio calls: loose now, peak, zombies and their time-to-stop."""

from __future__ import annotations

from reviewlab.live._call_results import LooseLedger


class AsyncLedger(LooseLedger):
    """Abandoned calls still running (loose), their peak, and how long they took to stop.

    The thread executor's :class:`~reviewlab.live._call_results.LooseLedger` plus two
    counts: ``cancelled``, the abandoned calls that stopped within the grace
    period, and ``zombies``, the ones still running past it (whether or not they
    have stopped since). Thread-safe: a sync tool's thread settles its own call.
    """

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = 0
        self.zombies = 0

    def _zombie(self) -> None:
        with self._cond:
            self.zombies += 1

    def _settle(self, stop_sec: float, within_grace: bool = False) -> None:  # type: ignore[override]
        with self._cond:
            self.cancelled += within_grace
        super()._settle(stop_sec)

    def snapshot(self) -> dict[str, float | int]:
        """The ledger's counters as a dict (the thread ledger's keys plus two)."""
        counts = super().snapshot()
        with self._cond:
            counts.update(cancelled=self.cancelled, zombies=self.zombies)
        return counts
