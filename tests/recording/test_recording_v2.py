"""Recording format version 2: per-call transport, progress times and cancel facts.

Version 1 files still load, a version 1 episode is written without any version 2 key (its bytes
do not change), and a live run on the async or MCP path is recorded as version 2.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer, demo_server_command
from reviewlab.recording._files import EpisodeFormatError, load_episodes, save_episodes
from reviewlab.recording._schema import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_2,
    V2_CALL_FIELDS,
    Call,
    Episode,
    Round,
)
from reviewlab.recording.capture import episode_from_result
from reviewlab.resources import incident_path

STARTED = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
# The keys a version 1 call had before version 2 existed (the wire contract of /1).
V1_CALL_KEYS = {
    "tool",
    "args",
    "duration_sec",
    "completed",
    "status",
    "result_chars",
    "extent",
    "returned_after_sec",
}


def v2_episode() -> Episode:
    call = Call(
        tool="progress",
        duration_sec=1.5,
        completed=False,
        transport="mcp",
        progress_sec=[0.1, 0.2, 0.5],
        cancel_sent=True,
        cancel_honoured_sec=0.25,
    )
    return Episode(
        schema=SCHEMA_VERSION_2,
        id="v2",
        source="live",
        started_at=STARTED,
        rounds=[Round(calls=[call])],
    )


def write_lines(path: Path, *documents: dict) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    return path


def test_a_version_1_episode_is_written_without_any_version_2_key():
    """The v1 line keeps exactly the v1 call keys, so v1 writers
    produce the bytes they always did."""
    episode = Episode(
        id="v1",
        source="synthetic",
        started_at=STARTED,
        rounds=[Round(calls=[Call(tool="t", duration_sec=1)])],
    )
    document = json.loads(episode.to_json_line())
    assert document["schema"] == SCHEMA_VERSION
    assert set(document["rounds"][0]["calls"][0]) == V1_CALL_KEYS


def test_version_2_round_trips_its_fields(tmp_path):
    """Transport, progress times and cancel facts survive a save and a load."""
    path = tmp_path / "v2.jsonl"
    save_episodes([v2_episode()], path)
    (loaded,) = load_episodes(path)
    assert loaded == v2_episode() and loaded.schema_version == SCHEMA_VERSION_2
    call = loaded.calls[0]
    assert (call.transport, call.progress_sec, call.cancel_sent, call.cancel_honoured_sec) == (
        "mcp",
        [0.1, 0.2, 0.5],
        True,
        0.25,
    )


def test_bundled_version_1_files_still_load():
    """The bundled incident (version 1) loads under the version 2 reader."""
    episodes = load_episodes(incident_path())
    assert episodes and all(ep.schema_version == SCHEMA_VERSION for ep in episodes)
    assert all(getattr(c, f) is None for ep in episodes for c in ep.calls for f in V2_CALL_FIELDS)


def test_a_version_1_line_with_a_version_2_field_is_refused_naming_it(tmp_path):
    """A v1 episode carrying ``progress_sec`` is an error naming the line and the call's field."""
    document = json.loads(v2_episode().to_json_line())
    document["schema"] = SCHEMA_VERSION
    path = write_lines(tmp_path / "mixed.jsonl", document)
    with pytest.raises(EpisodeFormatError) as caught:
        load_episodes(path)
    assert caught.value.line == 1 and caught.value.field == "rounds"
    assert "rounds.0.calls.0.transport needs schema 'reviewlab.episode/2'" in caught.value.message


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"progress_sec": [0.5, 0.2]}, "progress_sec"),
        ({"progress_sec": [-1.0]}, "progress_sec"),
        ({"transport": "carrier-pigeon"}, "transport"),
        ({"cancel_honoured_sec": float("nan")}, "cancel_honoured_sec"),
    ],
)
def test_bad_version_2_fields_are_refused_naming_the_field(tmp_path, change, field):
    """Unordered or negative progress, an unknown transport, a NaN
    time: one error naming the field."""
    document = json.loads(v2_episode().to_json_line())
    document["rounds"][0]["calls"][0].update(change)
    path = write_lines(tmp_path / "bad.jsonl", document)
    with pytest.raises(EpisodeFormatError) as caught:
        load_episodes(path)
    assert caught.value.field == f"rounds.0.calls.0.{field}"


def test_an_mcp_episode_is_recorded_as_version_2(tmp_path):
    """A live run through an MCP server records transport, progress and the cancel facts."""
    root = tmp_path / "subject"
    root.mkdir()
    (root / "a.txt").write_text("x\n", encoding="utf-8")
    policy = Policy.uniform(30.0).with_idle(progress=1.0)
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "a.txt"}, "r")]},
            {
                "tool_calls": [
                    tool_call("progress", {"steps": 3, "interval_sec": 0.05, "then": "wedge"})
                ]
            },
            {"content": "[]"},
        ]
    )
    with MCPServer(demo_server_command(root)) as server:
        result = ReviewEpisode(
            root, model, policy=policy, registry_factory=server.registry_factory
        ).execute()
    episode = episode_from_result(result, id="mcp-1")
    assert episode.schema_version == SCHEMA_VERSION_2
    read, progress = episode.calls
    assert (read.transport, read.progress_sec, read.cancel_sent) == ("mcp", [], False)
    assert read.completed and read.extent is not None
    assert progress.transport == "mcp" and len(progress.progress_sec) == 3
    assert progress.cancel_sent is True and not progress.completed
    # Censored at the moment the idle timeout fired: one idle period after the last progress.
    assert progress.duration_sec >= progress.progress_sec[-1] + 1.0 - 1e-6
    path = tmp_path / "live.jsonl"
    save_episodes([episode], path)
    assert load_episodes(path)[0] == episode


def test_a_thread_path_episode_stays_version_1(tmp_path):
    """The sync path's recordings are unchanged: version 1, no version 2 key."""
    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    model = ScriptedModel(
        [{"tool_calls": [tool_call("read_file", {"path": "a.txt"})]}, {"content": "[]"}]
    )
    result = ReviewEpisode(tmp_path, model).execute()
    episode = episode_from_result(result, id="t-1")
    assert episode.schema_version == SCHEMA_VERSION
    assert set(json.loads(episode.to_json_line())["rounds"][0]["calls"][0]) == V1_CALL_KEYS


def test_an_abandoned_mcp_call_is_back_when_the_server_answered_not_when_the_client_stopped(
    tmp_path,
):
    """The zombie of an MCP call is the server's: ``returned_after_sec`` follows its answer."""
    delay = 0.4
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("wedge", {}, "w")]},
            {"tool_calls": [tool_call("ignore_cancel", {"after_sec": delay}, "i")]},
            {"content": "[]"},
        ]
    )
    with MCPServer(demo_server_command(tmp_path)) as server:
        result = ReviewEpisode(
            tmp_path,
            model,
            policy=TimeoutPolicy.uniform(0.3),
            registry_factory=server.registry_factory,
        ).execute()
        notes = result.trace[1].calls[0].result.notes
        end = time.monotonic() + 30
        while notes.cancel_honoured_sec is None:
            assert time.monotonic() < end, "the server never answered"
            time.sleep(0.01)
    wedged, ignoring = episode_from_result(result, id="z").calls
    # The client's task stopped at once, but the wedged server never answered.
    assert result.trace[0].calls[0].result.zombie_sec is not None
    assert wedged.returned_after_sec is None
    assert ignoring.returned_after_sec == pytest.approx(
        notes.cancel_sent_sec + notes.cancel_honoured_sec
    )
    assert ignoring.returned_after_sec >= 0.3 + delay
