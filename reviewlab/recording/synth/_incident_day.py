"""The wedged-``query_code`` incident as a corpus (``source="incident"``).

A working day (08:00–20:00 UTC, 2025-06-12) of one reviewer pool: each slot serves ordinary
synthetic episodes back to back (wedges switched off), separated by exponential idle gaps. On
``reviewer-3`` the request arriving at 09:41:07 calls ``query_code``, alone in its third round,
which never returns: right-censored at 26,160 s (7 h 16 min), the episode ends ``wedged`` and
the slot serves nothing until the observation ends. It had inherited the pool's 21,600 s
deadline, which the pre-fix loop never enforced.

Invariants: ``seed`` changes only the ordinary episodes, the incident episode is fixed;
replayed under ``Narrowing.unbounded()`` it reproduces the 26,160 s silence, under any bounded
policy the call is abandoned at its bound.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import numpy as np

from reviewlab.recording._files import save_episodes
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.recording.synth._corpus import synth_corpus
from reviewlab.recording.synth._draws import TOOLS, ToolProfile

WEDGE_SEC = 26160.0
"""How long the wedged ``query_code`` call was seen running: 7 h 16 min."""
INCIDENT_SLOT = "reviewer-3"
INCIDENT_EPISODE_ID = "incident-reviewer-3-0941"
_DAY_START = datetime(2025, 6, 12, 8, 0, tzinfo=UTC)
_DAY_END = datetime(2025, 6, 12, 20, 0, tzinfo=UTC)
_INCIDENT_AT = datetime(2025, 6, 12, 9, 41, 7, tzinfo=UTC)
_POOL_DEADLINE_SEC = 21600.0


def incident_episode() -> Episode:
    """The episode whose ``query_code`` call wedged for 26,160 s."""
    return Episode(
        id=INCIDENT_EPISODE_ID,
        source="incident",
        slot=INCIDENT_SLOT,
        started_at=_INCIDENT_AT,
        deadline_sec=_POOL_DEADLINE_SEC,
        rounds=[
            Round(
                send_sec=3.412,
                calls=[
                    Call(
                        tool="read_file",
                        args={"path": "inventory/stock.py", "start_line": 1, "end_line": 180},
                        duration_sec=0.031,
                        result_chars=6840,
                        extent=Extent(path="inventory/stock.py", start_line=1, end_line=180),
                    ),
                    Call(
                        tool="list_files",
                        args={"path": "inventory"},
                        duration_sec=0.012,
                        result_chars=96,
                    ),
                ],
            ),
            Round(
                send_sec=2.871,
                calls=[
                    Call(
                        tool="search_code",
                        args={"pattern": "reserve_stock", "path": "."},
                        duration_sec=0.418,
                        result_chars=1210,
                    ),
                ],
            ),
            # The wedged call is alone in its round: the slot's silence is exactly the call's wait.
            Round(
                send_sec=4.206,
                calls=[
                    Call(
                        tool="query_code",
                        args={"query": "callers of reserve_stock"},
                        duration_sec=WEDGE_SEC,
                        completed=False,
                    ),
                ],
            ),
        ],
        end_reason="wedged",
        task="Review the change to inventory/stock.py: does reserve_stock still hold the lock?",
        meta={"story": "one wedged query_code kept this slot silent for 7 h 16 min"},
    )


def make_incident(seed: int = 0, *, slots: int = 6, mean_idle_sec: float = 600.0) -> list[Episode]:
    """The incident day: ordinary episodes on every slot plus the wedged one, by ``started_at``."""
    if slots < 3:
        raise ValueError(f"slots must be at least 3 (the incident is on reviewer-3), got {slots!r}")
    quiet = {
        name: ToolProfile(**{**profile.__dict__, "wedge_p": 0.0}) for name, profile in TOOLS.items()
    }
    pool = iter(
        synth_corpus(
            4000,
            seed=seed,
            tools=quiet,
            deadline_share=0.0,
            id_prefix="incident-pool",
            source="incident",
        )
    )
    rng = np.random.default_rng([seed, 0x1C1])
    wedged = incident_episode()
    wedge_over = _INCIDENT_AT + timedelta(seconds=_wall_sec(wedged))
    episodes = [wedged]
    for number in range(1, slots + 1):
        slot = f"reviewer-{number}"
        clock = _DAY_START + timedelta(seconds=float(rng.exponential(mean_idle_sec)))
        count = 0
        while clock < _DAY_END:
            template = next(pool)
            wall = _wall_sec(template)
            if (
                slot == INCIDENT_SLOT
                and clock < wedge_over
                and clock + timedelta(seconds=wall) > _INCIDENT_AT
            ):
                clock = wedge_over  # the slot is busy (silent) with the wedged call until then
                continue
            count += 1
            episodes.append(
                template.model_copy(
                    update={"id": f"{slot}-{count:03d}", "slot": slot, "started_at": clock}
                )
            )
            clock += timedelta(seconds=wall + float(rng.exponential(mean_idle_sec)))
    episodes.sort(key=lambda ep: (ep.started_at, ep.id))
    return episodes


def _wall_sec(episode: Episode) -> float:
    """Seconds the episode held its slot as recorded: sends plus call durations."""
    return sum(
        rnd.send_sec + sum(call.duration_sec for call in rnd.calls) for rnd in episode.rounds
    )


def write_incident(path: str | os.PathLike[str], seed: int = 0) -> int:
    """Save :func:`make_incident` to ``path`` atomically; return the number of episodes."""
    return save_episodes(make_incident(seed), path)
