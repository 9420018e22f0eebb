"""What a replay says, and the one function every engine uses to say it.

An engine computes per-call columns and four per-episode arrays (ids, slots,
wall time, longest silence); :func:`assemble` turns them into a
:class:`ReplayResult`: the call frame, the episode frame
(:func:`reviewlab.core._metrics.episode_rows`), the summary
(:func:`reviewlab.core._metrics.summarize`) and the assumptions the answer rests
on. No engine builds a ``ReplayResult`` itself, so the three engines cannot
drift apart in how they count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core import _metrics as metrics
from reviewlab.core._breakdown import per_slot, per_tool
from reviewlab.core._display import RichDisplay
from reviewlab.core._policy import Narrowing, Policy
from reviewlab.core._vocab import OUTCOME_EXECUTED, SOURCE_GAP_ABANDONED, SOURCE_GAPS_HELD_BACK


@dataclass
class ReplaySummary(RichDisplay, display="replay_result"):
    """What a replay says without frames: its summary, the engine, the policy and what it
    assumed. An engine that gathers no call to the caller (a replay on a cluster) answers with
    this; it has no ``calls`` or ``episodes`` to read, rather than frames that raise."""

    summary: dict[str, Any]
    """:func:`reviewlab.core._metrics.summarize`'s keys, merged exactly."""
    engine: str
    """The engine that computed this answer."""
    policy: Policy
    """The policy replayed: the one record of it (every part)."""
    assumptions: dict[str, Any] = field(default_factory=dict)
    """What the answer rests on (docs/semantics.md, "What a replay assumes")."""


@dataclass
class ReplayResult(RichDisplay, display="replay_result"):
    """What a replay says: per-call and per-episode frames, per-slot timelines for pools, a
    summary, and the policy replayed (its narrowing included: the one record)."""

    calls: pd.DataFrame
    """One row per call: :data:`reviewlab.core._metrics.CALL_COLUMNS`."""
    episodes: pd.DataFrame
    """One row per episode: :data:`reviewlab.core._metrics.EPISODE_COLUMNS`."""
    summary: dict[str, Any]
    """:func:`reviewlab.core._metrics.summarize` of the two frames."""
    slots: pd.DataFrame | None = None
    """For pool simulations: one row per slot interval
    (``slot_id, state, start_sec, end_sec, episode_id``)."""
    engine: str = "twin"
    """The engine that computed this answer."""
    policy: Policy = field(default_factory=Policy.ouroboros)
    """The policy replayed (every part, the narrowing and the breaker included)."""
    assumptions: dict[str, Any] = field(default_factory=dict)
    """What the answer rests on (docs/semantics.md, "What a replay assumes"): censoring mode,
    the model's reaction, engine, seed."""

    def __post_init__(self) -> None:
        if not isinstance(self.policy, Policy):
            raise TypeError(
                f"policy: expected the Policy replayed, got {type(self.policy).__name__}"
            )

    @property
    def narrowing(self) -> Narrowing:
        """The deadline narrowing replayed: read from :attr:`policy`, never stored apart."""
        return self.policy.narrowing

    def per_tool(self) -> pd.DataFrame:
        """Breakdown of the call metrics per tool."""
        return per_tool(self.calls)

    def per_slot(self) -> pd.DataFrame:
        """Breakdown of the call and episode metrics per reviewer slot."""
        return per_slot(self.calls, self.episodes)


@dataclass
class PoolFrames:
    """What a reviewer-pool simulation adds: arrival and start times per episode, slot timelines."""

    arrival_sec: np.ndarray
    start_sec: np.ndarray
    slots: pd.DataFrame


@dataclass(frozen=True)
class EpisodeArrays:
    """Per episode, in corpus order, what an engine measured beside its calls: the ids, the
    reviewer slots, the wall times and the longest silences (any sequences; read as arrays)."""

    episode_id: Any
    slot_id: Any
    wall_sec: Any
    max_silence_sec: Any

    def frame(self) -> pd.DataFrame:
        """The four columns :func:`~reviewlab.core._metrics.episode_rows` completes."""
        return pd.DataFrame(
            {
                "episode_id": np.asarray(self.episode_id, dtype=object),
                "slot_id": np.asarray(self.slot_id, dtype=object),
                "wall_sec": np.asarray(self.wall_sec, dtype=float),
                "max_silence_sec": np.asarray(self.max_silence_sec, dtype=float),
            }
        )


