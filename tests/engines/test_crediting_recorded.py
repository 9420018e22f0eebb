"""A replay credits the reads a recording carries, whatever their tool: an MCP server's
``read_text_file`` recorded with its extent credits like ``read_file`` in every engine, and the
sticky rule (nothing credited after the first abandonment) holds for it too."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest
from test_breaker_real import assert_real_matches

from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Extent, Round

T0 = datetime(2026, 3, 3, 9, 0, tzinfo=UTC)


def _mcp_read(duration: float, first: int, last: int, path: str = "/w/pricing.py") -> Call:
    return Call(
        tool="read_text_file",
        args={"path": path},
        duration_sec=duration,
        transport="mcp",
        progress_sec=[],
        extent=Extent(path=path, start_line=first, end_line=last),
    )


def mcp_episode() -> Episode:
    """Two credited reads (2 + 5 lines), a listing, a ``search_files`` that wedges (a 3 s bound
    abandons it), then a read of 7 lines that the sticky rule leaves uncredited."""
    listing = Call(tool="list_directory", args={"path": "/w"}, duration_sec=0.5, transport="mcp")
    slow = Call(
        tool="search_files",
        args={"pattern": "x"},
        duration_sec=30.0,
        completed=False,
        transport="mcp",
    )
    return Episode(
        schema=SCHEMA_VERSION_2,
        id="mcp-1",
        source="live",
        slot="s",
        started_at=T0,
        rounds=[
            Round(send_sec=1.0, calls=[listing, _mcp_read(0.5, 1, 2)]),
            Round(send_sec=1.0, calls=[_mcp_read(1.0, 3, 7, "/w/stock.py")]),
            Round(send_sec=1.0, calls=[slow]),
            Round(send_sec=1.0, calls=[_mcp_read(0.5, 1, 7, "/w/other.py")]),
            Round(send_sec=1.0, calls=[]),
        ],
    )


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_recorded_mcp_reads_are_credited_their_lines_until_the_first_abandonment(engine):
    """Requested lines come from the extents; the reads before the abandonment are credited,
    the one after it is not (counted as timeout loss)."""
    policy = Policy(timeouts=TimeoutPolicy.uniform(3.0), narrowing=Narrowing("none"))
    result = replay([mcp_episode()], policy, engine=engine)
    calls = result.calls
    assert calls["requested_lines"].tolist() == [0, 2, 5, 0, 7]
    assert calls["credited_lines"].tolist() == [0, 2, 5, 0, 0]
    assert calls["timeout_lost_lines"].tolist() == [0, 0, 0, 0, 7]
    assert result.summary["coverage_loss_rate"] == pytest.approx(1 - 7 / 14)
    assert result.summary["timeout_coverage_loss_rate"] == pytest.approx(7 / 14)


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_unbounded_replay_credits_every_recorded_mcp_read(engine):
    """With nothing abandoned (the wedge returns when last seen) every read's lines are
    credited: no loss at all."""
    result = replay(
        [mcp_episode()], narrowing=Narrowing.unbounded(), engine=engine, censored="observed"
    )
    assert result.calls["credited_lines"].tolist() == [0, 2, 5, 0, 7]
    assert result.summary["coverage_loss_rate"] == 0.0


def test_the_real_engine_credits_recorded_mcp_reads_as_the_twin_does():
    """On real threads (durations x 0.1): every column as the twin's, times within the band."""
    corpus = [mcp_episode()]
    policy = Policy(timeouts=TimeoutPolicy.uniform(3.0), narrowing=Narrowing("none"))
    twin = replay(corpus, policy, engine="twin").calls
    real = replay(corpus, policy, engine="real", time_scale=0.1).calls
    assert twin["credited_lines"].tolist() == [0, 2, 5, 0, 0]
    assert_real_matches(real, twin)
    pd.testing.assert_series_equal(real["credited_lines"], twin["credited_lines"])
