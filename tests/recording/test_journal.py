"""A gateway's session files (``reviewlab.session/1``) and the call fields a gateway records.

Files are written by hand where the expected episode is computed by hand (rounds by overlap,
updates folded, the end round); the real writer is checked against the same reader, and killed
with SIGKILL mid-burst to show that every call it reported written reads back intact.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reviewlab.engines._corpus import open_corpus
from reviewlab.recording import (
    Call,
    Episode,
    EpisodeFormatError,
    Round,
    SessionJournal,
    SkippedLine,
    args_digest,
    is_session_folder,
    iter_episodes,
    load_episodes,
    read_session,
    save_episodes,
)

STARTED = "2026-12-01T06:00:00Z"
ROUNDS_NOTE = "inferred from the tool calls' overlap"
HEADER = {
    "schema": "reviewlab.session/1",
    "id": "h1",
    "started_at": STARTED,
    "source": "live",
    "slot": "",
    "task": "",
    "meta": {"host": "claude"},
}
# Dispatched at 1.0 (returns 3.0), 1.5 (returns 2.0) and 4.0 (abandoned at its 1.0 s bound);
# written in the order they finished: B, A, C (indices 0, 1, 2).
A = {"tool": "read_file", "args": {"path": "a.py"}, "duration_sec": 2.0, "server": "fs"}
B = {"tool": "list_files", "args": {}, "duration_sec": 0.5, "server": "fs"}
C = {"tool": "search_code", "args": {}, "duration_sec": 1.0, "completed": False}


def line(document: dict) -> str:
    return json.dumps(document) + "\n"


def session_text(*, end: bool = True) -> str:
    """The hand-built session: three calls, two updates of C, and (with ``end``) an end line."""
    text = line(HEADER)
    text += line({"call": B, "at_sec": 1.5}) + line({"call": A, "at_sec": 1.0})
    text += line({"call": C, "at_sec": 4.0})
    text += line({"update": 2, "fields": {"late_result_sec": 0.5, "late_result_chars": 42}})
    text += line({"update": 2, "fields": {"returned_after_sec": 1.5}})
    if end:
        text += line({"end": {"end_reason": "final_answer", "ended_sec": 7.0}})
    return text


def write(folder: Path, text: str | bytes, name: str = "h1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.session.jsonl"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def expected_episode(*, end: bool = True) -> Episode:
    """Computed by hand: A and B overlap (B starts at 1.5 < A's return at 3.0), one round sent
    1.0 s after the start; C starts at 4.0, after every return: a new round, 4.0 - 3.0 = 1.0 s
    after the last return; the end at 7.0 adds a last round of 7.0 - 5.0 = 2.0 s."""
    late_c = Call(**C, late_result_sec=0.5, late_result_chars=42, returned_after_sec=1.5)
    rounds = [
        Round(send_sec=1.0, calls=[Call(**A), Call(**B)]),
        Round(send_sec=1.0, calls=[late_c]),
    ]
    offsets = "[[0.0,0.5],[0.0]]"
    if end:
        rounds.append(Round(send_sec=2.0))
        offsets = "[[0.0,0.5],[0.0],[]]"
    return Episode(
        schema="reviewlab.episode/2",
        id="h1",
        source="live",
        started_at=datetime(2026, 12, 1, 6, 0, tzinfo=UTC),
        rounds=rounds,
        end_reason="final_answer" if end else "log_end",
        meta={"host": "claude", "rounds": ROUNDS_NOTE, "call_offsets_sec": offsets},
    )


# -- the call fields -----------------------------------------------------------------------


def test_args_digest_is_the_sha256_of_the_canonical_json():
    """Sorted keys, no spaces, UTF-8 kept: the digest and length of that exact text."""
    canonical = '{"a":"é","b":[1,2]}'
    digest, chars = args_digest({"b": [1, 2], "a": "é"})
    assert digest == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert chars == len(canonical) == 19


@pytest.mark.parametrize("suffix", ["c.jsonl", "c.parquet"])
def test_the_gateway_fields_survive_a_save_and_a_load(tmp_path, suffix):
    """server, args_sha256 and args_chars come back from JSONL and from Parquet."""
    digest, chars = args_digest({"path": "a.py"})
    call = Call(tool="t", duration_sec=1.0, server="fs", args_sha256=digest, args_chars=chars)
    episode = Episode(
        schema="reviewlab.episode/2", id="e", source="live", started_at=STARTED,
        rounds=[Round(calls=[call])],
    )  # fmt: skip
    save_episodes([episode], tmp_path / suffix)
    (loaded,) = load_episodes(tmp_path / suffix)
    assert (loaded.calls[0].server, loaded.calls[0].args_sha256) == ("fs", digest)
    assert loaded.calls[0].args_chars == chars and loaded == episode


def episode_line(schema: str, **call_fields) -> dict:
    """A line in the exact shape a writer writes (so the fast columnar decoder takes it and the
    columnar checks judge it), with ``call_fields`` changed."""
    episode = Episode(
        schema="reviewlab.episode/2", id="e", source="live", started_at=STARTED,
        rounds=[Round(calls=[Call(tool="t", duration_sec=1.0)])],
    )  # fmt: skip
    document = json.loads(episode.to_json_line())
    document["schema"] = schema
    document["rounds"][0]["calls"][0].update(call_fields)
    return document


@pytest.mark.parametrize(
    ("schema", "fields", "name", "words"),
    [
        ("reviewlab.episode/2", {"args_sha256": "ab" * 32}, "args_chars", "without args_chars"),
        ("reviewlab.episode/2", {"args_chars": 3}, "args_chars", "without args_sha256"),
        ("reviewlab.episode/2", {"args_sha256": "AB" * 32, "args_chars": 3}, "args_sha256", ""),
        ("reviewlab.episode/2", {"server": ""}, "server", ""),
        ("reviewlab.episode/1", {"server": "fs"}, "server", "needs schema"),
    ],
)
def test_a_bad_gateway_field_is_refused_by_both_readers(tmp_path, schema, fields, name, words):
    """The episode reader and the columnar checks (the compiled path) refuse line 1, naming the
    call's field."""
    path = tmp_path / "bad.jsonl"
    path.write_text(line(episode_line(schema, **fields)))
    with pytest.raises(EpisodeFormatError) as by_objects:
        load_episodes(path)
    with pytest.raises(EpisodeFormatError) as by_columns:
        open_corpus(path).compiled()
    for error in (by_objects.value, by_columns.value):
        assert error.line == 1 and f"rounds.0.calls.0.{name}" in f"{error.field}: {error.message}"
        assert words in error.message


@pytest.mark.parametrize("dropped", [(), ("server", "args_sha256", "args_chars")])
def test_version_2_lines_with_and_without_the_gateway_fields_take_the_fast_decoder(
    tmp_path, monkeypatch, dropped
):
    """A call line as written now (19 keys) or before the gateway fields (16) is compiled
    straight into columns, without building an Episode."""
    document = episode_line("reviewlab.episode/2", server="fs")
    for name in dropped:
        del document["rounds"][0]["calls"][0][name]
    path = tmp_path / "c.jsonl"
    path.write_text(line(document))

    def refuse(*args, **kwargs):
        raise AssertionError("the line went through pydantic")

    monkeypatch.setattr(Episode, "model_validate_json", refuse)
    monkeypatch.setattr(Episode, "model_validate", refuse)
    compiled = open_corpus(path).compiled()
    assert list(compiled.episode_ids) == ["e"] and list(compiled.tools) == ["t"]


# -- reading a session ---------------------------------------------------------------------


def test_a_hand_built_session_reads_as_the_episode_computed_by_hand(tmp_path):
    """Rounds by overlap, updates folded into their call, a last round up to the end line."""
    assert read_session(write(tmp_path, session_text())) == expected_episode()


def test_a_session_without_an_end_line_ended_with_the_log(tmp_path):
    """No end line (still running, or killed): ``log_end`` and no final round."""
    assert read_session(write(tmp_path, session_text(end=False))) == expected_episode(end=False)


@pytest.mark.parametrize("torn", ['{"call": {"tool": "read_fi', line({"call": A, "at_sec": 9.0})])
def test_a_last_line_without_its_newline_is_a_call_in_flight(tmp_path, torn):
    """Cut anywhere, even just before its newline, the last line is left out without error."""
    text = session_text(end=False) + torn.rstrip("\n")
    assert read_session(write(tmp_path, text)) == expected_episode(end=False)


def test_a_torn_middle_line_is_an_error_naming_its_line(tmp_path):
    """A cut line followed by more lines is not a call in flight: line 3, field ``<json>``."""
    whole = session_text().splitlines(keepends=True)
    whole[2] = whole[2][:20]  # line 3 lost its end and its newline: it runs into line 4
    with pytest.raises(EpisodeFormatError) as caught:
        read_session(write(tmp_path, "".join(whole)))
    assert (caught.value.line, caught.value.field) == (3, "<json>")
    assert caught.value.path.endswith("h1.session.jsonl")


def test_a_call_that_fails_validation_is_named_by_line_and_field(tmp_path):
    """A call line without ``duration_sec`` is line 2, field ``call.duration_sec``."""
    text = line(HEADER) + line({"call": {"tool": "x"}, "at_sec": 1.0})
    with pytest.raises(EpisodeFormatError) as caught:
        read_session(write(tmp_path, text))
    assert (caught.value.line, caught.value.field) == (2, "call.duration_sec")


def test_a_header_of_another_schema_is_refused_by_name(tmp_path):
    """An episode line where the header should be names both schemas."""
    episode = episode_line("reviewlab.episode/2")
    with pytest.raises(EpisodeFormatError, match="reviewlab.episode/2") as caught:
        read_session(write(tmp_path, line(episode)))
    assert (caught.value.line, caught.value.field) == (1, "schema")
    assert "reviewlab.session/1" in caught.value.message


def test_a_header_whose_id_is_not_the_file_name_is_refused(tmp_path):
    """The id names the file, so ids are unique within a folder."""
    with pytest.raises(EpisodeFormatError, match="not the file's name") as caught:
        read_session(write(tmp_path, session_text(), name="other"))
    assert (caught.value.line, caught.value.field) == (1, "id")


@pytest.mark.parametrize(
    ("update", "field", "words"),
    [
        ({"update": 2, "fields": {"late_result_sec": 1.0}}, "update", "no call 2"),
        ({"update": 0, "fields": {"duration_sec": 9.0}}, "fields.duration_sec", "unknown field"),
        ({"update": 0, "fields": {"late_result_sec": -1.0}}, "fields.late_result_sec", ""),
    ],
)
def test_a_bad_update_is_an_error_naming_line_and_field(tmp_path, update, field, words):
    """An update of a call not yet written, of a field no update may set, or of a bad value."""
    text = line(HEADER) + line({"call": B, "at_sec": 1.5}) + line({"call": A, "at_sec": 1.0})
    with pytest.raises(EpisodeFormatError) as caught:
        read_session(write(tmp_path, text + line(update)))
    assert (caught.value.line, caught.value.field) == (4, field)
    assert words in caught.value.message


@pytest.mark.parametrize("document", [{"at_sec": 1.0}, {"call": A, "at_sec": 1.0, "end": {}}])
def test_a_line_of_no_kind_or_two_kinds_is_an_error(tmp_path, document):
    """A line is a call, an update or an end: one key says which."""
    with pytest.raises(EpisodeFormatError, match="expected one of the keys") as caught:
        read_session(write(tmp_path, line(HEADER) + line(document)))
    assert (caught.value.line, caught.value.field) == (2, "<json>")


def test_the_meta_keys_the_reader_writes_are_refused_in_a_header(tmp_path):
    """``rounds`` and ``call_offsets_sec`` are the reader's: the writer and the reader refuse
    them in the header."""
    with pytest.raises(ValueError, match="'rounds' is the reader's"):
        SessionJournal(tmp_path, id="m", meta={"rounds": "by hand"})
    header = dict(HEADER, meta={"call_offsets_sec": "[[0.0]]"})
    with pytest.raises(EpisodeFormatError, match="call_offsets_sec") as caught:
        read_session(write(tmp_path, line(header)))
    assert (caught.value.line, caught.value.field) == (1, "meta")


def test_a_line_after_the_end_line_is_an_error(tmp_path):
    """Nothing follows the end: a call after it is line 8."""
    text = session_text() + line({"call": A, "at_sec": 8.0})
    with pytest.raises(EpisodeFormatError, match="after the session's end") as caught:
        read_session(write(tmp_path, text))
    assert caught.value.line == 8


def test_skip_mode_records_each_bad_line_and_the_updates_of_a_skipped_call(tmp_path):
    """C's line is bad: it is skipped, and so are its two updates (one record each); A and B
    stay, and nothing else is dropped."""
    text = session_text().replace('"at_sec": 4.0', '"at_sec": -4.0')
    skipped: list[SkippedLine] = []
    episode = read_session(write(tmp_path, text), on_error="skip", skipped=skipped)
    assert [(s.line, s.field) for s in skipped] == [(4, "at_sec"), (5, "update"), (6, "update")]
    assert [c.tool for c in episode.calls] == ["read_file", "list_files"]


def test_after_a_line_of_unknown_kind_updates_are_skipped_not_misplaced(tmp_path):
    """A skipped line that is not JSON may have been a call: later updates cannot be placed,
    so each is a record rather than a change to the wrong call."""
    lines = session_text().splitlines(keepends=True)
    lines[3] = "garbage\n"  # was C's call line
    skipped: list[SkippedLine] = []
    episode = read_session(write(tmp_path, "".join(lines)), on_error="skip", skipped=skipped)
    assert [(s.line, s.field) for s in skipped] == [(4, "<json>"), (5, "update"), (6, "update")]
    assert "unknown after line 4" in skipped[1].message
    assert all(call.late_result_sec is None for call in episode.calls)


def test_is_session_folder_wants_a_directory_with_a_session_file(tmp_path):
    """A folder of sessions, not an empty one, a Parquet one, a hidden file, or a session file."""
    assert not is_session_folder(tmp_path)
    (tmp_path / ".h0.session.jsonl").write_text(session_text())
    assert not is_session_folder(tmp_path)
    save_episodes([expected_episode()], tmp_path / "parts")
    assert not is_session_folder(tmp_path / "parts")
    path = write(tmp_path / "gw", session_text())
    assert is_session_folder(tmp_path / "gw") and not is_session_folder(path)


# -- the writer ----------------------------------------------------------------------------


def test_the_writer_writes_what_the_reader_reads(tmp_path):
    """Indices in write order; updates folded (a None is a fact not learnt, never a clearing);
    the header's id, start and meta; the end line."""
    start = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    journal = SessionJournal(tmp_path, id="h1", meta={"host": "claude"},
                             started_wall=start.timestamp())  # fmt: skip
    assert journal.path == tmp_path / "h1.session.jsonl"
    assert [journal.call(Call(**B), at_sec=1.5), journal.call(Call(**A), at_sec=1.0)] == [0, 1]
    assert journal.call(Call(**C), at_sec=4.0) == 2
    journal.update(2, late_result_sec=0.5, late_result_chars=42, returned_after_sec=None)
    journal.update(2, returned_after_sec=1.5, late_result_sec=None, cancel_honoured_sec=None)
    journal.update(1, late_result_sec=None)  # nothing learnt: nothing written
    assert read_session(journal.path) == expected_episode(end=False)  # read while open
    journal.close()
    journal.close()  # idempotent: one end line
    episode = read_session(journal.path)
    assert (
        episode.end_reason == "final_answer" and episode.rounds[:2] == expected_episode().rounds[:2]
    )
    assert journal.path.read_text().count('"end"') == 1
    updates = [json.loads(x) for x in journal.path.read_text().splitlines() if '"update"' in x]
    assert [u["fields"] for u in updates] == [
        {"late_result_sec": 0.5, "late_result_chars": 42},
        {"returned_after_sec": 1.5},
    ]


def test_the_writer_refuses_what_the_reader_would(tmp_path):
    """An unknown index, a field no update sets, a bad value, a reused id, a closed journal."""
    journal = SessionJournal(tmp_path, id="w")
    journal.call(Call(**A), at_sec=0.0)
    with pytest.raises(ValueError, match="no call 1"):
        journal.update(1, late_result_sec=1.0)
    with pytest.raises(ValueError, match="duration_sec cannot be updated"):
        journal.update(0, duration_sec=1.0)
    with pytest.raises(ValueError, match="late_result_chars"):
        journal.update(0, late_result_chars=-1)
    with pytest.raises(ValueError, match="at_sec"):
        journal.call(Call(**A), at_sec=float("nan"))
    with pytest.raises(FileExistsError):
        SessionJournal(tmp_path, id="w")
    journal.close("log_end")
    with pytest.raises(ValueError, match="closed"):
        journal.call(Call(**A), at_sec=1.0)
    assert read_session(journal.path).end_reason == "log_end"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.session.jsonl"]  # no stray file


def test_without_hard_links_the_file_still_appears_whole_and_once(tmp_path, monkeypatch):
    """Where ``os.link`` is refused, the header file is renamed into place; a taken id is
    still refused, and no hidden file is left behind."""

    def no_links(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    journal = SessionJournal(tmp_path, id="h1", started_wall=1_764_568_800.0)
    journal.call(Call(**A), at_sec=1.0)
    assert read_session(journal.path).calls == [Call(**A)]
    with pytest.raises(FileExistsError):
        SessionJournal(tmp_path, id="h1")
    assert [p.name for p in tmp_path.iterdir()] == ["h1.session.jsonl"]


def test_a_journal_without_an_id_gets_a_fresh_one_with_its_time(tmp_path):
    """``session-<UTC time>-<8 hex digits>``, a different one each time."""
    first, second = SessionJournal(tmp_path), SessionJournal(tmp_path)
    pattern = r"session-\d{8}T\d{12}Z-[0-9a-f]{8}"
    assert re.fullmatch(pattern, first.id) and re.fullmatch(pattern, second.id)
    assert first.id != second.id and first.path.name == f"{first.id}.session.jsonl"


WRITER = textwrap.dedent(
    """
    import sys, threading
    from reviewlab.recording import Call, SessionJournal

    journal = SessionJournal(sys.argv[1], id="burst")
    said = threading.Lock()

    def burst(worker):
        for n in range(1_000_000):
            tool = f"t{worker}-{n}"
            call = Call(tool=tool, args={"n": n, "pad": "x" * 9000}, duration_sec=n / 1000)
            index = journal.call(call, at_sec=n / 100)
            with said:
                sys.stdout.write(f"{index} {tool}\\n")
                sys.stdout.flush()

    for worker in range(3):
        threading.Thread(target=burst, args=(worker,), daemon=True).start()
    threading.Event().wait()
    """
)


def test_a_writer_killed_mid_burst_loses_nothing_it_reported_written(tmp_path):
    """SIGKILL during a burst of 9 kB call lines from three threads: every call the writer
    printed after ``call()`` returned reads back intact, at the index it was given."""
    folder = tmp_path / "gw"
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    reported: dict[int, str] = {}
    try:
        assert process.stdout is not None
        for said in process.stdout:
            index, tool = said.split()
            reported[int(index)] = tool
            if len(reported) >= 300:
                break
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert len(reported) >= 300
    path = folder / "burst.session.jsonl"
    episode = read_session(path)
    assert episode.end_reason == "log_end" and len(episode.calls) >= len(reported)
    lines = path.read_bytes().split(b"\n")  # the writer's own order: line index + 2
    by_tool = {call.tool: call for call in episode.calls}
    for index, tool in reported.items():
        assert json.loads(lines[index + 1])["call"]["tool"] == tool
        n = int(tool.split("-")[1])
        call = by_tool[tool]
        assert call.args == {"n": n, "pad": "x" * 9000} and call.duration_sec == n / 1000


# -- a folder of sessions as a corpus ------------------------------------------------------


def two_sessions(folder: Path) -> Path:
    """``h1`` closed (the hand-built session) and ``h2`` still open (one call, no end)."""
    write(folder, session_text())
    open_one = dict(HEADER, id="h2")
    write(folder, line(open_one) + line({"call": B, "at_sec": 0.25}), name="h2")
    return folder


def test_a_session_folder_is_a_corpus_of_its_sessions_in_name_order(tmp_path):
    """iter_episodes, load_episodes and open_corpus read one episode per session file."""
    folder = two_sessions(tmp_path / "gw")
    second = Episode(
        schema="reviewlab.episode/2", id="h2", source="live", started_at=STARTED,
        rounds=[Round(send_sec=0.25, calls=[Call(**B)])], end_reason="log_end",
        meta={"host": "claude", "rounds": ROUNDS_NOTE},
    )  # fmt: skip
    assert list(iter_episodes(folder)) == [expected_episode(), second]
    assert load_episodes(folder) == [expected_episode(), second]
    corpus = open_corpus(folder)
    assert len(corpus) == 2 and list(corpus.compiled().episode_ids) == ["h1", "h2"]
    assert corpus.episodes() == [expected_episode(), second]


def test_a_folder_reads_while_its_writer_appends(tmp_path):
    """Read over and over while a thread appends 200 calls of 5 kB: every read succeeds, and
    each sees at least the calls ``call()`` had returned for before the read began."""
    journal = SessionJournal(tmp_path / "gw", id="live")
    written = [0]

    def append() -> None:
        for n in range(200):
            journal.call(Call(tool=f"t{n}", args={"pad": "x" * 5000}, duration_sec=0.1), at_sec=n)
            written[0] = n + 1
            time.sleep(0.0005)  # spreads the writes over the reads; no outcome depends on it

    writer = threading.Thread(target=append)
    writer.start()
    reads = 0
    try:
        while writer.is_alive() or reads < 3:
            before = written[0]
            (episode,) = load_episodes(tmp_path / "gw")
            assert len(episode.calls) >= before and episode.end_reason == "log_end"
            reads += 1
    finally:
        writer.join()
    journal.close()
    assert len(load_episodes(tmp_path / "gw")[0].calls) == written[0] == 200


def test_a_folder_read_with_skip_names_the_session_file_of_each_record(tmp_path):
    """A bad line of one session is one record whose message names its file."""
    folder = two_sessions(tmp_path / "gw")
    with (folder / "h2.session.jsonl").open("a") as out:
        out.write("not json\n")
    skipped: list[SkippedLine] = []
    episodes = list(iter_episodes(folder, on_error="skip", skipped=skipped))
    assert [ep.id for ep in episodes] == ["h1", "h2"]
    assert [(s.line, s.field) for s in skipped] == [(3, "<json>")]
    assert skipped[0].message.startswith("h2.session.jsonl: ")
    corpus = open_corpus(folder, on_error="skip")
    assert len(corpus) == 2 and len(corpus.skipped) == 1


def test_a_session_whose_header_cannot_be_read_is_one_record_in_skip_mode(tmp_path):
    """Without its header a file holds no episode: skipped whole, one record at line 1."""
    folder = two_sessions(tmp_path / "gw")
    (folder / "h0.session.jsonl").write_text(line(dict(HEADER, schema="reviewlab.session/9")))
    skipped: list[SkippedLine] = []
    assert [ep.id for ep in iter_episodes(folder, on_error="skip", skipped=skipped)] == ["h1", "h2"]
    assert [(s.line, s.field) for s in skipped] == [(1, "schema")]
    assert skipped[0].message.startswith("h0.session.jsonl: unsupported schema")
    with pytest.raises(EpisodeFormatError, match="reviewlab.session/9"):
        load_episodes(folder)


@pytest.mark.parametrize("given", ["2026-12-01T06:00:00", 1764568800])
def test_an_episode_and_a_session_header_refuse_a_start_without_a_time_zone(given):
    """The one ZonedTime rule: a naive ISO time and a bare number are refused by both the
    episode schema and the session header, each naming started_at."""
    from pydantic import ValidationError

    from reviewlab.recording._schema import Episode
    from reviewlab.recording.journal._lines import Header

    with pytest.raises(ValidationError, match="started_at must"):
        Episode.model_validate({"schema": "reviewlab.episode/2", "id": "e", "source": "live",
                                "started_at": given})  # fmt: skip
    with pytest.raises(ValidationError, match="started_at must"):
        Header.model_validate({"schema": "reviewlab.session/1", "id": "s", "source": "live",
                               "started_at": given})  # fmt: skip
