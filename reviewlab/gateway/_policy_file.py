"""The policy a gateway enforces, re-read from its file while the gateway runs.

Lifecycle: ``PolicyFile(path)`` reads the file once (a bad file at start is an error naming it);
``await watch()`` then looks at the file's modification stamp every ``poll_sec`` (0.25 s, so a
change is in force within a second) and re-reads it when the stamp moved. A call reads
:attr:`current` when it starts, so the calls that start after a reload use the new policy and
the calls in flight keep theirs. A file that no longer reads as a policy keeps the old one in
force and logs one line saying why; the next good save is taken.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from reviewlab.core._policy import Policy

log = logging.getLogger("reviewlab.gateway")

POLICY_POLL_SEC = 0.25
"""How often the file's stamp is looked at (a change is in force within a second)."""


class PolicyFile:
    """A policy file and the policy last read from it (see the module docstring)."""

    def __init__(self, spec: str | os.PathLike[str] | None, default: Policy | None = None) -> None:
        """``spec``: a policy file (watched), or what :meth:`Policy.parse` reads (``uniform:60``,
        a preset: fixed); ``None`` keeps ``default`` (a uniform 60 s bound)."""
        self.reloads = 0
        self.last_error: str | None = None
        self._stamp: tuple[int, int] | None = None
        self.path = Path(spec) if spec is not None and Path(spec).is_file() else None
        if self.path is not None:
            self._stamp = self._stat()
            self.current = Policy.load(self.path)
        elif spec is not None:
            self.current = Policy.parse(spec)
        else:
            self.current = default if default is not None else Policy.uniform(60.0)

    def _stat(self) -> tuple[int, int] | None:
        assert self.path is not None
        try:
            info = self.path.stat()
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def check(self) -> bool:
        """Re-read the file if it changed since the last look; whether a new policy is in force."""
        if self.path is None:
            return False
        stamp = self._stat()
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        try:
            policy = Policy.load(self.path)
        except Exception as exc:  # noqa: BLE001 - any bad file keeps the old policy
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.last_error = reason
            log.warning("reviewlab gateway: %s: kept the policy in force (%s)", self.path, reason)
            return False
        self.current = policy
        self.last_error = None
        self.reloads += 1
        log.info("reviewlab gateway: %s: policy %r in force", self.path, policy.label)
        return True

    async def watch(self, poll_sec: float = POLICY_POLL_SEC) -> None:
        """Look for changes until cancelled."""
        while True:
            await asyncio.sleep(poll_sec)
            self.check()
