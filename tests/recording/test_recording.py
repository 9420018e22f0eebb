"""Episode files, the per-call frame and the recorder: the recorded format as a contract."""

from __future__ import annotations

import gzip
import json
import math
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewlab.live._episode import EpisodeResult
from reviewlab.live._traces import RoundTrace
from reviewlab.recording import (
    FRAME_COLUMNS,
    Call,
    Episode,
    EpisodeFormatError,
    Extent,
    Recorder,
    Round,
    SkippedLine,
    episodes_frame,
    iter_episodes,
    load_episodes,
    save_episodes,
)

T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)


def episode(id: str = "e1", **changes: Any) -> Episode:
    fields: dict[str, Any] = dict(
        id=id,
        source="live",
        slot="slot-1",
        started_at=T0,
        deadline_sec=600.0,
        rounds=[
            Round(
                send_sec=1.5,
                calls=[
                    Call(
                        tool="read_file",
                        args={"path": "a.py"},
                        duration_sec=0.25,
                        result_chars=900,
                        extent=Extent(path="a.py", start_line=10, end_line=29),
                    ),
                    Call(
                        tool="query_code",
                        args={"query": "x"},
                        duration_sec=600.0,
                        completed=False,
                        returned_after_sec=900.5,
                    ),
                ],
            ),
            Round(send_sec=2.0, calls=[Call(tool="search_code", duration_sec=0.5, status="error")]),
            Round(send_sec=0.75),
        ],
    )
    fields.update(changes)
    return Episode(**fields)


def write_lines(path: Path, lines: list[str], *, final_newline: bool = True) -> Path:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    path.write_bytes(
        gzip.compress(text.encode(), mtime=0) if path.name.endswith(".gz") else text.encode()
    )
    return path


# ---------------------------------------------------------------- round trip

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_seconds = st.floats(min_value=0.0, max_value=1e7, allow_nan=False, allow_infinity=False)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _seconds | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def extents(draw: st.DrawFn) -> Extent:
    start = draw(st.integers(1, 10_000))
    return Extent(
        path=draw(_text.filter(bool)),
        start_line=start,
        end_line=start + draw(st.integers(0, 5_000)),
    )


calls = st.builds(
    Call,
    tool=st.sampled_from(["read_file", "list_files", "search_code", "query_code", "x-tool"]),
    args=st.dictionaries(_text, _json, max_size=3),
    duration_sec=_seconds,
    completed=st.booleans(),
    status=st.sampled_from(["ok", "error"]),
    result_chars=st.integers(0, 10**9),
    extent=st.none() | extents(),
    returned_after_sec=st.none() | _seconds,
)
rounds = st.builds(Round, send_sec=_seconds, calls=st.lists(calls, max_size=3))
zones = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
started = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=zones
)


@st.composite
def corpora(draw: st.DrawFn) -> list[Episode]:
    count = draw(st.integers(0, 4))
    return [
        Episode(
            id=f"ep-{i}-{draw(_text)}",
            source=draw(st.sampled_from(["live", "synthetic", "incident"])),
            slot=draw(_text),
            started_at=draw(started),
            deadline_sec=draw(st.none() | _seconds),
            rounds=draw(st.lists(rounds, max_size=3)),
            end_reason=draw(st.sampled_from(["final_answer", "wedged", "log_end"])),
            task=draw(_text),
            meta=draw(st.dictionaries(_text, _text, max_size=2)),
        )
        for i in range(count)
    ]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(corpus=corpora(), compressed=st.booleans())
def test_save_then_load_is_the_identity(
    tmp_path: Path, corpus: list[Episode], compressed: bool
) -> None:
    """Any valid corpus saved and loaded again equals itself, field by field and byte by byte."""
    path = tmp_path / ("c.jsonl.gz" if compressed else "c.jsonl")
    assert save_episodes(corpus, path) == len(corpus)
    loaded = load_episodes(path)
    assert list(loaded) == corpus
    assert [e.to_json_line() for e in loaded] == [e.to_json_line() for e in corpus]
    assert loaded.skipped == [] and loaded.ok


