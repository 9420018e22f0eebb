"""The live episode credits a read only what that read rendered, end to end
(docs/semantics.md, "Crediting").

The reader stamp is shared by every read of an episode; the episode clears it
before each dispatch, so a read that renders nothing (an empty file) cannot
inherit the previous read's extent, and the recorded coverage stays between 0
and 1.
"""

from __future__ import annotations

from pathlib import Path

from reviewlab import ReviewEpisode, ScriptedModel, TimeoutPolicy, tool_call
from reviewlab.core._policy import Narrowing
from reviewlab.engines._replay import replay
from reviewlab.recording.capture import episode_from_result


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    (tmp_path / "empty.py").write_text("")
    return tmp_path


def test_a_read_of_an_empty_file_is_not_credited_the_previous_reads_extent(tmp_path):
    """Read a.py (10 lines), then an empty file: the second receipt has no extent of its own."""
    root = _workspace(tmp_path)
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "a.py"}, "c0")]},
            {
                "tool_calls": [
                    tool_call(
                        "read_file", {"path": "empty.py", "start_line": 1, "end_line": 5}, "c1"
                    )
                ]
            },
            {"content": "[]"},
        ]
    )
    result = ReviewEpisode(root, model, policy=TimeoutPolicy.uniform(30.0)).execute()
    first, second = result.receipts
    assert first.extent is not None and first.extent["end_line"] == 10
    assert second.outcome == "executed" and second.extent is None
    recorded = episode_from_result(result, id="live-empty")
    replayed = replay([recorded], TimeoutPolicy.uniform(30.0), Narrowing("none"))
    # The empty read rendered no line: the recording asks for none, so a replay credits what the
    # live run credited and the coverage loss is exactly 0 (never negative).
    assert replayed.calls["requested_lines"].tolist() == [10, 0]
    assert replayed.calls["credited_lines"].tolist() == [10, 0]
    assert replayed.summary["coverage_loss_rate"] == 0.0
