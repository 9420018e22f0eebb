"""One bounded vectorized replay: static pass, deadline pass, settling to the fixed point.

Lifecycle: :meth:`reviewlab.engines.vectorized.CompiledCorpus.evaluate` calls
:func:`evaluate_bounded` once per policy point (the unbounded replay needs
none of this). It resolves the policy for the corpus (:func:`resolve_tables`),
decides every call on the static clock, re-decides the calls of episodes with
a deadline from the static time left, then settles (:func:`settle`) the few
episodes whose static clock was wrong, and builds the
:class:`~reviewlab.engines.vectorized.evaluation.Evaluation` (:func:`finish`).

Invariants:

* an event's wait depends only on earlier waits, so each settling iteration
  fixes at least one more event of a block: the loop ends within the block's
  depth (in practice after two or three);
* a block's clock is ``cumsum`` down a column of ``[start, wait, ...]``, one
  addition per event in order: the twin's ``t += x``, so every float is the
  twin's;
* bounds, clamps, fates and credits come only from the shared rules
  (:func:`~reviewlab.core.policy.resolve_bound`, :meth:`TimeoutPolicy.clamp_array`,
  :meth:`Narrowing.narrow_array`, :func:`~reviewlab.core.receipts.abandons_array`,
  :meth:`~reviewlab.core.receipts.Crediting.credited_lines_array`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from reviewlab.core import metrics
from reviewlab.core.crediting import Crediting, abandons_array
from reviewlab.core.idle import idle_fire_sec, resolve_idle
from reviewlab.core.policy import (
    Narrowing,
    SupportsTimeoutFor,
    TimeoutPolicy,
    is_clock_aware,
    reads_clock,
    resolve_bound,
    timeout_at,
)
from reviewlab.engines.vectorized.evaluation import Evaluation

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized` (its package imports this module,
so naming it here would close an import cycle)."""

__all__ = [
    "Settled",
    "evaluate_bounded",
    "finish",
    "idle_fire",
    "resolve_tables",
    "settle",
    "with_idle",
]

_NO_NARROWING = Narrowing("none")  # the bare tool timeout, through resolve_bound's validation
_READS_CLOCK = ("inherit", "reserve", "fraction")