def _mutations(line: str) -> dict[str, tuple[str, str]]:
    """Ways to break one valid line, each with the field the error must name."""
    data = json.loads(line)
    out: dict[str, tuple[str, str]] = {}
    out["cut"] = (line[: max(1, len(line) // 2)], "<json>")
    out["version"] = (json.dumps({**data, "schema": "reviewlab.episode/9"}), "schema")
    out["unknown"] = (json.dumps({**data, "colour": "blue"}), "colour")
    out["source"] = (json.dumps({**data, "source": "martian"}), "source")
    for value, name in ((-1.0, "negative"), (math.nan, "nan")):
        broken = json.loads(line)
        broken["rounds"][0]["calls"][0]["duration_sec"] = value
        out[name] = (json.dumps(broken), "rounds.0.calls.0.duration_sec")
    broken = json.loads(line)
    broken["rounds"][0]["calls"][1]["status"] = "timeout"
    out["status"] = (json.dumps(broken), "rounds.0.calls.1.status")
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(size=st.integers(1, 6), data=st.data())
def test_every_malformed_variant_is_reported_with_its_line(
    tmp_path: Path, size: int, data: st.DataObject
) -> None:
    """Breaking any one line of a valid file makes the reader name exactly that line and field."""
    lines = [episode(f"e{i}").to_json_line() for i in range(size)]
    victim = data.draw(st.integers(0, size - 1), label="victim")
    kind = data.draw(st.sampled_from(sorted(_mutations(lines[0]))), label="kind")
    bad, field = _mutations(lines[victim])[kind]
    path = write_lines(
        tmp_path / f"m-{victim}-{kind}.jsonl", [*lines[:victim], bad, *lines[victim + 1 :]]
    )
    with pytest.raises(EpisodeFormatError) as caught:
        load_episodes(path)
    assert (caught.value.line, caught.value.field) == (victim + 1, field)
    assert caught.value.path == str(path)
    loaded = load_episodes(path, on_error="skip")
    assert [s.line for s in loaded.skipped] == [victim + 1]
    assert [e.id for e in loaded] == [f"e{i}" for i in range(size) if i != victim]


# ---------------------------------------------------------------- error cases, one by one


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("{not json", "<json>", "JSON"),
        (
            '{"schema": "reviewlab.episode/9", "id": "x", "source": "live", "started_at": '
            '"2025-01-01T00:00:00Z"}',
            "schema",
            "unsupported schema version 'reviewlab.episode/9'",
        ),
        (
            '{"id": "x", "source": "live", "started_at": "2025-01-01T00:00:00Z", "speed": 1}',
            "speed",
            "unknown field",
        ),
        (
            '{"id": "x", "source": "live", "started_at": "2025-01-01T00:00:00Z", "end_reason": '
            '"bored"}',
            "end_reason",
            "final_answer",
        ),
        (
            '{"id": "x", "source": "live", "started_at": "2025-01-01T00:00:00Z",'
            ' "rounds": [{"send_sec": -2, "calls": []}]}',
            "rounds.0.send_sec",
            "negative",
        ),
        (
            '{"id": "x", "source": "live", "started_at": "2025-01-01T00:00:00Z",'
            ' "rounds": [{"calls": [{"tool": "t", "duration_sec": NaN}]}]}',
            "rounds.0.calls.0.duration_sec",
            "finite",
        ),
        (
            '{"id": "x", "source": "live", "started_at": "2025-01-01T00:00:00Z",'
            ' "rounds": [{"calls": [{"tool": "t", "duration_sec": 1, "oops": 1}]}]}',
            "rounds.0.calls.0.oops",
            "unknown",
        ),
        (
            '{"id": "x", "source": "live", "started_at": "2025-01-01T00:00:00"}',
            "started_at",
            "time zone",
        ),
        ("[1, 2]", "<json>", "object"),
    ],
)
def test_each_defect_names_file_line_and_field(
    tmp_path: Path, text: str, field: str, words: str
) -> None:
    """Each kind of defect raises EpisodeFormatError with the file, the line and the field in it."""
    path = write_lines(tmp_path / "bad.jsonl", [episode("ok").to_json_line(), text])
    with pytest.raises(EpisodeFormatError) as caught:
        load_episodes(path)
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.line, error.field) == (2, field)
    assert words in error.message
    assert str(path) in str(error) and ":2:" in str(error)


