"""The ledger of abandoned asyncio calls: loose now, peak, zombies and their time-to-stop."""

from __future__ import annotations

import threading

__all__ = ["AsyncLedger"]


class AsyncLedger:
    """Abandoned calls still running (loose), their peak, and how long they took to stop.

    Thread-safe: a sync tool's thread settles its own call. ``cancelled`` counts
    abandoned calls that stopped within the grace period, ``zombies`` the ones
    still running past it (whether or not they have stopped since).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self.loose = 0
        self.peak = 0
        self.abandoned = 0
        self.settled = 0
        self.zombie_sec = 0.0
        self.refused = 0
        self.cancelled = 0
        self.zombies = 0

    def _abandon(self) -> None:
        with self._cond:
            self.loose += 1
            self.abandoned += 1
            self.peak = max(self.peak, self.loose)

    def _zombie(self) -> None:
        with self._cond:
            self.zombies += 1

    def _settle(self, stop_sec: float, within_grace: bool) -> None:
        with self._cond:
            self.loose -= 1
            self.settled += 1
            self.zombie_sec += stop_sec
            self.cancelled += within_grace
            self._cond.notify_all()

    def _refuse(self) -> None:
        with self._cond:
            self.refused += 1

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Block until no call is loose (or ``timeout`` seconds pass); True when none is."""
        with self._cond:
            return self._cond.wait_for(lambda: self.loose == 0, timeout)

    def snapshot(self) -> dict[str, float | int]:
        """The ledger's counters as a dict (the thread ledger's keys plus two)."""
        with self._cond:
            return {
                "loose": self.loose,
                "peak": self.peak,
                "abandoned": self.abandoned,
                "settled": self.settled,
                "zombie_sec": self.zombie_sec,
                "refused": self.refused,
                "cancelled": self.cancelled,
                "zombies": self.zombies,
            }
