"""Token usage in the recording: read from the real logs that report it (OpenHands, Inspect AI,
OTel GenAI), kept unknown where they do not (SWE-agent, scripted models), carried by JSONL,
Parquet and live capture, and refused where version 1 cannot hold it."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import set_span_in_context

from reviewlab.live._otlp_json import OtlpJsonFileExporter
from reviewlab.recording._files import EpisodeFormatError, load_episodes, save_episodes
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.recording.capture import UsageTap, episode_from_result, token_counts
from reviewlab.recording.columnar import ColumnarFormatError, write_columnar
from reviewlab.recording.interop import (
    export_otel,
    import_inspect,
    import_openhands,
    import_otel,
    import_swe_agent,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
T0 = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)
V2 = "reviewlab.episode/2"


def _usage_of(episode: Episode) -> list[tuple[int | None, int | None]]:
    return [(r.input_tokens, r.output_tokens) for r in episode.rounds]


# -- importers, on the real logs ------------------------------------------------------------
def test_openhands_rounds_sum_to_the_runs_own_token_totals():
    """Each Multi-SWE-bench run's rounds add up to its metrics.accumulated_token_usage."""
    path = FIXTURES / "openhands/multi_swe_bench_examples_output.jsonl"
    episodes = import_openhands(path)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(episodes) == len(records) == 3
    for episode, record in zip(episodes, records, strict=True):
        totals = record["metrics"]["accumulated_token_usage"]
        assert episode.schema_version == V2
        assert episode.model == "meta-llama/llama-4-maverick"
        assert all(r.usage_known for r in episode.rounds)
        assert sum(r.input_tokens or 0 for r in episode.rounds) == totals["prompt_tokens"]
        assert sum(r.output_tokens or 0 for r in episode.rounds) == totals["completion_tokens"]


def test_openhands_usage_per_response_and_an_unknown_final_message():
    """basic.json: the edit's response and the finish's; basic_gui_mode ends with a message
    that has no model response, so its round is unknown (None), not 0."""
    basic = import_openhands(FIXTURES / "openhands/basic.json")[0]
    assert basic.model == "claude-3-5-sonnet-20241022"
    assert _usage_of(basic) == [(3486, 1135), (4646, 177)]
    gui = import_openhands(FIXTURES / "openhands/basic_gui_mode.json")[0]
    assert _usage_of(gui)[-1] == (None, None)
    assert all(r.usage_known for r in gui.rounds[:-1])


def test_inspect_rounds_sum_to_the_samples_model_usage():
    """Each model event's output.usage is its round's; they add up to the sample's model_usage."""
    for name in (
        "inspect_ai/2025-05-12T20-27-36-04-00_browser.json",
        "inspect_ai/2025-04-07T11-00-30-05-00_arithmetic-with-tool_gKECTBvzvzgtPqQCd3cirF.json",
    ):
        path = FIXTURES / name
        log = json.loads(path.read_text(encoding="utf-8"))
        episodes = import_inspect(path)
        for episode, sample in zip(episodes, log["samples"], strict=True):
            ((model, usage),) = sample["model_usage"].items()
            assert episode.model == model == log["eval"]["model"]
            assert sum(r.input_tokens or 0 for r in episode.rounds) == usage["input_tokens"]
            assert sum(r.output_tokens or 0 for r in episode.rounds) == usage["output_tokens"]
    browser = import_inspect(FIXTURES / "inspect_ai/2025-05-12T20-27-36-04-00_browser.json")[0]
    assert _usage_of(browser)[0] == (1124, 23)


def test_a_scripted_inspect_model_reports_no_usage_and_stays_version_1():
    """The .eval log's hardcoded model has usage null: every round unknown, no model, v1."""
    path = FIXTURES / "inspect_ai/log_message_deduplication.eval"
    with zipfile.ZipFile(path) as archive:
        sample = json.loads(archive.read("samples/0_epoch_1.json"))
    models = [e for e in sample["events"] if e["event"] == "model"]
    assert models and all(e["output"].get("usage") is None for e in models)
    episode = import_inspect(path)[0]
    assert episode.schema_version == "reviewlab.episode/1"
    assert episode.model is None
    assert all(usage == (None, None) for usage in _usage_of(episode))


