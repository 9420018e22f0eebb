"""The SimPy twin of the bounded executor and the reviewer pool (docs/architecture.md).

The twin replays recorded episodes on virtual time with the SAME decision core
as the real executor: bounds from :func:`reviewlab.core.policy.resolve_bound`,
call fates from :func:`reviewlab.core.crediting.abandons`, crediting from
:class:`reviewlab.core.crediting.Crediting`, frames and summary from
:mod:`reviewlab.core.metrics`. Only the waiting differs: SimPy timeouts instead of
threads. What it adds over a queueing library: zombies that keep a worker
thread busy after their caller abandoned them, reviewer slots that queue
review requests, and wedged calls as right-censored observations.

Modules: :mod:`~reviewlab.engines.twin.engine` (``simulate``), :mod:`~reviewlab.engines.twin.model`
(the episode process), :mod:`~reviewlab.engines.twin.pool` (slots, worker threads,
timelines), :mod:`~reviewlab.engines.twin.bounds` (the exact bound cache),
:mod:`~reviewlab.engines.twin.corpus`
(the corpus compiled once into tuples and static columns) and
:mod:`~reviewlab.engines.censoring` (Kaplan–Meier imputation shared with the
vectorized engine).
"""

from reviewlab.engines.censoring import KaplanMeier, effective_observation, impute_durations
from reviewlab.engines.twin.bounds import BoundResolver
from reviewlab.engines.twin.engine import simulate
from reviewlab.engines.twin.pool import (
    SLOT_STATES,
    SLOT_TIMELINE_COLUMNS,
    SlotPool,
    SlotTimeline,
    WorkerPool,
)

__all__ = [
    "SLOT_STATES",
    "SLOT_TIMELINE_COLUMNS",
    "BoundResolver",
    "KaplanMeier",
    "SlotPool",
    "SlotTimeline",
    "WorkerPool",
    "effective_observation",
    "impute_durations",
    "simulate",
]
