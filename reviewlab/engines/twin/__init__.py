"""The SimPy twin of the bounded executor and the reviewer pool.

The twin replays recorded episodes on virtual time with the SAME decision core as the real
executor (bounds, fates, crediting, frames and summary from :mod:`reviewlab.core`); only the
waiting differs. What it adds over a queueing library: zombies that keep a worker thread busy
after their caller abandoned them, reviewer slots that queue requests, and wedged calls as
right-censored observations.

Modules: ``engine`` (:func:`simulate`), ``model`` (the episode process), ``pool`` (slots,
worker threads, timelines), ``bounds`` (the exact bound cache), ``corpus`` (the corpus
compiled once into tuples and static columns).
"""

from reviewlab.core._vocab import SLOT_STATES
from reviewlab.engines._censoring import KaplanMeier, effective_observation, impute_durations
from reviewlab.engines.twin._bounds import BoundResolver
from reviewlab.engines.twin._engine import simulate
from reviewlab.engines.twin._pool import SLOT_TIMELINE_COLUMNS, SlotPool, SlotTimeline, WorkerPool

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
