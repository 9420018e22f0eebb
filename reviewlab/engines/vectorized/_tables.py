"""One policy resolved for a compiled corpus: the tables a vectorized replay reads.

Lifecycle: :func:`kept_tables` resolves a policy once per policy object (kept on the corpus for
the last :class:`~reviewlab.core._timeouts.TimeoutPolicy` replayed) into :class:`Tables`: the
key of every call, the static bound per key, and the :class:`DeadlineStep` that bounds a call
from the time it has left; :func:`idle_fire` and :func:`with_idle` apply idle timeouts.

Invariants: every bound comes from the shared rules (``resolve_bound``, the narrowing's
``narrow_array``, the rule's own clamp), resolved per corpus key only when that is exact (a
``TimeoutPolicy`` reads ``(tool, args_key)``); the last key is the model send's, never bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from reviewlab.core._crediting import abandons_array
from reviewlab.core._idle import idle_fire_sec
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy, resolve_bound, timeout_at
from reviewlab.core._rules import reads_clock

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized` (its package imports this module,
so naming it here would close an import cycle)."""

_NO_NARROWING = Narrowing("none")  # the bare tool timeout, through resolve_bound's validation
_READS_CLOCK = ("inherit", "reserve", "fraction")


class DeadlineStep:
    """A call's bound from the time left, by the shared rules: clamp (clamped keys), narrowing,
    fate, wait."""

    def __init__(
        self,
        policy: Policy,
        tool_sec: np.ndarray,
        clamps: np.ndarray | None,
        pairs: list[tuple[str, Any]] | None = None,
    ) -> None:
        self.timeouts: Any = policy.timeouts
        self.narrowing = policy.narrowing
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
            clamp_array = getattr(self.timeouts, "clamp_array", None)
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
                    flat_sec[i] = timeout_at(self.timeouts, None, tool, args, rem)
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

    The twin asks :func:`~reviewlab.core._idle.idle_fire_sec` with ``until = min(return,
    bound)``; asking once with ``until = return`` (:func:`idle_fire`) and keeping the fire
    only when it is below the bound gives the same answer, because a fire before the bound
    does not depend on the moments after it (``tests/engines/test_vectorized_remote.py`` checks the
    two forms against each other).
    """
    idle = fire < sec  # NaN: no fire, False
    return np.where(idle, fire, sec), by_deadline & ~idle, idle


def idle_fire(c: CompiledCorpus, policy: Policy) -> np.ndarray | None:
    """Per call, when its idle timeout fires on its recorded progress before it returns (NaN:
    it does not); ``None`` when no call of ``c`` has one under ``policy``.

    The idle timeout of a call is its tool's in the policy's ``idle_sec`` part
    (:meth:`~reviewlab.core._policy.Policy.idle_for`), as the twin asks it.
    """
    if not c.progress_calls.size or not policy.idle_sec:
        return None
    fire = np.full(c.calls, np.nan)
    any_fire = False
    for call, progress in zip(c.progress_calls.tolist(), c.progress_sec, strict=True):
        idle = policy.idle_for(str(c.tool_names[call]))
        if idle is None:
            continue
        until = float(c.duration_sec[call]) if c.completed[call] else np.inf
        at = idle_fire_sec(progress, idle, until)
        if at is not None:
            fire[call] = at
            any_fire = True
    return fire if any_fire else None


@dataclass(frozen=True)
class Tables:
    """One policy resolved for a corpus: keys per call / deadline call (a model send has the last
    key), static bounds, the clock step."""

    call_keys: np.ndarray
    dl_keys: np.ndarray
    static: np.ndarray
    step: DeadlineStep
    reads_clock: bool
    keyed: bool
    """Whether calls are resolved per corpus key (then the sparse static pass applies)."""


def resolve_tables(c: CompiledCorpus, policy: Policy) -> Tables:
    """The policy's tool timeouts (its ``timeouts`` part), per corpus key when that is exact,
    else per call.

    The corpus is keyed by ``(tool, TimeoutPolicy.args_key(args))``, the key a
    :class:`TimeoutPolicy` reads: one is resolved once per key. Any other rule may read
    anything (the twin asks it call by call, or by its own ``args_key``), so each call is its
    own key. Which calls read the clock is the rule's own answer
    (:func:`~reviewlab.core._rules.reads_clock`; never, for a rule that does not say). The last
    key is the model send's.
    """
    timeouts = policy.timeouts
    keyed = isinstance(timeouts, TimeoutPolicy)
    if keyed:
        pairs = list(zip(c.key_tools, c.key_args, strict=True))
        call_keys, dl_keys = c.key_code, c.dl_key
    else:
        pairs = list(zip(c.tool_names.tolist(), c.call_args, strict=True))
        call_keys, dl_keys = np.arange(c.calls), c.dl_calls
    clamps = np.array([reads_clock(timeouts, None, t, a) for t, a in pairs] + [False])
    bare = policy.replace(narrowing=_NO_NARROWING)  # the tool timeout, validated
    raw = [resolve_bound(bare, None, t, a, remaining_sec=None).sec for t, a in pairs]
    tool_sec = np.array([*raw, np.inf], dtype=float)
    narrowing = policy.narrowing
    static, _ = narrowing.narrow_array(tool_sec, np.full(tool_sec.size, np.nan))  # no deadline
    clamped = bool(clamps.take(dl_keys).any()) if dl_keys.size else False
    step = DeadlineStep(policy, tool_sec, clamps if clamped else None, pairs)
    return Tables(
        call_keys,
        dl_keys,
        static,
        step,
        narrowing.mode in _READS_CLOCK or clamped,
        keyed,
    )


def kept_tables(c: CompiledCorpus, policy: Policy) -> Tables:
    """:func:`resolve_tables` of ``policy``, kept on the corpus for the last policy object of a
    :class:`TimeoutPolicy` (frozen, so the tables are a function of the object): replaying the
    same policy again resolves nothing. Another rule may read anything and is resolved anew."""
    if not isinstance(policy.timeouts, TimeoutPolicy):
        return resolve_tables(c, policy)
    kept = c.__dict__.get("_kept_tables")
    if kept is not None and kept[0] is policy:
        return kept[1]  # type: ignore[no-any-return]
    tables = resolve_tables(c, policy)
    c.__dict__["_kept_tables"] = (policy, tables)  # one assignment: threads may replay at once
    return tables
