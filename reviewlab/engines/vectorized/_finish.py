"""The end of one bounded vectorized replay: from the settled decisions to an
:class:`~reviewlab.engines.vectorized._evaluation.Evaluation`.

Lifecycle: :func:`~reviewlab.engines.vectorized._settle.evaluate_bounded` decides every call
(static pass, deadline pass, settling) and hands the decisions here once: :func:`finish` (the
dense path: per-call arrays) or :func:`finish_sparse` (the sparse path: the changes to the
static replay, with the exact counts and sums its summary reads).

Invariants: every abandoned call is in a settled episode, so zombies, loose workers, clocks,
silences and credits change only there; the credits follow the sticky rule
(:meth:`~reviewlab.core._crediting.Crediting.credited_lines_array`) and the loose-worker peak is
:func:`~reviewlab.core._metrics.peak_overlap` of the twin's intervals.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reviewlab.core import _metrics as metrics
from reviewlab.core._crediting import Crediting
from reviewlab.engines.vectorized._evaluation import Decisions, Evaluation, Sparse

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized._compiled` (which imports the settling,
which imports this module: naming it here would close an import cycle)."""
Settled = Any
"""A :class:`~reviewlab.engines.vectorized._settle.Settled` block (settle imports this module)."""


def finish(
    c: CompiledCorpus,
    bound: np.ndarray,
    by_deadline: np.ndarray,
    abandoned: np.ndarray,
    blocks: list[Settled],
    by_idle: np.ndarray | None = None,
) -> Evaluation:
    """Zombies, loose workers, credits, wall times and silences from the settled decisions."""
    hit = np.flatnonzero(abandoned)  # every abandoned call is in a settled episode
    hit_bound = bound[hit]
    zombie_hit = _zombies(c, hit, hit_bound)
    zombie = np.zeros(c.calls)
    zombie[hit] = zombie_hit
    changes, rounds, round_silence, peak = _settled_clocks(c, hit, hit_bound, zombie_hit, blocks)
    wall = c.walls_with(*changes)
    silence = c.static_silence
    if rounds.size:
        silence = silence.copy()
        silence[rounds] = round_silence
    credited = c.static_credited
    if hit.size:
        reads, new, _ = _credits(c, hit)
        credited = credited.copy()
        credited[reads] = new
    decisions = Decisions(
        bound, by_deadline, abandoned, zombie, credited, wall, silence, by_idle=by_idle
    )
    return Evaluation(
        c, decisions=decisions, peak_loose_workers=peak, unbounded=False, settled=blocks
    )


def finish_sparse(
    c: CompiledCorpus,
    tables: Any,
    deadline: Any,
    blocks: list[Settled],
    by_outside: int | None,
) -> Evaluation:
    """:func:`finish` of the sparse path: the same zombies, clocks, silences and credits, kept
    as the changes to the static replay (:class:`~reviewlab.engines.vectorized._evaluation.Sparse`)
    with the exact counts and integer sums the summary reads. ``by_outside``: how many
    deadline calls outside the settled episodes the deadline pass bounds by the deadline."""
    empty_f, empty_i = np.zeros(0), np.zeros(0, dtype=np.intp)
    calls = np.concatenate([b.calls for b in blocks]) if blocks else empty_i
    bound = np.concatenate([b.bound for b in blocks]) if blocks else empty_f
    by = np.concatenate([b.by_deadline for b in blocks]) if blocks else np.zeros(0, dtype=bool)
    ab = np.concatenate([b.abandoned for b in blocks]) if blocks else np.zeros(0, dtype=bool)
    picked = np.flatnonzero(ab)
    order = np.argsort(calls[picked], kind="stable")
    hit, hit_bound = calls[picked][order], bound[picked][order]
    zombie_hit = _zombies(c, hit, hit_bound)
    wall, rounds, round_silence, peak = _settled_clocks(c, hit, hit_bound, zombie_hit, blocks)
    # Outside the settled episodes a deadline call keeps its deadline-pass decision.
    n_by = int(np.count_nonzero(by)) + (by_outside or 0)
    credited_sum, lost_sum = c.credited_total, c.timeout_lost_total
    reads, new, read_abandoned = (empty_i, empty_i, np.zeros(0, dtype=bool))
    if hit.size:
        reads, new, read_abandoned = _credits(c, hit)
        requested = c.read_requested[reads]
        executed = ~(read_abandoned | c.read_error[reads])
        old = c.static_credited[reads]
        old_lost = np.where(~c.read_error[reads], requested - old, 0)
        new_lost = metrics.timeout_lost_lines(requested, new, read_abandoned, executed)
        credited_sum += int(new.sum()) - int(old.sum())
        lost_sum += int(new_lost.sum()) - int(old_lost.sum())
    parts = Sparse(
        static=tables.static,
        call_keys=tables.call_keys,
        dl=None if deadline is None else deadline.full,
        calls=calls,
        bound=bound,
        by_deadline=by,
        hit=hit,
        zombie_hit=zombie_hit,
        rounds=rounds,
        round_silence=round_silence,
        reads=reads,
        credited=new,
        by_deadline_count=n_by,
        credited_sum=credited_sum,
        timeout_lost_sum=lost_sum,
        silence_max=_silence_max(c, rounds, round_silence),
    )
    return Evaluation.sparse(c, parts, wall_changes=wall, peak_loose_workers=peak, settled=blocks)


def _zombies(c: CompiledCorpus, hit: np.ndarray, hit_bound: np.ndarray) -> np.ndarray:
    """The zombie seconds of the abandoned calls ``hit`` (ascending) at their bounds."""
    zombie_hit = np.where(c.completed[hit], c.duration_sec[hit] - hit_bound, np.inf)
    if c.honoured_calls.size and hit.size:
        _stop_when_honoured(c, hit, hit_bound, zombie_hit)
    return zombie_hit


