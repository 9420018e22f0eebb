"""``engine="real"``: replay recorded episodes through the real :class:`ReviewEpisode` and
:class:`BoundedExecutor`, under a clock that scales time.

Each recorded episode runs, on its own thread, as a real episode under one
:class:`~reviewlab.core.deadline.ScaledClock` whose second lasts ``time_scale`` real seconds
(SimPy's ``RealtimeEnvironment(factor)``). The clock is the ONE place time is scaled: every
wait (a send, a tool, a bound, a hedge delay, an idle timeout, a breaker cool-down, a slot's
arrival) is in recorded seconds and converted by the clock, and every time measured on
:func:`~reviewlab.core.deadline.monotonic_now` (durations, dispatch times, zombie seconds, the
time left before a deadline) comes out in recorded seconds. The :class:`~reviewlab.core.policy.
Policy` is replayed as it is: nothing wraps or scales it.

* a :class:`~reviewlab.engines.real._actors.ReplayModel` answers the n-th send with the n-th
  recorded round's calls after waiting its ``send_sec``; the last send is a final answer;
* a :class:`~reviewlab.engines.real._actors.ReplayRegistry` runs each call until its
  effective recorded duration after its dispatch, reporting progress at its recorded
  progress times (so the policy's ``idle_sec`` part fires as in the twin: only calls with
  recorded progress get an idle timeout), stamps the reader view with the recorded extent for
  a read (after the wait, as the real reader stamps after rendering), and raises for a call
  recorded as a tool error. A censored call under ``censored="wedge"`` blocks until the run
  ends and releases it; under ``"impute"`` it returns at its imputed time (the same seeded
  draws as the twin's, :func:`~reviewlab.engines.censoring.completion_times`);
* the inherited deadline is an ``execution_deadline_scope`` ending ``deadline_sec`` after the
  episode starts; a deadline window within the clamp's jitter allowance of the tool timeout
  is a tie and counts as the tool timeout, as in every engine.

Calls are named by their corpus row in their tool-call id (``c{row}``; a re-issue
``r{row}``), which the executor puts on the call's notes: the policy sees the recorded
arguments only.

The pre-fix ``unbounded`` narrowing and a call that never returns (a censored
call under ``censored="wedge"``): the real loop would wait on it forever, which
no finite run can show. The registry stops the episode at that call at once
(the rest of the calls of that round return at once, the model answers its
next send with a final answer) and the engine records what the wait would be:
an infinite wait, wall time and silence, the later calls ``withheld`` and
"started" at ``inf`` — as in the twin.

The frames are the twin's (:data:`~reviewlab.core.metrics.CALL_COLUMNS`), measured:
``duration_sec`` is the measured duration of a call that returned or raised (for an abandoned
one whose worker came back: measured wait + zombie time; still censored: as recorded);
``zombie_sec`` is measured when the loose worker returned before the run ended (waiting at
most ``settle_sec`` real seconds for it), else the recorded ``duration - bound``, and ``inf``
for a wedge. The timing columns (:data:`~reviewlab.core.metrics.CALL_TIMING_COLUMNS`) are
measured too: ``start_sec`` is the call's dispatch minus the episode's start, ``wait_sec`` the
measured wait (for a withheld call: 0, starting when the episode withheld it). Real runs carry
scheduling noise: calls whose duration lies within a few milliseconds (real) of their bound
can go either way, which the differential test accounts for.

Hedged calls: the replay's one :class:`~reviewlab.engines.censoring.HedgePlan` (the twin's
and the vectorized engine's, decided once from the corpus as recorded) is handed to the
executor as data, its hedge admission (:class:`~reviewlab.engines.real._actors.PlannedHedges`):
a planned call that has gone ``after_sec`` unanswered gets a second REAL attempt, which the
registry runs for the plan's ``d2`` (blocking until the run ends when ``d2`` is infinite); the
first answer wins and the loser is a loose worker of the real ledger. The frame's ``hedged`` is
what the executor really did; each loose attempt's zombie time is measured when it came back
before the run ended, else its planned remainder. The plan is by corpus row, so under every
reaction a rewritten episode hedges the calls the recording's plan named and a re-issued copy
never hedges, as in the other engines (:meth:`HedgePlan.carried
<reviewlab.engines.censoring.HedgePlan.carried>`).

The breaker (the policy's ``breaker`` part) is the real episode's own: a fresh state per
episode, or, for a slot-scoped rule, one shared :class:`~reviewlab.core.breaker.BreakerState`
per slot (``Episode.slot``; ``""`` is a slot of its own), whose episodes then run one after
another in start order (arrival, then corpus order) — each starting no earlier than its
arrival when the cool-down is in seconds, so the slot's clock is the corpus clock the other
engines read. A withheld call's row is the twin's: no bound, wait 0, ``start_sec`` the moment
the episode withheld it.

Not replayed: a recorded server's time-to-stop after a cancellation (``cancel_honoured_sec``,
which the twin uses to shorten a zombie): a thread tool cannot be cancelled, so a zombie here
runs its recorded time.
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
