"""One bounded vectorized replay: static pass, deadline pass, settling to the fixed point.

Lifecycle: :meth:`reviewlab.engines.vectorized.CompiledCorpus.evaluate` calls
:func:`evaluate_bounded` once per policy point: it resolves the policy for the corpus
(:func:`resolve_tables`), decides every call on the static clock, re-decides the calls of
episodes with a deadline from the static time left, settles (:func:`settle`) the few episodes
whose static clock was wrong, and hands the decisions to
:mod:`~reviewlab.engines.vectorized._finish`.

Invariants: each settling iteration fixes at least one more event of a block; a block's clock
is ``cumsum`` down a column, one addition per event in order (the twin's ``t += x``); bounds,
clamps, fates and credits come only from the shared rules. docs/architecture.md, "The
vectorized engine".
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from reviewlab.core._crediting import abandons_array
from reviewlab.core._policy import Policy
from reviewlab.engines.vectorized._evaluation import Evaluation
from reviewlab.engines.vectorized._finish import finish, finish_sparse
from reviewlab.engines.vectorized._tables import Tables, idle_fire, kept_tables, with_idle

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized` (its package imports this module,
so naming it here would close an import cycle)."""


class Settled(NamedTuple):
    """The settled episodes: their sorted rows, block clock (row ``j``: before event ``j``) and
    waits, and the decisions of their calls (``calls`` in block order, with their bounds,
    deadline flags, fates and idle flags — ``None`` without idle timeouts)."""

    rows: np.ndarray
    clock: np.ndarray
    wait: np.ndarray
    calls: np.ndarray
    bound: np.ndarray
    by_deadline: np.ndarray
    abandoned: np.ndarray
    by_idle: np.ndarray | None