def test_swe_agent_keeps_run_totals_in_meta_and_leaves_rounds_unknown():
    """model_stats has totals only: they go to meta, never spread over the rounds."""
    episode = import_swe_agent(FIXTURES / "swe_agent/6e44b9__sweagenttestrepo-1c2844.traj")[0]
    assert (episode.meta["tokens_sent"], episode.meta["tokens_received"]) == ("7141", "243")
    assert episode.meta["model"] == "gpt-4o"
    assert all(usage == (None, None) for usage in _usage_of(episode))


def test_otel_genai_usage_per_chat_span(tmp_path):
    """gen_ai.usage.* on each chat span becomes that round's tokens; a span without them is
    unknown; the response model names the episode's model."""
    path = tmp_path / "trace.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    tracer = provider.get_tracer("test")
    t0 = 1_764_000_000 * 10**9
    agent = tracer.start_span(
        "invoke_agent r", start_time=t0, attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    context = set_span_in_context(agent)

    def span(name, start, end, attrs):
        tracer.start_span(
            name, context=context, start_time=t0 + start * 10**9, attributes=attrs
        ).end(end_time=t0 + end * 10**9)

    span(
        "chat",
        0,
        1,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 7,
        },
    )
    span(
        "execute_tool read_file",
        1,
        2,
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file"},
    )
    span("chat", 2, 3, {"gen_ai.operation.name": "chat"})
    agent.end(end_time=t0 + 3 * 10**9)
    (episode,) = import_otel(path)
    assert episode.schema_version == V2
    assert episode.model == "gpt-4o-mini-2024-07-18"
    assert _usage_of(episode) == [(120, 7), (None, None)]


def test_otel_export_and_import_keep_the_usage(tmp_path):
    """reviewlab's OTel export writes each round's tokens and the model; importing gives them
    back (an unknown round stays unknown)."""
    episodes = import_openhands(FIXTURES / "openhands/basic_gui_mode.json")
    export_otel(episodes, tmp_path / "trace.jsonl")
    (back,) = import_otel(tmp_path / "trace.jsonl")
    assert back.model == episodes[0].model
    assert _usage_of(back) == _usage_of(episodes[0])


def test_token_counts_reads_every_spelling_and_refuses_nonsense():
    """prompt/completion, input/output and gen_ai.usage.* spellings; negatives and text are None."""
    assert token_counts({"prompt_tokens": 5, "completion_tokens": 2}) == (5, 2)
    assert token_counts({"input_tokens": 5.0, "output_tokens": 2}) == (5, 2)
    assert token_counts({"gen_ai.usage.input_tokens": 1}) == (1, None)
    assert token_counts({"input_tokens": -1, "output_tokens": "7"}) == (None, None)
    assert token_counts({"input_tokens": True}) == (None, None)
    assert token_counts(None) == (None, None)


# -- the format ---------------------------------------------------------------------------
def _priced_episode() -> Episode:
    return Episode(
        schema_version=V2,  # type: ignore[call-arg]
        id="u",
        source="live",
        started_at=T0,
        model="m",
        rounds=[
            Round(
                send_sec=1.0,
                calls=[Call(tool="read_file", duration_sec=0.1)],
                input_tokens=10,
                output_tokens=2,
            ),
            Round(send_sec=0.5, input_tokens=12),
        ],
    )


def _plain(episode_id: str = "p", schema: str = "reviewlab.episode/1") -> Episode:
    return Episode(
        schema_version=schema,  # type: ignore[call-arg]
        id=episode_id,
        source="live",
        started_at=T0,
        rounds=[Round(send_sec=1.0)],
    )