def _settled_clocks(
    c: CompiledCorpus,
    hit: np.ndarray,
    hit_bound: np.ndarray,
    zombie_hit: np.ndarray,
    blocks: list[Settled],
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray, int]:
    """From the settled blocks: the settled episodes (corpus positions) and their wall times
    (every other episode keeps its static one), the rounds whose silence changed (those with an
    abandoned call) with their silences, and the peak of loose workers."""
    peak = 0
    changed: list[np.ndarray] = []
    walls: list[np.ndarray] = []
    rounds_out: list[np.ndarray] = []
    silences: list[np.ndarray] = []
    if blocks:
        starts, ends = [], []
        hit_row = c.call_row[hit]
        hit_rounds = _distinct_sorted(c.call_round[hit])
        for rows, clock, wait, *_ in blocks:
            changed.append(c.events.order[rows])
            walls.append(clock[-1] - c.arrival_sorted[rows])
            mine = (hit_row >= rows[0]) & (
                hit_row <= rows[-1]
            )  # a block is a run of the settled rows
            here = hit[mine]
            loose = zombie_hit[mine] != 0  # the twin records a loose worker only while it runs
            at = np.searchsorted(rows, hit_row[mine])
            start = clock[c.call_column[here], at][loose] + hit_bound[mine][loose]
            starts.append(start)
            ends.append(start + zombie_hit[mine][loose])
            rounds = hit_rounds[
                (c.round_row[hit_rounds] >= rows[0]) & (c.round_row[hit_rounds] <= rows[-1])
            ]
            size = c.round_size[rounds]
            j = np.arange(int(size.max(initial=1)))[:, None]
            waits = wait[
                c.round_column[rounds] + np.minimum(j, size - 1),
                np.searchsorted(rows, c.round_row[rounds]),
            ]
            rounds_out.append(rounds)
            silences.append(np.cumsum(np.where(j < size, waits, 0.0), axis=0)[-1])
        peak = metrics.peak_overlap(np.concatenate(starts), np.concatenate(ends))
    wall = (
        (np.concatenate(changed), np.concatenate(walls))
        if changed
        else (np.zeros(0, dtype=np.intp), np.zeros(0))
    )
    if not rounds_out:
        return wall, np.zeros(0, dtype=np.intp), np.zeros(0), peak
    return wall, np.concatenate(rounds_out), np.concatenate(silences), peak


def _credits(c: CompiledCorpus, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reads of the episodes with an abandoned call (``hit``, ascending): their positions in
    ``c.read_calls``, their credited lines under the sticky rule, and whether each was
    abandoned. Only these can differ from the static credits."""
    at_first = np.flatnonzero(_first_of_runs(c.episode_index[hit]))
    episodes = c.episode_index[hit[at_first]]
    first, last = c.read_first[episodes], c.read_first[episodes + 1]
    size = last - first
    reads = np.repeat(first - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
    calls = c.read_calls[reads]
    at = np.minimum(np.searchsorted(hit, calls), hit.size - 1)
    read_abandoned = hit[at] == calls
    executed = ~(read_abandoned | c.read_error[reads])
    first_abandoned = np.repeat(hit[at_first], size)  # hit ascends: the episode's first abandoned
    credited = Crediting.credited_lines_array(
        executed, first_abandoned < calls, c.read_requested[reads]
    )
    return reads, credited, read_abandoned


def _silence_max(c: CompiledCorpus, rounds: np.ndarray, silence: np.ndarray) -> float | None:
    """The longest round silence when ``rounds`` (distinct) have ``silence`` and every other
    round its static one; ``None`` when the corpus has no round with calls.

    The longest static silence not among ``rounds`` is among the ``rounds.size + 1`` longest
    (:meth:`CompiledCorpus.longest_silences`)."""
    if not c.static_silence.size:
        return None
    best = float(silence.max()) if silence.size else -np.inf
    top = c.longest_silences(rounds.size + 1)
    if rounds.size:
        changed = np.sort(rounds)
        at = np.minimum(np.searchsorted(changed, top), changed.size - 1)
        top = top[changed[at] != top]
    return max(best, float(c.static_silence[top[0]])) if top.size else best


def _stop_when_honoured(
    c: CompiledCorpus, hit: np.ndarray, bound: np.ndarray, zombie: np.ndarray
) -> None:
    """The zombies of abandoned calls whose server was seen stopping ``h`` seconds after a
    cancel: it stops ``h`` after this cancel (at the bound; strictly after it), or when it
    returns if sooner — the twin's rule, in place on ``zombie``."""
    at = np.searchsorted(c.honoured_calls, hit)
    found = at < c.honoured_calls.size
    found[found] = c.honoured_calls[at[found]] == hit[found]
    mine = np.flatnonzero(found)
    b = bound[mine]
    stop = np.maximum(b + c.honoured_sec[at[mine]], np.nextafter(b, np.inf))
    calls = hit[mine]
    ends = np.where(c.completed[calls], np.minimum(c.duration_sec[calls], stop), stop)
    zombie[mine] = ends - b


def _first_of_runs(values: np.ndarray) -> np.ndarray:
    """Where each run of equal ``values`` starts (``values`` non-decreasing, as corpus-order indices
    of ``hit``)."""
    first = np.ones(values.size, dtype=bool)
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return first


def _distinct_sorted(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of non-decreasing ``values`` without its sort."""
    return values[_first_of_runs(values)]