def test_a_file_cut_mid_line_reports_a_truncated_last_line(tmp_path: Path) -> None:
    """A plain file cut in the middle of its last line is an error
    on that line, called truncated."""
    whole = "".join(episode(f"e{i}").to_json_line() + "\n" for i in range(3))
    path = tmp_path / "cut.jsonl"
    path.write_text(whole[: len(whole) - 40])
    with pytest.raises(EpisodeFormatError, match="truncated last line") as caught:
        load_episodes(path)
    assert (caught.value.line, caught.value.field) == (3, "<json>")
    partial = load_episodes(path, on_error="skip")
    assert [e.id for e in partial] == ["e0", "e1"]
    assert partial.skipped[0].line == 3 and "truncated" in partial.skipped[0].message


def test_a_gzip_file_cut_mid_stream_is_reported(tmp_path: Path) -> None:
    """A compressed file cut short is an error (field <gzip>) after the lines that could be read."""
    path = tmp_path / "cut.jsonl.gz"
    save_episodes([episode(f"e{i}") for i in range(50)], path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(EpisodeFormatError) as caught:
        load_episodes(path)
    assert caught.value.field in ("<gzip>", "<json>")
    partial = load_episodes(path, on_error="skip")
    assert len(partial.skipped) == 1 and 0 < len(partial) < 50
    assert partial.skipped[0].line == len(partial) + 1


def test_a_valid_last_line_without_newline_is_accepted(tmp_path: Path) -> None:
    """A complete last episode lacking only its final newline loads."""
    path = write_lines(
        tmp_path / "nonl.jsonl",
        [episode("a").to_json_line(), episode("b").to_json_line()],
        final_newline=False,
    )
    assert [e.id for e in load_episodes(path)] == ["a", "b"]


def test_blank_lines_are_ignored_but_counted(tmp_path: Path) -> None:
    """Blank lines carry no episode; line numbers after them still count them."""
    path = write_lines(
        tmp_path / "blank.jsonl", ["", episode("a").to_json_line(), "   ", "{broken"]
    )
    with pytest.raises(EpisodeFormatError) as caught:
        load_episodes(path)
    assert caught.value.line == 4
    assert [e.id for e in load_episodes(path, on_error="skip")] == ["a"]


def test_duplicate_ids_are_refused_on_the_later_line(tmp_path: Path) -> None:
    """A repeated episode id is an error naming the later line and field id."""
    path = write_lines(
        tmp_path / "dup.jsonl", [episode("a").to_json_line(), episode("a").to_json_line()]
    )
    with pytest.raises(EpisodeFormatError, match="first on line 1") as caught:
        load_episodes(path)
    assert (caught.value.line, caught.value.field) == (2, "id")
    with pytest.raises(ValueError, match="duplicate"):
        save_episodes([episode("a"), episode("a")], tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_skip_mode_reports_every_skipped_line(tmp_path: Path) -> None:
    """on_error='skip' keeps the good episodes and lists each bad line with its field and reason."""
    good = [episode(f"g{i}").to_json_line() for i in range(3)]
    lines = [good[0], "{oops", good[1], good[2].replace('"live"', '"lunar"'), '{"id": "z"}']
    loaded = load_episodes(write_lines(tmp_path / "mixed.jsonl", lines), on_error="skip")
    assert [e.id for e in loaded] == ["g0", "g1"]
    assert [(s.line, s.field) for s in loaded.skipped] == [
        (2, "<json>"),
        (4, "source"),
        (5, "source"),
    ]
    assert all(isinstance(s, SkippedLine) and s.message for s in loaded.skipped)
    assert not loaded.ok


def test_iter_episodes_streams_and_needs_a_report_list_to_skip(tmp_path: Path) -> None:
    """The iterator yields the episodes before a bad line before raising,
    and refuses skip without a list."""
    path = write_lines(
        tmp_path / "s.jsonl", [episode("a").to_json_line(), episode("b").to_json_line(), "{"]
    )
    stream = iter_episodes(path)
    assert [next(stream).id, next(stream).id] == ["a", "b"]
    with pytest.raises(EpisodeFormatError):
        next(stream)
    with pytest.raises(ValueError, match="skipped="):
        list(iter_episodes(path, on_error="skip"))
    with pytest.raises(ValueError, match="on_error"):
        list(iter_episodes(path, on_error="ignore"))  # type: ignore[arg-type]


def test_gzip_is_detected_by_magic_bytes_and_written_deterministically(tmp_path: Path) -> None:
    """A .gz file has the same bytes on every save (mtime 0) and is
    read as gzip whatever its name."""
    corpus = [episode(f"e{i}") for i in range(5)]
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    save_episodes(corpus, first)
    save_episodes(iter(corpus), second)
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes()[:2] == b"\x1f\x8b" and first.read_bytes()[4:8] == b"\0\0\0\0"
    renamed = tmp_path / "no-suffix.jsonl"
    renamed.write_bytes(first.read_bytes())
    assert list(load_episodes(renamed)) == corpus


def test_a_failed_save_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    """A save that fails midway leaves the destination as it was and cleans up its temp file."""
    path = tmp_path / "keep.jsonl"
    save_episodes([episode("old")], path)
    before = path.read_bytes()

    def exploding():
        yield episode("new-1")
        raise RuntimeError("crash while writing")

    with pytest.raises(RuntimeError, match="crash"):
        save_episodes(exploding(), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.jsonl"]


def test_saved_files_get_ordinary_permissions(tmp_path: Path) -> None:
    """The atomic temp file's private mode does not leak onto the saved file."""
    path = tmp_path / "perm.jsonl"
    save_episodes([episode()], path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_episodes_frame_has_one_documented_row_per_call() -> None:
    """The frame has exactly FRAME_COLUMNS and one row per call with the call's values."""
    later = episode(
        "e2",
        started_at=T0 + timedelta(seconds=30),
        deadline_sec=None,
        rounds=[Round(send_sec=1.0, calls=[Call(tool="list_files", duration_sec=0.1)])],
    )
    frame = episodes_frame([episode("e1"), later])
    assert tuple(frame.columns) == FRAME_COLUMNS
    assert len(frame) == 4
    first = frame.iloc[0]
    assert (first.episode_id, first["round"], first.call_index, first.tool) == (
        "e1",
        1,
        0,
        "read_file",
    )
    assert (
        first.requested_lines,
        first.extent_path,
        first.extent_start_line,
        first.extent_end_line,
    ) == (20, "a.py", 10, 29)
    assert frame.completed.tolist() == [True, False, True, True]
    assert frame.returned_after_sec.iloc[1] == 900.5 and math.isnan(
        frame.returned_after_sec.iloc[0]
    )
    assert frame.send_sec.tolist() == [1.5, 1.5, 2.0, 1.0]
    assert frame.arrival_sec.tolist() == [0.0, 0.0, 0.0, 30.0]
    assert math.isnan(frame.deadline_sec.iloc[3]) and frame.deadline_sec.iloc[0] == 600.0
    assert frame.status.tolist() == ["ok", "ok", "error", "ok"]
    assert frame.extent_start_line.isna().tolist() == [False, True, True, True]
    assert str(frame.started_at.dt.tz) == "UTC"
    assert list(episodes_frame([]).columns) == list(FRAME_COLUMNS)


# ---------------------------------------------------------------- recorder


def live_result(tag: str) -> EpisodeResult:
    """A live result of one model send that answered at once, with ``tag`` as its task."""
    return EpisodeResult(
        raw_text="[]",
        usage={},
        receipts=[],
        trace=[RoundTrace(round=1, send_sec=0.5)],
        end_reason="final_answer",
        started_at=datetime(2026, 12, 1, 6, 0, tzinfo=UTC),
        deadline_sec=None,
        task=tag,
    )


def test_recorder_writes_on_exit_only(tmp_path: Path) -> None:
    """Records accumulate in memory; the file appears, complete, when the with block ends."""
    path = tmp_path / "rec.jsonl"
    with Recorder(path, slot="slot-7", source="live") as recorder:
        first = recorder.record(live_result("first"))
        recorder.record(live_result("second"))
        assert (first.id, first.slot, first.source) == ("rec-1", "slot-7", "live")
        assert first.rounds[0].send_sec == 0.5 and first.calls == []
        assert not path.exists()
    assert [(e.id, e.slot, e.task) for e in load_episodes(path)] == [
        ("rec-1", "slot-7", "first"),
        ("rec-2", "slot-7", "second"),
    ]
    assert recorder.closed
    with pytest.raises(RuntimeError, match="closed"):
        recorder.record(live_result("late"))


def test_recorder_keeps_an_old_file_intact_until_close(tmp_path: Path) -> None:
    """A recorder that never closes (a crash) leaves the previous file exactly as it was."""
    path = tmp_path / "rec.jsonl"
    save_episodes([episode("old")], path)
    before = path.read_bytes()
    recorder = Recorder(path)
    recorder.record(live_result("x"))
    assert path.read_bytes() == before
    recorder.close()
    assert [e.id for e in load_episodes(path)] == ["rec-1"]


def test_recorder_saves_whole_episodes_when_the_block_raises(tmp_path: Path) -> None:
    """An exception in the block still writes every episode recorded before it, and propagates."""
    path = tmp_path / "boom.jsonl"
    with pytest.raises(KeyError), Recorder(path) as recorder:
        recorder.record(live_result("done"))
        raise KeyError("later failure")
    assert [e.task for e in load_episodes(path)] == ["done"]


def test_recorder_appends_and_keeps_ids_unique(tmp_path: Path) -> None:
    """append=True keeps the file's episodes first and numbers new ones past taken ids."""
    path = tmp_path / "runs.jsonl"
    save_episodes([episode("runs-1")], path)
    with Recorder(path, append=True) as recorder:
        recorder.record(live_result("new"))
        recorder.record(episode("explicit"))
        with pytest.raises(ValueError, match="duplicate"):
            recorder.record(episode("explicit"))
    assert [e.id for e in load_episodes(path)] == ["runs-1", "runs-2", "explicit"]
    with pytest.raises(ValueError, match="source"):
        Recorder(path, source="mars")


def test_recorder_refuses_what_is_neither_an_episode_nor_a_live_result(tmp_path: Path) -> None:
    """Anything else is a TypeError naming its type, and nothing is recorded."""
    recorder = Recorder(tmp_path / "x.jsonl")
    with pytest.raises(TypeError, match="dict"):
        recorder.record({"id": "e1"})  # type: ignore[arg-type]
    assert recorder.episodes == []


def test_recorder_records_a_real_review_episode(tmp_path: Path) -> None:
    """ReviewEpisode(recorder=...) with a scripted model writes its run in the recorded format."""
    from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call

    root = tmp_path / "repo"
    root.mkdir()
    (root / "main.py").write_text("".join(f"line {i}\n" for i in range(1, 41)))
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    tool_call("read_file", {"path": "main.py"}, "c1"),
                    tool_call("list_files", {"path": "."}, "c2"),
                ]
            },
            {"content": "LGTM"},
        ]
    )
    path = tmp_path / "live.jsonl"
    with Recorder(path, slot="slot-2") as recorder:
        result = ReviewEpisode(root, model, recorder=recorder).execute()
    assert result.raw_text == "LGTM"
    (recorded,) = load_episodes(path)
    assert (recorded.id, recorded.slot, recorded.source, recorded.end_reason) == (
        "live-1",
        "slot-2",
        "live",
        "final_answer",
    )
    assert [len(r.calls) for r in recorded.rounds] == [2, 0]
    assert [c.tool for c in recorded.calls] == ["read_file", "list_files"]
    assert all(c.completed and c.duration_sec >= 0 for c in recorded.calls)
    assert recorded.calls[0].result_chars > 0


def test_a_line_without_a_schema_version_is_refused(tmp_path):
    """A line that does not say which schema it follows is an error
    naming the line and the field."""
    from reviewlab.recording._files import EpisodeFormatError, load_episodes

    path = tmp_path / "noversion.jsonl"
    path.write_text(
        '{"id": "e1", "source": "synthetic", "started_at": "2026-01-01T00:00:00+00:00"}\n'
    )
    with pytest.raises(EpisodeFormatError) as caught:
        load_episodes(path)
    assert caught.value.line == 1 and caught.value.field == "schema"
    assert "missing schema version" in str(caught.value)


@pytest.mark.parametrize("stamp", [5, 1.7e9, 0])
def test_a_number_for_started_at_is_refused_not_read_as_unix_seconds(
    tmp_path: Path, stamp: float
) -> None:
    """``"started_at": 5`` is a malformed line naming the field, not 1970-01-01T00:00:05Z."""
    path = tmp_path / "numbers.jsonl"
    line = json.loads(episode().to_json_line())
    line["started_at"] = stamp
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(EpisodeFormatError, match=r"numbers\.jsonl:1: started_at: .*not the number"):
        load_episodes(path)