class _DeadlineStep:
    """A call's bound from the time left, by the shared rules: clamp (clamped keys), narrowing,
    fate, wait."""

    def __init__(
        self,
        policy: SupportsTimeoutFor,
        narrowing: Narrowing,
        tool_sec: np.ndarray,
        clamps: np.ndarray | None,
        pairs: list[tuple[str, Any]] | None = None,
    ) -> None:
        self.policy = policy
        self.narrowing = narrowing
        self.tool_sec = tool_sec
        self.clamps = clamps
        self.pairs = pairs
        """``(tool, args)`` per key, for a policy that reads the clock call by call."""

    def __call__(
        self,
        keys: np.ndarray,
        duration: np.ndarray,
        completed: np.ndarray,
        remaining: np.ndarray,
        fire: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
        """``(bound, by_deadline, by_idle, abandoned, wait)`` (NaN ``remaining``: no deadline).

        ``fire``: when each call's idle timeout fires before it returns (NaN: never, or no idle
        timeout; :func:`idle_fire`); ``by_idle`` is ``None`` without it.
        """
        sec = self.tool_sec.take(keys)
        if self.clamps is not None:
            reading = self.clamps.take(keys)
            clamp_array = getattr(self.policy, "clamp_array", None)
            if clamp_array is not None:
                # TimeoutPolicy's clock-reading step, element-wise (its scalar rule, vectorized).
                sec = np.where(reading, clamp_array(sec, remaining), sec)
            else:
                sec = sec.copy()
                assert self.pairs is not None
                # Element by element on flat views (a settling block is two-dimensional).
                flat_sec, flat_keys = sec.reshape(-1), keys.reshape(-1)
                flat_remaining = np.broadcast_to(remaining, keys.shape).reshape(-1)
                for i in np.flatnonzero(reading):
                    tool, args = self.pairs[int(flat_keys[i])]
                    left = flat_remaining[i]
                    rem = None if np.isnan(left) else float(left)
                    flat_sec[i] = timeout_at(self.policy, None, tool, args, rem)
        sec, by = self.narrowing.narrow_array(sec, remaining)
        idle = None
        if fire is not None:
            sec, by, idle = with_idle(sec, by, fire)
        abandoned = abandons_array(duration, completed, sec)
        wait = duration.copy()  # an abandoned call waits its bound
        np.copyto(wait, sec, where=abandoned)
        return sec, by, idle, abandoned, wait


def with_idle(
    sec: np.ndarray, by_deadline: np.ndarray, fire: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bounds once idle timeouts are applied: where a call's idle fire (on its recorded
    progress) comes before its hard bound, the fire is its bound and ``by`` is ``"idle"``.

    The twin asks :func:`~reviewlab.core.idle.idle_fire_sec` with ``until = min(return,
    bound)``; asking once with ``until = return`` (:func:`idle_fire`) and keeping the fire
    only when it is below the bound gives the same answer, because a fire before the bound
    does not depend on the moments after it (``tests/test_vectorized_remote.py`` checks the
    two forms against each other).
    """
    idle = fire < sec  # NaN: no fire, False
    return np.where(idle, fire, sec), by_deadline & ~idle, idle


def idle_fire(c: CompiledCorpus, policy: SupportsTimeoutFor) -> np.ndarray | None:
    """Per call, when its idle timeout fires on its recorded progress before it returns (NaN:
    it does not); ``None`` when no call of ``c`` has one under ``policy``.

    The idle timeout of a call is the policy's (:func:`~reviewlab.core.idle.resolve_idle`),
    asked with the call's tool and arguments, as the twin asks it.
    """
    if not c.progress_calls.size or getattr(policy, "idle_for", None) is None:
        return None
    fire = np.full(c.calls, np.nan)
    any_fire = False
    for call, progress in zip(c.progress_calls.tolist(), c.progress_sec, strict=True):
        idle = resolve_idle(policy, None, str(c.tool_names[call]), c.call_args[call])
        if idle is None:
            continue
        until = float(c.duration_sec[call]) if c.completed[call] else np.inf
        at = idle_fire_sec(progress, idle, until)
        if at is not None:
            fire[call] = at
            any_fire = True
    return fire if any_fire else None


@dataclass(frozen=True)
class _Tables:
    """One policy resolved for a corpus: keys per call / deadline call / event, static bounds, the
    clock step."""

    call_keys: np.ndarray
    dl_keys: np.ndarray
    event_keys: np.ndarray
    static: np.ndarray
    step: _DeadlineStep
    reads_clock: bool


class Settled(NamedTuple):
    """The settled episodes: their sorted rows, block clock (row ``j``: before event ``j``) and
    waits."""

    rows: np.ndarray
    clock: np.ndarray
    wait: np.ndarray


def resolve_tables(c: CompiledCorpus, policy: SupportsTimeoutFor, narrowing: Narrowing) -> _Tables:
    """The policy's tool timeouts, per corpus key when the policy allows it, else per call.

    The corpus is keyed by ``(tool, TimeoutPolicy.args_key(args))``: a
    :class:`~reviewlab.core.policy.ClockAwarePolicy` with that very ``args_key``
    is resolved once per key. Any other policy may read anything, so each call
    is its own key. Which calls read the clock is the policy's own answer
    (:func:`~reviewlab.core.policy.reads_clock`; never, for a policy that does
    not say). The last key is the model send's.
    """
    if is_clock_aware(policy) and getattr(policy, "args_key", None) is TimeoutPolicy.args_key:
        pairs = list(zip(c.key_tools, c.key_args, strict=True))
        call_keys, dl_keys, event_keys = c.key_code, c.dl_key, c.event_key
    else:
        pairs = list(zip(c.tool_names.tolist(), c.call_args, strict=True))
        call_keys, dl_keys = np.arange(c.calls), c.dl_calls
        event_keys = np.where(c.event_call >= 0, c.event_call, c.calls)
    clamps = np.array([reads_clock(policy, None, t, a) for t, a in pairs] + [False])
    raw = [
        resolve_bound(policy, None, t, a, narrowing=_NO_NARROWING, remaining_sec=None).sec
        for t, a in pairs
    ]
    tool_sec = np.array([*raw, np.inf], dtype=float)
    static, _ = narrowing.narrow_array(tool_sec, np.full(tool_sec.size, np.nan))  # no deadline
    clamped = bool(clamps.take(dl_keys).any()) if dl_keys.size else False
    step = _DeadlineStep(policy, narrowing, tool_sec, clamps if clamped else None, pairs)
    return _Tables(
        call_keys, dl_keys, event_keys, static, step, narrowing.mode in _READS_CLOCK or clamped
    )


def evaluate_bounded(
    c: CompiledCorpus, policy: SupportsTimeoutFor, narrowing: Narrowing
) -> Evaluation:
    """Replay ``c`` under a bounded ``narrowing``: static pass, deadline pass, settling, then
    :func:`finish`."""
    tables = resolve_tables(c, policy, narrowing)
    fire = idle_fire(c, policy)
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
    marked = np.zeros(c.event_count.size, dtype=bool)  # a mask, not np.unique: no sort per point
    marked[unsettled] = True
    rows = np.flatnonzero(marked)
    counts = c.event_count[rows]  # non-increasing: rows ascend
    blocks, i = [], 0
    while i < rows.size:  # blocks of rows at most twice as long as each other: little padding
        j = max(i + 1, int(np.searchsorted(-counts, -(counts[i] // 2))))
        blocks.append(settle(c, tables, rows[i:j], bound, by_deadline, abandoned, fire, by_idle))
        i = j
    return finish(c, bound, by_deadline, abandoned, blocks, by_idle)


def settle(
    c: CompiledCorpus,
    tables: _Tables,
    rows: np.ndarray,
    bound: np.ndarray,
    by_deadline: np.ndarray,
    abandoned: np.ndarray,
    fire: np.ndarray | None = None,
    by_idle: np.ndarray | None = None,
) -> Settled:
    """Replay the episodes of sorted ``rows`` exactly: iterate clock → bounds → waits to the fixed
    point.

    A block ``[event, episode]`` of their events, padded with the spare
    zero-length send; ``cumsum`` down a column is the twin's clock. Stores
    the calls' bounds, deadline (and idle) flags and fates; returns the clocks and waits.
    ``fire``: per call, when its idle timeout fires (:func:`idle_fire`; ``None``: none does).
    """
    depth = int(c.event_count[rows[0]])  # rows ascend, so the first is the longest
    column = np.arange(depth)[:, None]
    block = np.where(column < c.event_count[rows], c.offsets[column] + rows, c.spare)
    duration, completed = c.event_duration[block], c.event_completed[block]
    keys, call = tables.event_keys[block], c.event_call[block]
    is_call = call >= 0
    calls = call[is_call]
    start = c.arrival_sorted[rows]
    # A send has no time left (NaN), so nothing narrows its infinite bound; nor does a missing
    # deadline.
    deadline_at = np.where(is_call, c.deadline_at_sorted[rows], np.nan)
    wait = duration.copy()  # first guess: the waits decided so far (exact up to each first change)
    wait[is_call] = np.where(abandoned[calls], bound[calls], duration[is_call])
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
    bound[calls], by_deadline[calls], abandoned[calls] = sec[is_call], by[is_call], ab[is_call]
    if by_idle is not None and idle is not None:
        by_idle[calls] = idle[is_call]
    return Settled(rows, clock, wait)


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
    zombie_hit = np.where(c.completed[hit], c.duration_sec[hit] - bound[hit], np.inf)
    if c.honoured_calls.size and hit.size:
        _stop_when_honoured(c, hit, bound[hit], zombie_hit)
    zombie = np.zeros(c.calls)
    zombie[hit] = zombie_hit
    wall, silence, peak = c.static_wall, c.static_silence, 0
    if blocks:
        wall, silence = wall.copy(), silence.copy()
        starts, ends = [], []
        hit_row = c.call_row[hit]
        hit_rounds = _distinct_sorted(c.call_round[hit])
        for rows, clock, wait in blocks:
            wall[c.events.order[rows]] = clock[-1] - c.arrival_sorted[rows]
            mine = (hit_row >= rows[0]) & (
                hit_row <= rows[-1]
            )  # a block is a run of the settled rows
            here = hit[mine]
            loose = zombie_hit[mine] != 0  # the twin records a loose worker only while it runs
            at = np.searchsorted(rows, hit_row[mine])
            start = clock[c.call_column[here], at][loose] + bound[here][loose]
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
            silence[rounds] = np.cumsum(np.where(j < size, waits, 0.0), axis=0)[-1]
        peak = metrics.peak_overlap(np.concatenate(starts), np.concatenate(ends))
    credited = c.static_credited
    if hit.size:
        # Only reads in an episode with an abandoned call can differ from the static credits.
        at_first = np.flatnonzero(_first_of_runs(c.episode_index[hit]))
        episodes = c.episode_index[hit[at_first]]
        first, last = c.read_first[episodes], c.read_first[episodes + 1]
        size = last - first
        reads = np.repeat(first - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
        calls = c.read_calls[reads]
        executed = ~(abandoned[calls] | c.read_error[reads])
        first_abandoned = np.repeat(
            hit[at_first], size
        )  # hit ascends: the episode's first abandoned call
        credited = credited.copy()
        credited[reads] = Crediting.credited_lines_array(
            c.read_credits[reads], executed, first_abandoned < calls, c.read_requested[reads]
        )
    return Evaluation(
        c,
        bound=bound,
        by_deadline=by_deadline,
        abandoned=abandoned,
        zombie=zombie,
        credited=credited,
        wall=wall,
        round_silence=silence,
        peak_loose_workers=peak,
        unbounded=False,
        settled=blocks,
        by_idle=by_idle,
    )


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
