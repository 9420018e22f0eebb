"""The reaction models' rewrites checked by hand (reviewlab/engines/_reaction.py): a re-issued
copy that the breaker withholds asks for no lines, and ``skip_target`` skips exactly the later
``read_file`` calls on an abandoned path."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest

from reviewlab import replay
from reviewlab.core._policy import TimeoutPolicy
from reviewlab.recording._schema import Call, Episode, Extent, Round

T0 = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)
GONE, HELD, SKIPPED = "native_tool_abandoned", "native_tool_withheld", "native_tool_skipped"
ENGINES = ["twin", "vectorized"]


def _read(path: str, duration: float, lines: int) -> Call:
    return Call(
        tool="read_file",
        args={"path": path},
        duration_sec=duration,
        extent=Extent(path=path, start_line=1, end_line=lines),
    )


def _other(tool: str, path: str, duration: float) -> Call:
    return Call(tool=tool, args={"path": path}, duration_sec=duration)


def _uniform_with_breaker(seconds: float, consecutive: int, cooldown_rounds: int) -> Any:
    """Every tool bounded at ``seconds``, with a breaker (whichever policy API HEAD offers)."""
    uniform = TimeoutPolicy.uniform(seconds)
    if hasattr(uniform, "with_breaker"):
        return uniform.with_breaker(consecutive, cooldown_rounds=cooldown_rounds)
    from reviewlab import Policy  # type: ignore[attr-defined]

    return Policy.uniform(seconds).with_breaker(consecutive, cooldown_rounds=cooldown_rounds)


def _rows(calls: pd.DataFrame, *columns: str) -> list[tuple[Any, ...]]:
    return list(zip(*(calls[c].tolist() for c in columns), strict=True))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_reissued_copy_the_breaker_withholds_asks_for_no_lines(engine):
    """Under reissue, a withheld re-issued copy adds no requested or lost lines: the original
    read already counts them, so its lines are counted once."""
    episode = Episode(
        id="e",
        source="synthetic",
        started_at=T0,
        rounds=[
            # b.py (30 lines) returns in 1 s and is credited; a.py (10 lines) is abandoned at 2 s.
            Round(send_sec=1.0, calls=[_read("b.py", 1.0, 30), _read("a.py", 9.0, 10)]),
            Round(send_sec=1.0, calls=[]),
        ],
    )
    # One abandonment opens read_file's breaker for one round: the re-issue round's copy.
    policy = _uniform_with_breaker(2.0, consecutive=1, cooldown_rounds=1)
    result = replay([episode], policy, engine=engine, reaction="reissue")
    calls = result.calls
    assert _rows(
        calls,
        "round",
        "call_index",
        "outcome",
        "source_gap",
        "requested_lines",
        "credited_lines",
        "timeout_lost_lines",
    ) == [
        (1, 0, "executed", "", 30, 30, 0),
        (1, 1, "error", GONE, 10, 0, 10),
        (1, 2, "withheld", HELD, 0, 0, 0),  # the copy of call 1, withheld: no lines of its own
    ]
    # Lines asked 30 + 10, lost 10 (not 30 + 10 + 10 asked, 20 lost).
    assert result.episodes["requested_lines"].tolist() == [40]
    assert result.episodes["timeout_lost_lines"].tolist() == [10]
    assert result.summary["timeout_coverage_loss_rate"] == pytest.approx(0.25)
    assert result.summary["coverage_loss_rate"] == pytest.approx(0.25)
    # Sends 1 + 1 (re-issue) + 1, waits 1 + 2; the withheld copy waits 0.
    assert result.episodes["wall_sec"].tolist() == [6.0]
    assert result.episodes["calls"].tolist() == [2]


def _skip_target_episode() -> Episode:
    return Episode(
        id="e",
        source="synthetic",
        started_at=T0,
        rounds=[
            Round(
                send_sec=1.0,
                calls=[
                    _read("a.py", 9.0, 10),  # abandoned at 2 s: the model gives up on a.py
                    _read("a.py", 1.0, 5),  # same round: already issued, runs
                    _other("search_code", "c.py", 9.0),  # abandoned: gives up on c.py too
                ],
            ),
            Round(
                send_sec=1.0,
                calls=[
                    _other("search_code", "a.py", 1.0),  # another tool on a.py: issued
                    _other("list_files", "a.py", 1.0),  # another tool on a.py: issued
                    _read("b.py", 1.0, 7),  # another path: issued
                    _read("a.py", 1.0, 20),  # a later read of a.py: skipped
                ],
            ),
            Round(send_sec=1.0, calls=[_read("a.py", 1.0, 3), _read("c.py", 1.0, 4)]),
            Round(send_sec=1.0, calls=[]),
        ],
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_skip_target_skips_only_later_reads_of_the_abandoned_path(engine):
    """skip_target skips read_file calls on an abandoned call's path in later rounds only:
    not the same round's, not other tools on that path, not reads of other paths."""
    result = replay(
        [_skip_target_episode()], TimeoutPolicy.uniform(2.0), engine=engine, reaction="skip_target"
    )
    assert _rows(
        result.calls,
        "round",
        "call_index",
        "tool",
        "outcome",
        "source_gap",
        "requested_lines",
        "timeout_lost_lines",
    ) == [
        (1, 0, "read_file", "error", GONE, 10, 10),
        (1, 1, "read_file", "executed", "", 5, 5),  # sticky rule: run, not credited
        (1, 2, "search_code", "error", GONE, 0, 0),
        (2, 3, "search_code", "executed", "", 0, 0),
        (2, 4, "list_files", "executed", "", 0, 0),
        (2, 5, "read_file", "executed", "", 7, 7),
        (2, 6, "read_file", "withheld", SKIPPED, 20, 20),
        (3, 7, "read_file", "withheld", SKIPPED, 3, 3),
        (3, 8, "read_file", "withheld", SKIPPED, 4, 4),
    ]
    # Four sends; waits 2 + 1 + 2 (round 1) and 1 + 1 + 1 (round 2); skipped calls wait 0.
    assert result.episodes["wall_sec"].tolist() == [12.0]
    assert result.episodes["calls"].tolist() == [6]


def test_skip_target_and_as_recorded_differ_only_in_the_skipped_reads():
    """Without skip_target the same corpus dispatches every call: the three skipped reads run."""
    recorded = replay([_skip_target_episode()], TimeoutPolicy.uniform(2.0)).calls
    assert not recorded["source_gap"].eq(SKIPPED).any()
    assert recorded["outcome"].tolist()[6:] == ["executed"] * 3
