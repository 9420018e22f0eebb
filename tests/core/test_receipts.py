"""Receipts, host texts, the call-fate rule and the sticky crediting rule."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from reviewlab.core._crediting import Crediting, abandons, abandons_array
from reviewlab.core._receipts import (
    Outcome,
    ToolReceipt,
    arg_error_text,
    exception_text,
    refused_text,
    tool_timeout_text,
    unavailable_text,
    wall_stamp,
)
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED

STAMP = {
    "target": "/w/a.py",
    "opened_path": "a.py",
    "opened_root": "active_workspace",
    "first_line": 3,
    "end_line": 9,
    "total_lines": 9,
    "body_start": 0,
    "line_ends": [1],
}


@pytest.mark.parametrize(
    ("bound", "printed"),
    [(0.3, "0.3"), (600, "600.0"), (600.0, "600.0"), (0.9987654321, "0.9987654321")],
)
def test_the_tool_timeout_text_prints_the_bound_as_a_python_float(bound, printed):
    """The standard host text, word for word, with str(float(bound))."""
    assert tool_timeout_text("read_file", bound) == (
        f"⚠️ TOOL_TIMEOUT (read_file): exceeded {printed}s limit. The tool is still running in "
        "background "
        "but control is returned to you. Try a different approach or inform the user about the "
        "issue."
    )


def test_a_reset_message_replaces_the_about_the_issue_tail():
    """With a reset message the text ends `inform the user.`."""
    text = tool_timeout_text("browse_page", 1.0, "Browser state has been reset. ")
    assert text.endswith(
        "Browser state has been reset. Try a different approach or inform the user."
    )


def test_the_episode_host_texts():
    """Bad arguments, unavailable tools, tool exceptions and cap refusals each have their text."""
    assert arg_error_text("oops") == "⚠️ TOOL_ARG_ERROR: oops"
    assert unavailable_text("run_command") == (
        "⚠️ tool 'run_command' is not available in this read-only inspection episode"
    )
    assert (
        unavailable_text("x" * 500)
        == f"⚠️ tool {'x' * 200!r} is not available in this read-only inspection episode"
    )
    assert exception_text(FileNotFoundError("gone.py")) == "⚠️ FileNotFoundError: gone.py"
    assert refused_text("read_file", 4, 4).startswith(
        "⚠️ TOOL_REFUSED (read_file): 4 abandoned tool worker(s)"
    )


@pytest.mark.parametrize(
    ("duration", "completed", "bound", "expected"),
    [
        (5.0, True, None, False),  # unbounded: never abandoned
        (5.0, False, None, False),
        (0.2, True, 0.3, False),  # returned inside
        (0.3, True, 0.3, False),  # exactly at the bound counts as inside
        (0.31, True, 0.3, True),  # returned too late
        (0.1, False, 0.3, True),  # still running when last seen: censored, abandoned
        (0.0, True, 0.0, False),  # a zero bound keeps only what already returned
        (0.001, True, 0.0, True),
    ],
)
def test_abandons_is_the_call_fate_rule(duration, completed, bound, expected):
    """A bounded call is abandoned unless it returned no later than its bound."""
    assert abandons(duration, completed, bound) is expected
    array = abandons_array(
        np.array([duration]), np.array([completed]), np.array([np.nan if bound is None else bound])
    )
    assert bool(array[0]) is expected


def test_receipts_flatten_to_the_usage_dict_form():
    """to_dict: outcome as text, optional fields only when set,
    args summary and extent flattened."""
    plain = ToolReceipt(
        round=1,
        tool="list_files",
        outcome=Outcome.EXECUTED,
        started_at=wall_stamp(),
        duration_sec=0.01,
        bound_sec=600.0,
        bound_by="tool_timeout",
        result_chars=12,
    )
    data = plain.to_dict()
    assert data["outcome"] == "executed" and "source_gap" not in data and "error" not in data
    assert not plain.abandoned
    read = ToolReceipt(
        round=2,
        tool="read_file",
        outcome=Outcome.EXECUTED,
        started_at=wall_stamp(),
        duration_sec=0.02,
        bound_sec=600.0,
        bound_by="tool_timeout",
        result_chars=40,
        args_summary={"path": "a.py"},
        extent={"start_line": 3, "end_line": 9},
    )
    assert read.to_dict()["path"] == "a.py" and read.to_dict()["start_line"] == 3
    cut = ToolReceipt(
        round=3,
        tool="read_file",
        outcome=Outcome.ERROR,
        started_at=wall_stamp(),
        duration_sec=0.3,
        bound_sec=0.3,
        bound_by="deadline",
        source_gap=SOURCE_GAP_ABANDONED,
    )
    assert cut.abandoned and cut.to_dict()["source_gap"] == "native_tool_abandoned"


def test_wall_stamps_carry_a_time_zone():
    """wall_stamp() is ISO-8601 with a zone."""
    assert datetime.fromisoformat(wall_stamp()).tzinfo is not None


def test_only_executed_reads_are_credited_an_extent():
    """A returned read_file is credited the stamp's lines; other tools and failed reads are not."""
    crediting = Crediting()
    extent = crediting.extent("read_file", Outcome.EXECUTED, STAMP)
    assert extent == {
        "opened_path": "a.py",
        "opened_root": "active_workspace",
        "start_line": 3,
        "end_line": 9,
        "total_lines": 9,
        "eof": True,
    }
    assert crediting.extent("list_files", Outcome.EXECUTED, STAMP) is None
    assert crediting.extent("read_file", Outcome.ERROR, STAMP) is None
    assert crediting.extent("read_file", "executed", None) is None
    assert crediting.credited_lines(Outcome.EXECUTED, 7) == 7
    assert crediting.credited_lines(Outcome.ERROR, 7) == 0
    assert crediting.credited_lines("executed", 0) == 0


def test_crediting_stops_for_good_after_the_first_abandonment():
    """After note_abandoned() no read is credited, though it stays executed."""
    crediting = Crediting()
    crediting.note_abandoned()
    assert not crediting.may_credit("read_file", Outcome.EXECUTED)
    assert crediting.extent("read_file", Outcome.EXECUTED, STAMP) is None
    assert crediting.credited_lines(Outcome.EXECUTED, 7) == 0
    lines = Crediting.credited_lines_array(
        np.array([True, True, False, True]),
        np.array([False, True, False, False]),
        np.array([5, 5, 5, 3]),
    )
    assert lines.tolist() == [5, 0, 0, 3]


def test_long_stamp_paths_are_truncated():
    """Extent paths are capped (300 chars) and roots (64 chars) as the reference receipts are."""
    stamp = {**STAMP, "opened_path": "p" * 400, "opened_root": "r" * 100}
    extent = Crediting().extent("read_file", Outcome.EXECUTED, stamp)
    assert (
        extent is not None
        and len(extent["opened_path"]) == 300
        and len(extent["opened_root"]) == 64
    )


def test_outcomes_are_a_closed_vocabulary():
    """The four outcomes a receipt may carry."""
    assert [str(o) for o in Outcome] == ["executed", "error", "refused", "withheld"]


def test_a_receipt_is_built_with_keywords_only():
    """Positional fields are refused, so no call site can swap two of them silently."""
    fields = (1, "read_file", Outcome.EXECUTED, wall_stamp(), 0.1, 1.0, "tool_timeout")
    with pytest.raises(TypeError):
        ToolReceipt(*fields)  # type: ignore[misc]
