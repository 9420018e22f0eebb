"""A replay's decisions as the settling hands them to an evaluation: whole, or as changes.

Lifecycle: the dense settling and the pre-fix replay give :class:`Decisions` (every array whole);
the sparse path gives :class:`Sparse` parts (what differs from the static replay, with the exact
counts and sums of its summary). Either becomes one
:class:`~reviewlab.engines.vectorized._evaluation.Evaluation`, which builds the whole arrays of a
sparse replay on first read.

Invariants: per-call arrays are in corpus order (episode order, then call order), per-episode
ones in episode order, per-round ones over the rounds with calls; nothing here is written once
made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sparse:
    """One bounded replay kept as its changes to the static replay (the sparse path of
    :mod:`reviewlab.engines.vectorized._settle`), with the exact counts and sums of its summary.

    A call's bound is ``static[call_keys[call]]``, else its deadline-pass decision (``dl()``
    gives ``(bound, by_deadline, abandoned)`` per ``corpus.dl_calls``; ``None``: no deadline
    pass),
    else, in a settled episode, its settled decision (``calls``, ``bound``, ``by_deadline``).
    Abandoned are exactly the calls ``hit`` (ascending), with ``zombie_hit`` seconds; the
    silences of ``rounds`` are ``round_silence``; the credited lines of the reads at ``reads``
    (positions in ``corpus.read_calls``) are ``credited``. Everything else is the static
    replay's.
    """

    static: np.ndarray
    call_keys: np.ndarray
    dl: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]] | None
    calls: np.ndarray
    bound: np.ndarray
    by_deadline: np.ndarray
    hit: np.ndarray
    zombie_hit: np.ndarray
    rounds: np.ndarray
    round_silence: np.ndarray
    reads: np.ndarray
    credited: np.ndarray
    by_deadline_count: int
    credited_sum: int
    timeout_lost_sum: int
    silence_max: float | None


@dataclass(frozen=True)
class Decisions:
    """One replay's decisions given whole, as arrays: the dense settling's and the pre-fix
    replay's (the sparse path gives :class:`Sparse` parts, built into these on first read)."""

    bound: np.ndarray
    """Per call, its bound (NaN: unbounded or never started)."""
    by_deadline: np.ndarray
    """Per call, whether the deadline set its bound."""
    abandoned: np.ndarray
    """Per call, whether it was abandoned at its bound."""
    zombie: np.ndarray
    """Per call, how long its loose worker ran on after the bound (``inf``: never returned)."""
    credited: np.ndarray
    """Per call of ``corpus.read_calls``, its credited lines."""
    wall: np.ndarray
    """Per episode (corpus order), its wall time."""
    round_silence: np.ndarray
    """Per round with calls (corpus order), its silence."""
    by_idle: np.ndarray | None = None
    """Per call, whether its idle timeout fired (``None``: no idle timeout fired at all)."""