def evaluate_bounded(c: CompiledCorpus, policy: Policy) -> Evaluation:
    """Replay ``c`` under a ``policy`` with a bounded narrowing: static pass, deadline pass,
    settling, then :func:`~reviewlab.engines.vectorized._finish.finish`.

    A policy resolved per corpus key, without idle timeouts, takes the sparse path
    (:func:`_evaluate_sparse`: nothing of size "every call" per point but the zombie
    seconds); any other the dense one, here.
    """
    tables = kept_tables(c, policy)
    fire = idle_fire(c, policy)
    if fire is None and tables.keyed:
        return _evaluate_sparse(c, tables)
    bound = tables.static.take(tables.call_keys)
    by_deadline = np.zeros(c.calls, dtype=bool)
    by_idle = None
    if fire is not None:
        bound, by_deadline, by_idle = with_idle(bound, by_deadline, fire)
    abandoned = abandons_array(c.duration_sec, c.completed, bound)
    unsettled = c.call_row[abandoned]  # the static clock is wrong after an abandoned call
    if tables.reads_clock and c.dl_calls.size:
        dl = c.dl_calls
        sec, by, idle, ab, wait = tables.step(
            tables.dl_keys,
            c.dl_duration,
            c.dl_completed,
            c.dl_remaining,
            None if fire is None else fire[dl],
        )
        bound[dl], by_deadline[dl], abandoned[dl] = sec, by, ab
        if by_idle is not None:
            by_idle[dl] = idle
        # Exact wherever every wait of the episode is its duration; the rest is settled below.
        unsettled = np.concatenate([c.call_row[abandoned], c.dl_row[wait != c.dl_duration]])

    def guess(calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return bound[calls], abandoned[calls]

    blocks = []
    for rows in _blocks(c, unsettled):
        block = settle(c, tables, rows, guess, fire)
        calls = block.calls
        bound[calls], by_deadline[calls], abandoned[calls] = (
            block.bound,
            block.by_deadline,
            block.abandoned,
        )
        if by_idle is not None and block.by_idle is not None:
            by_idle[calls] = block.by_idle
        blocks.append(block)
    return finish(c, bound, by_deadline, abandoned, blocks, by_idle)


SMALL_BLOCK = 65_536
"""Cells (events × episodes) a settling block may hold whatever its padding: below this a
block's fixed cost (a few dozen array operations) outweighs the padded cells."""


def _blocks(c: CompiledCorpus, unsettled: np.ndarray) -> list[np.ndarray]:
    """The sorted rows of the episodes to settle, in blocks of rows at most twice as long as
    each other (little padding), or of at most :data:`SMALL_BLOCK` cells."""
    marked = np.zeros(c.event_count.size, dtype=bool)  # a mask, not np.unique: no sort per point
    marked[unsettled] = True
    rows = np.flatnonzero(marked)
    counts = c.event_count[rows]  # non-increasing: rows ascend
    out, i = [], 0
    while i < rows.size:
        j = max(i + 1, int(np.searchsorted(-counts, -(counts[i] // 2))))
        j = max(j, min(rows.size, i + SMALL_BLOCK // max(int(counts[i]), 1)))
        out.append(rows[i:j])
        i = j
    return out


def _static_hits(c: CompiledCorpus, static: np.ndarray) -> np.ndarray:
    """The calls abandoned under the static bounds (no deadline): per key, the calls whose
    threshold (duration; infinite if censored) passes the key's bound — usually a suffix of
    the sorted top of the key's calls (:meth:`CompiledCorpus._compile_keys`), found by one
    binary search, so the work is the number of keys and of hits, not of calls; a bound below
    that top scans the key's calls.

    The rule is :func:`~reviewlab.core._crediting.abandons_array`'s: a NaN bound never abandons;
    otherwise a censored call always is, a returned one when its duration exceeds the bound.
    """
    found = []
    offsets = c.key_offsets
    for key in range(offsets.size - 1):
        low, high = int(offsets[key]), int(offsets[key + 1])
        b = float(static[key])
        if low == high or np.isnan(b):
            continue
        top = int(c.key_sorted[key])
        if b < np.inf and b >= c.key_threshold[top]:
            # Every threshold before ``top`` is at most the one there: none passes ``b``.
            at = top + int(np.searchsorted(c.key_threshold[top:high], b, side="right"))
            if at < high:
                found.append(c.key_calls[at:high])
            continue
        # inf > b holds for every finite b; an infinite bound abandons only the censored calls.
        seg = c.key_threshold[low:high]
        passed = seg > b if b < np.inf else seg == np.inf
        found.append(c.key_calls[low:high][passed])
    return np.sort(np.concatenate(found)).astype(np.intp) if found else np.zeros(0, np.intp)


def _evaluate_sparse(c: CompiledCorpus, tables: Tables) -> Evaluation:
    """:func:`evaluate_bounded` for a keyed policy without idle timeouts, per point in time
    proportional to the keys and the settled episodes only.

    The same decisions as the dense path: every call abandoned by the static pass (or, in an
    episode with a deadline, by the deadline pass, :class:`_DeadlinePass`) marks its episode for
    settling; a call of an unmarked episode keeps its static (or deadline-pass) bound and is not
    abandoned; the settled episodes decide all their calls. The :class:`Evaluation` keeps those
    parts and builds a per-call array only when it is read.
    """
    hits = _static_hits(c, tables.static)
    deadline: _DeadlinePass | None = None
    if tables.reads_clock and c.dl_calls.size:
        deadline = _DeadlinePass(c, tables, hits)
        hits = np.concatenate([hits[~deadline.in_dl(hits)], deadline.hits])
    static = tables.static

    settled_by: list[int] = []  # deadline-pass deadline bounds among the settled calls

    def guess(calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bound = static.take(c.key_code[calls])
        if deadline is not None:
            inside = deadline.in_dl(calls)
            bound[inside] = deadline.decide(calls[inside], settled_by)
        return bound, abandons_array(c.duration_sec[calls], c.completed[calls], bound)

    blocks = [settle(c, tables, rows, guess) for rows in _blocks(c, c.call_row[hits])]
    by_outside = None if deadline is None else deadline.by_count - sum(settled_by)
    return finish_sparse(c, tables, deadline, blocks, by_outside)


class _DeadlinePass:
    """The deadline pass of the sparse path: which deadline calls it abandons and how many bounds
    the deadline sets, without deciding every deadline call per point.

    A deadline call of key ``k`` gets ``narrow(v_k, rem)``: the window ``w`` (the narrowing of
    its static time left ``rem``, :meth:`Narrowing.narrow_array` of an infinite tool timeout)
    when ``w < v_k``, else ``v_k``; so it is abandoned exactly when ``v_k`` is not NaN and its
    threshold (duration; infinite if censored) passes ``v_k`` (a static hit) or ``w``. ``w``
    and the calls whose threshold passes it depend on the narrowing alone
    (:meth:`CompiledCorpus.deadline_windows`, kept across points). Which bounds the deadline
    set (exactly those whose window is shorter than ``v_k``) is
    :meth:`Narrowing.narrow_array` of ``v_k`` and the key's times left, counted per key
    (:meth:`~reviewlab.engines.vectorized.DeadlineWindows.deadline_bounds`). Keys
    the policy clamps (their ``v`` reads the clock) are decided call by call. Single calls are
    decided by the shared step itself (:meth:`decide`).
    """

    def __init__(self, c: CompiledCorpus, tables: Tables, static_hits: np.ndarray) -> None:
        self.c, self.step, self.keys = c, tables.step, tables.dl_keys
        windows = c.deadline_windows(self.step.narrowing)
        tool_sec = self.step.tool_sec
        clamps = self.step.clamps
        clamped = np.zeros(tool_sec.size, dtype=bool) if clamps is None else clamps
        bounded = ~np.isnan(tool_sec) & ~clamped  # keys decided by v and w alone
        by_count = 0
        found = [static_hits[self.in_dl(static_hits) & bounded[c.key_code[static_hits]]]]
        over = windows.over[bounded[self.keys[windows.over]]]
        found.append(c.dl_calls[over])
        offsets = windows.key_offsets
        for key in range(offsets.size - 1):
            low, high = int(offsets[key]), int(offsets[key + 1])
            if low == high or np.isnan(tool_sec[key]):
                continue
            if clamped[key]:
                positions = windows.key_order[low:high]
                _, by, _, ab, _ = self.step(
                    self.keys[positions],
                    c.dl_duration[positions],
                    c.dl_completed[positions],
                    c.dl_remaining[positions],
                )
                by_count += int(np.count_nonzero(by))
                found.append(c.dl_calls[positions[ab]])
                continue
            # The shared rule says which of the key's bounds the deadline set (exactly).
            by_count += windows.deadline_bounds(key, float(tool_sec[key]))
        self.hits = np.unique(np.concatenate(found)).astype(np.intp)
        self.by_count = by_count
        """How many deadline calls the deadline pass bounds by the deadline."""

    def in_dl(self, calls: np.ndarray) -> np.ndarray:
        """Whether each call is in an episode with a deadline."""
        return ~np.isnan(self.c.deadline_at_sec[self.c.episode_index[calls]])

    def positions(self, calls: np.ndarray) -> np.ndarray:
        """The positions of deadline calls in ``c.dl_calls``."""
        c = self.c
        return c.dl_start[c.episode_index[calls]] + (c.call_column[calls] - c.round[calls])

    def decide(self, calls: np.ndarray, by: list[int] | None = None) -> np.ndarray:
        """The deadline pass's bounds of deadline ``calls`` (the shared step on just them);
        ``by`` collects how many of them the deadline bounds."""
        at = self.positions(calls)
        sec, by_deadline, _, _, _ = self.step(
            self.keys[at], self.c.dl_duration[at], self.c.dl_completed[at], self.c.dl_remaining[at]
        )
        if by is not None:
            by.append(int(np.count_nonzero(by_deadline)))
        return sec

    def full(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(bound, by_deadline, abandoned)`` of every deadline call (for the frames)."""
        c = self.c
        sec, by, _, ab, _ = self.step(self.keys, c.dl_duration, c.dl_completed, c.dl_remaining)
        return sec, by, ab


def settle(
    c: CompiledCorpus,
    tables: Tables,
    rows: np.ndarray,
    guess: Any,
    fire: np.ndarray | None = None,
) -> Settled:
    """Replay the episodes of sorted ``rows`` exactly: iterate clock → bounds → waits to the fixed
    point.

    A block ``[event, episode]`` of their events, padded with the spare
    zero-length send; ``cumsum`` down a column is the twin's clock. ``guess(calls)`` gives
    the bounds and fates decided so far for the block's calls (the first guess of the
    waits; the fixed point does not depend on it, only the number of iterations does).
    Returns the clocks, the waits and the calls' bounds, deadline (and idle) flags and fates.
    ``fire``: per call, when its idle timeout fires (:func:`idle_fire`; ``None``: none does).
    """
    depth = int(c.event_count[rows[0]])  # rows ascend, so the first is the longest
    column = np.arange(depth)[:, None]
    block = np.where(column < c.event_count[rows], c.offsets[column] + rows, c.spare)
    call = c.event_call[block].astype(np.intp)
    is_call = call >= 0
    calls = call[is_call]
    duration = c.event_duration[block]
    completed = np.ones(block.shape, dtype=bool)
    completed[is_call] = c.completed[calls]
    keys = np.full(block.shape, tables.static.size - 1, dtype=np.intp)  # a send: the last key
    keys[is_call] = tables.call_keys[calls]
    start = c.arrival_sorted[rows]
    # A send has no time left (NaN), so nothing narrows its infinite bound; nor does a missing
    # deadline.
    deadline_at = np.where(is_call, c.deadline_at_sorted[rows], np.nan)
    bound0, abandoned0 = guess(calls)
    wait = duration.copy()  # first guess: the waits decided so far (exact up to each first change)
    wait[is_call] = np.where(abandoned0, bound0, duration[is_call])
    block_fire = None
    if fire is not None:
        block_fire = np.full(block.shape, np.nan)
        block_fire[is_call] = fire[calls]
    clock = np.cumsum(np.vstack([start, wait]), axis=0)
    sec, by, idle, ab, new = tables.step(
        keys, duration, completed, np.maximum(0.0, deadline_at - clock[:-1]), block_fire
    )
    todo = np.flatnonzero(
        (new != wait).any(axis=0)
    )  # an episode whose waits held is exact: it drops out
    wait = new
    for _ in range(depth + 1):
        if not todo.size:
            break
        w = wait[:, todo]
        t = np.cumsum(np.vstack([start[todo], w]), axis=0)
        s, b, i, a, new = tables.step(
            keys[:, todo],
            duration[:, todo],
            completed[:, todo],
            np.maximum(0.0, deadline_at[:, todo] - t[:-1]),
            None if block_fire is None else block_fire[:, todo],
        )
        clock[:, todo], sec[:, todo], by[:, todo], ab[:, todo], wait[:, todo] = t, s, b, a, new
        if idle is not None:
            idle[:, todo] = i
        todo = todo[(new != w).any(axis=0)]
    else:  # pragma: no cover - impossible: each iteration fixes at least one more event
        raise AssertionError("deadline settling did not reach its fixed point")
    return Settled(
        rows,
        clock,
        wait,
        calls,
        sec[is_call],
        by[is_call],
        ab[is_call],
        None if idle is None else idle[is_call],
    )
