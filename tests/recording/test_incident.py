"""The incident, replayed: one wedged ``query_code`` kept a reviewer slot silent for 7 h 16 min.

Under the pre-fix ``Narrowing.unbounded()`` the twin reproduces the 26,160 s
silence; under ``TimeoutPolicy.ouroboros()`` the wedged call is abandoned at its
600 s bound, so no slot is ever silent longer than that.

The incident day ships as ``data/incidents/wedged-query-code.jsonl``; the tests
run on it and on an equivalent day built here from the schema (ordinary episodes on other
slots, one ``query_code`` that never
returns, observed for 26,160 s).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reviewlab.core._policy import Narrowing, TimeoutPolicy
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED
from reviewlab.engines.twin import simulate
from reviewlab.recording._schema import Call, Episode, Extent, Round

INCIDENT_FILE = (
    Path(__file__).resolve().parents[2] / "data" / "incidents" / "wedged-query-code.jsonl"
)
SILENCE_SEC = 7 * 3600 + 16 * 60  # 26,160 s
T0 = datetime(2026, 1, 12, 8, 0, tzinfo=UTC)


def built_incident_day() -> list[Episode]:
    """Ordinary episodes on slots 1–3 through the day, and on slot-2 the
    episode with the wedged query_code."""
    episodes = []
    for i in range(24):
        rounds = [
            Round(
                send_sec=4.0,
                calls=[
                    Call(
                        tool="read_file",
                        args={"path": f"src/m{i}.py"},
                        duration_sec=0.05,
                        extent=Extent(path=f"src/m{i}.py", start_line=1, end_line=80),
                    ),
                    Call(tool="search_code", args={"pattern": "def "}, duration_sec=0.7),
                ],
            ),
            Round(send_sec=6.0),
        ]
        episodes.append(
            Episode(
                id=f"ordinary-{i:02d}",
                source="incident",
                slot=f"slot-{1 + i % 3}",
                started_at=T0 + timedelta(minutes=40 * i),
                rounds=rounds,
            )
        )
    wedged = Episode(
        id="wedged",
        source="incident",
        slot="slot-2",
        started_at=T0 + timedelta(hours=1, minutes=5),
        end_reason="log_end",
        rounds=[
            Round(
                send_sec=5.0, calls=[Call(tool="list_files", args={"path": "."}, duration_sec=0.02)]
            ),
            Round(
                send_sec=7.0,
                calls=[
                    Call(
                        tool="query_code",
                        args={"query": "callers of settle()"},
                        duration_sec=float(SILENCE_SEC),
                        completed=False,
                    )
                ],
            ),
            Round(
                send_sec=0.0,
                calls=[
                    Call(
                        tool="read_file",
                        args={"path": "src/settle.py"},
                        duration_sec=0.04,
                        extent=Extent(path="src/settle.py", start_line=1, end_line=120),
                    )
                ],
            ),
        ],
    )
    return [*episodes, wedged]


def _corpora() -> list[tuple[str, list[Episode]]]:
    from reviewlab.recording._files import load_episodes

    return [("built", built_incident_day()), ("bundled", list(load_episodes(INCIDENT_FILE)))]


@pytest.mark.parametrize(
    ("name", "corpus"), _corpora(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_the_pre_fix_policy_reproduces_the_seven_hour_silence(name, corpus):
    """Unbounded: the wedged query_code silences its slot for 7 h 16 min — forever under 'wedge'."""
    forever = simulate(corpus, TimeoutPolicy.ouroboros(), Narrowing.unbounded())
    assert forever.summary["max_silence_sec"] == math.inf
    # The recording saw it for 26,160 s: the optimistic end returns it right then.
    result = simulate(corpus, TimeoutPolicy.ouroboros(), Narrowing.unbounded(), censored="observed")
    assert result.summary["max_silence_sec"] == SILENCE_SEC
    assert result.summary["abandoned_call_rate"] == 0.0
    wedged = forever.calls[forever.calls["source_gap"] == SOURCE_GAP_WEDGED]
    assert list(wedged["tool"]) == ["query_code"]
    if name == "built":
        assert (
            forever.calls.loc[forever.calls["episode_id"] == "wedged", "outcome"].iloc[-1]
            == "withheld"
        )


@pytest.mark.parametrize(
    ("name", "corpus"), _corpora(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_the_ouroboros_policy_caps_every_silence_at_the_bound(name, corpus):
    """Bounded: the wedged call is abandoned at 600 s, the episode goes
    on, no silence exceeds the bound."""
    result = simulate(corpus, TimeoutPolicy.ouroboros())
    assert result.summary["max_silence_sec"] <= 600.0
    wedged = result.calls[result.calls["tool"] == "query_code"]
    abandoned = wedged[wedged["source_gap"] == SOURCE_GAP_ABANDONED]
    assert len(abandoned) == 1 and (abandoned["bound_sec"] == 600.0).all()
    assert result.summary["wedged_zombies"] == 1  # the one call that never returns
    assert result.summary["max_silence_sec"] == 600.0
    if name == "built":
        after = result.calls[result.calls["episode_id"] == "wedged"].iloc[-1]
        # The episode continued: its next read ran, but after an abandonment it is credited nothing.
        assert after["outcome"] == "executed" and after["credited_lines"] == 0


def test_the_shipped_day_and_its_generator_hold_one_call_wedged_for_7_h_16_min():
    """The bundled file and ``make_incident`` each record one censored query_code of 7 h 16 min."""
    from reviewlab.recording._files import load_episodes
    from reviewlab.recording.synth import make_incident

    for corpus in (load_episodes(INCIDENT_FILE), make_incident()):
        censored = [call for episode in corpus for call in episode.calls if not call.completed]
        assert [(call.tool, call.duration_sec) for call in censored] == [
            ("query_code", 7 * 3600.0 + 16 * 60.0)
        ]
