"""``engine="real"``: recorded episodes replayed through the real :class:`ReviewEpisode` and
:class:`BoundedExecutor`, under a clock that scales time.

Each episode runs on its own thread under one :class:`~reviewlab.core._deadline.ScaledClock`
whose second lasts ``time_scale`` real seconds: the ONE place time is scaled, so every wait
and measurement is in recorded seconds and the policy is replayed as it is. A replay model
answers each send with the recorded round's calls; a replay registry runs each call for its
recorded duration (progress at its recorded times, tool errors raised, a wedge blocking until
the run ends); the inherited deadline is a real deadline scope. Frames are the twin's,
measured; hedges follow the replay's one plan, the breaker is the real episode's own.

Invariants: calls within a few real milliseconds of their bound may go either way (the
differential test allows for it); an unbounded wait on a wedge is recorded as ``inf``, as in
the twin; a server recorded stopping after a cancel stops that long after the abandonment. In full:
docs/architecture.md, "The real engine".
"""

from reviewlab.engines.real._calibrate import (
    OVERHEAD_SHARE_GOAL,
    default_time_scale,
    measure_overhead_sec,
)
from reviewlab.engines.real._engine import replay_real

__all__ = [
    "OVERHEAD_SHARE_GOAL",
    "default_time_scale",
    "measure_overhead_sec",
    "replay_real",
]