def test_jsonl_and_parquet_round_trips_keep_usage_and_the_bytes(tmp_path):
    """JSONL → Parquet → JSONL gives the same bytes with usage, partial usage and none."""
    episodes = [_priced_episode(), _plain(), _plain("q", V2)]
    save_episodes(episodes, tmp_path / "a.jsonl")
    write_columnar(load_episodes(tmp_path / "a.jsonl"), tmp_path / "a.parquet")
    back = load_episodes(tmp_path / "a.parquet")
    assert back == episodes
    save_episodes(back, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_usage_free_episodes_are_written_as_before():
    """Neither a v1 nor a usage-free v2 episode writes the usage keys; one with usage does."""
    assert "input_tokens" not in _plain().to_json_line()
    assert "model" not in json.loads(_plain("q", V2).to_json_line())
    line = json.loads(_priced_episode().to_json_line())
    assert line["model"] == "m"
    assert line["rounds"][1]["output_tokens"] is None


def test_version_1_cannot_carry_usage(tmp_path):
    """A v1 line with a round's tokens or a model is one error naming the line and the field."""
    line = json.loads(_plain().to_json_line())
    line["rounds"][0]["input_tokens"] = 3
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(
        EpisodeFormatError, match=r"bad\.jsonl:1: rounds.*input_tokens needs schema"
    ):
        load_episodes(path)
    line = json.loads(_plain().to_json_line())
    line["model"] = "m"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(EpisodeFormatError, match=r"bad\.jsonl:1: model"):
        load_episodes(path)


def test_parquet_checks_name_row_episode_and_field(tmp_path):
    """Bad usage values in Parquet are listed by row, episode id and dotted field."""
    write_columnar([_priced_episode(), _plain()], tmp_path / "a.parquet")
    table = pq.read_table(tmp_path / "a.parquet")
    tokens = table.column("round_tokens").to_pylist()
    tokens[0][1]["output_tokens"] = -4
    tokens[1] = [{"input_tokens": 1, "output_tokens": 1}]  # an episode of version 1
    index = table.schema.get_field_index("round_tokens")
    table = table.set_column(
        index, "round_tokens", pa.array(tokens, table.schema.field(index).type)
    )
    pq.write_table(table, tmp_path / "bad.parquet")
    with pytest.raises(ColumnarFormatError) as caught:
        load_episodes(tmp_path / "bad.parquet")
    found = {(p.row, p.episode_id, p.field) for p in caught.value.problems}
    assert found == {(1, "u", "rounds.1.output_tokens"), (2, "p", "round_tokens")}


def test_parquet_written_before_usage_existed_reads_as_unknown(tmp_path):
    """A file without the model and round_tokens columns loads; every usage value is None."""
    write_columnar([_plain(), _plain("q", V2)], tmp_path / "a.parquet")
    table = pq.read_table(tmp_path / "a.parquet")
    old = table.drop_columns(["model", "round_tokens"]).replace_schema_metadata(
        table.schema.metadata
    )
    pq.write_table(old, tmp_path / "old.parquet")
    assert load_episodes(tmp_path / "old.parquet") == [_plain(), _plain("q", V2)]


# -- live capture -------------------------------------------------------------------------
class _Model:
    """Replies with usage on the first send only; the third send fails."""

    def __init__(self) -> None:
        self.sends = 0

    def chat(self, **kwargs):
        """One reply per send."""
        self.sends += 1
        if self.sends == 3:
            raise RuntimeError("endpoint down")
        if self.sends == 1:
            return {"content": "a", "usage": {"prompt_tokens": 40, "completion_tokens": 4}}
        return {"content": "b"}


def test_usage_tap_keeps_one_usage_per_send_in_order():
    """A reply's usage, None for a reply without it, None for a send that raised."""
    tap = UsageTap(_Model())
    tap.chat(messages=[])
    tap.chat(messages=[])
    with pytest.raises(RuntimeError):
        tap.chat(messages=[])
    assert tap.usages == [{"prompt_tokens": 40, "completion_tokens": 4}, None, None]
    assert tap.sends == 3  # everything else is the wrapped model's


def test_a_live_run_records_the_usage_its_model_reported(tmp_path):
    """A ScriptedModel run through the tap: rounds carry the reported tokens, the model its name."""
    from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
    from reviewlab.live._inspection import demo_workspace

    root = demo_workspace()
    script = [
        {
            "tool_calls": [tool_call("list_files", {"path": "."})],
            "usage": {"prompt_tokens": 100, "completion_tokens": 9},
        },
        {"content": "done"},
    ]
    tap = UsageTap(ScriptedModel(script))
    result = ReviewEpisode(root, tap).execute()
    episode = episode_from_result(result, id="e", usages=tap.usages, model="scripted")
    assert episode.schema_version == V2
    assert episode.model == "scripted"
    assert _usage_of(episode) == [(100, 9), (None, None)]
    plain = episode_from_result(result, id="e")
    assert plain.schema_version == "reviewlab.episode/1" and plain.model is None
