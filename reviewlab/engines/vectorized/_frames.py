"""A vectorized replay's answers beyond its summary: the call and episode frames, the per-tool
breakdown from the arrays, and the policy-independent pre-fix replay.

Lifecycle: :meth:`~reviewlab.engines.vectorized.CompiledCorpus.result` hands
:class:`~reviewlab.engines._result.FramesOnDemand` the closures :func:`frames` and
:func:`tool_breakdown`; they run when a caller first reads the frames or the breakdown.
Invariant: the frames hold exactly the twin's columns and dtypes
(:data:`~reviewlab.core._metrics.CALL_COLUMNS`,
:data:`~reviewlab.core._metrics.CALL_TIMING_COLUMNS`),
and the breakdown is :func:`~reviewlab.core._breakdown.breakdown` of the very arrays the frame
holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core import _metrics as metrics
from reviewlab.core._breakdown import BreakdownArrays, breakdown
from reviewlab.core._crediting import Crediting
from reviewlab.core._policy import Policy
from reviewlab.engines._result import EpisodeArrays, ReplayResult, assemble
from reviewlab.engines.vectorized._evaluation import (
    EXECUTED,
    GAP_BY_CODE,
    OUTCOME_BY_CODE,
    WITHHELD,
    Decisions,
    Evaluation,
)

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized._compiled` (which imports this module,
so naming it here would close an import cycle)."""


def frames(
    c: CompiledCorpus, ev: Evaluation, policy: Policy, assumptions: dict[str, Any]
) -> ReplayResult:
    """The replay ``ev`` with its frames, through :func:`~reviewlab.engines._result.assemble`."""
    episode_id, tool = c.string_columns()
    calls = pd.DataFrame(
        {
            "episode_id": episode_id,
            "round": c.round.astype(np.int64),
            "call_index": c.call_index.astype(np.int64),
            "tool": tool,
            "duration_sec": c.duration_sec,
            "completed": c.completed,
            "bound_sec": ev.bound_sec,
            "bound_by": ev.bound_by,
            "outcome": OUTCOME_BY_CODE[ev.outcome],
            "source_gap": GAP_BY_CODE[ev.gap],
            "requested_lines": c.requested_lines.astype(np.int64),
            "credited_lines": ev.credited_lines,
            "zombie_sec": ev.zombie_sec,
            "start_sec": ev.start_sec,
            "wait_sec": ev.wait_sec,
        },
        columns=list(metrics.ENGINE_CALL_COLUMNS),
    )
    return assemble(
        calls,
        EpisodeArrays(list(c.episode_ids), list(c.slot_ids), ev.wall_sec, ev.max_silence_sec),
        peak_loose_workers=ev.peak_loose_workers,
        engine="vectorized",
        policy=policy,
        assumptions=assumptions,
    )


def tool_breakdown(c: CompiledCorpus, ev: Evaluation) -> pd.DataFrame:
    """:func:`~reviewlab.core._breakdown.per_tool` of the replay ``ev``'s call frame, from its
    arrays (the frame's columns, as :func:`frames` builds them)."""
    outcome = ev.outcome
    abandoned = ev.gap == 1  # GAP_BY_CODE[1]: abandoned at the bound
    executed = outcome == EXECUTED
    credited = ev.credited_lines
    deadline_bound = np.asarray(ev.by_deadline, dtype=bool)
    if ev.by_idle is not None:  # bound_by "idle" wins over "deadline"
        deadline_bound = deadline_bound & ~ev.by_idle
    order = np.argsort(np.asarray(c.tools, dtype=object), kind="stable")
    rank = np.empty(order.size, dtype=np.intp)
    rank[order] = np.arange(order.size)
    return breakdown(
        pd.array(np.asarray(c.tools, dtype=object)[order], dtype="str"),
        rank[c.tool_code] if order.size else np.zeros(0, dtype=np.intp),
        key="tool",
        arrays=BreakdownArrays(
            dispatched=outcome != WITHHELD,
            abandoned=abandoned,
            deadline_bound=deadline_bound,
            zombie_sec=ev.zombie_sec,
            requested_lines=c.requested_lines.astype(np.int64),
            credited_lines=credited,
            timeout_lost_lines=metrics.timeout_lost_lines(
                c.requested_lines, credited, abandoned, executed
            ),
            duration_sec=c.duration_sec,
        ),
    )


def unbounded_evaluation(c: CompiledCorpus) -> Evaluation:
    """The pre-fix behaviour: nothing is abandoned; under "wedge" a censored call ends its
    episode."""
    executed = c.unbounded_outcome[c.read_calls] == EXECUTED
    credited = Crediting.credited_lines_array(
        executed, np.zeros(executed.size, dtype=bool), c.read_requested
    )
    nowhere = np.zeros(c.calls, dtype=bool)
    decisions = Decisions(
        bound=np.full(c.calls, np.nan),
        by_deadline=nowhere,
        abandoned=nowhere,
        zombie=np.zeros(c.calls),
        credited=credited,
        wall=c.unbounded_wall,
        round_silence=c.unbounded_silence,
    )
    return Evaluation(c, decisions=decisions, peak_loose_workers=0, unbounded=True)