def assemble(
    calls: pd.DataFrame,
    episodes: EpisodeArrays,
    *,
    peak_loose_workers: int,
    engine: str,
    policy: Policy,
    assumptions: Mapping[str, Any],
    pool: PoolFrames | None = None,
) -> ReplayResult:
    """The :class:`ReplayResult` of one replay, from an engine's call frame and per-episode arrays.

    ``calls`` holds :data:`~reviewlab.core._metrics.CALL_COLUMNS` and
    :data:`~reviewlab.core._metrics.CALL_TIMING_COLUMNS`; the derived columns
    (:data:`~reviewlab.core._metrics.CALL_DERIVED_COLUMNS`) are appended here.
    """
    calls["timeout_lost_lines"] = metrics.timeout_lost_lines(
        calls["requested_lines"].to_numpy(),
        calls["credited_lines"].to_numpy(),
        calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy(),
        calls["outcome"].eq(OUTCOME_EXECUTED).to_numpy(),
        calls["source_gap"].isin(SOURCE_GAPS_HELD_BACK).to_numpy(),
    )
    frame = metrics.episode_rows(calls, episodes.frame())
    summary = metrics.summarize(calls, frame, peak_loose_workers=peak_loose_workers)
    slots = None
    if pool is not None:
        frame["arrival_sec"] = pool.arrival_sec
        frame["start_sec"] = pool.start_sec
        frame["queue_wait_sec"] = pool.start_sec - pool.arrival_sec
        waits = frame["queue_wait_sec"].to_numpy()
        summary["queue_wait_mean_sec"] = float(waits.mean()) if waits.size else 0.0
        summary["queue_wait_share"] = float((waits > 0).mean()) if waits.size else 0.0
        slots = pool.slots
    return ReplayResult(
        calls=calls,
        episodes=frame,
        summary=summary,
        slots=slots,
        engine=engine,
        policy=policy,
        assumptions={"engine": engine, "reaction": "as_recorded", **assumptions},
    )


class FramesOnDemand(ReplayResult):
    """A :class:`ReplayResult` whose ``calls`` and ``episodes`` frames are built on first access.

    Lifecycle: an engine that has the summary without frames (the vectorized
    engine's :func:`~reviewlab.core._metrics.summarize_arrays`) hands over a
    ``build`` callable that returns the full result through :func:`assemble`;
    the first read of ``calls`` or ``episodes`` calls it once and keeps both
    frames; ``build`` is then dropped. A replay read only for its summary never
    pays for a frame, nor one read for its per-tool breakdown when the engine hands over
    ``per_tool`` (the breakdown from its arrays, :func:`~reviewlab.core._breakdown.breakdown`).
    Invariant: the engine's summary and breakdown are the ones :func:`assemble` and
    :func:`~reviewlab.core._breakdown.per_tool` compute from those frames (the exactness tests
    hold it).
    """

    def __init__(
        self,
        build: Callable[[], ReplayResult],
        *,
        summary: dict[str, Any],
        engine: str,
        policy: Policy,
        assumptions: Mapping[str, Any],
        per_tool: Callable[[], pd.DataFrame] | None = None,
    ) -> None:
        self._build: Callable[[], ReplayResult] | None = build
        self._per_tool = per_tool
        self._frames: tuple[pd.DataFrame, pd.DataFrame] | None = None
        self.summary = summary
        self.slots = None
        self.engine = engine
        self.policy = policy
        self.assumptions = {"engine": engine, **assumptions}

    @property
    def frames_built(self) -> bool:
        """Whether the frames exist yet."""
        return self._frames is not None

    def per_tool(self) -> pd.DataFrame:
        """Breakdown of the call metrics per tool (from the engine's arrays while the frames
        are not built)."""
        if self._frames is None and self._per_tool is not None:
            return self._per_tool()
        return super().per_tool()

    def _built(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        if self._frames is None:
            assert self._build is not None
            full = self._build()
            self._frames, self._build = (full.calls, full.episodes), None
        return self._frames

    @property  # type: ignore[override]
    def calls(self) -> pd.DataFrame:
        """One row per call (built on first access)."""
        return self._built()[0]

    @calls.setter
    def calls(self, frame: pd.DataFrame) -> None:
        self._frames, self._build = (frame, self._built()[1]), None

    @property  # type: ignore[override]
    def episodes(self) -> pd.DataFrame:
        """One row per episode (built on first access)."""
        return self._built()[1]

    @episodes.setter
    def episodes(self, frame: pd.DataFrame) -> None:
        self._frames, self._build = (self._built()[0], frame), None
