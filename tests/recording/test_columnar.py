"""The columnar (Parquet) corpus format: round trips, versioning,
vectorized checks, atomic writes."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reviewlab.cli import main
from reviewlab.recording import Call, Episode, EpisodeFormatError, Extent, Round, SkippedLine
from reviewlab.recording._files import iter_episodes, load_episodes, save_episodes
from reviewlab.recording.columnar import (
    ARROW_SCHEMA,
    ColumnarFormatError,
    episodes_table,
    iter_tables,
    partition_paths,
    write_columnar,
)
from reviewlab.recording.interop import (
    convert_corpus,
    import_inspect,
    import_openhands,
    import_swe_agent,
)
from reviewlab.recording.synth import (
    SynthSizeError,
    draw,
    synth_corpus,
    synth_tables,
    write_synthetic,
)

BUNDLED = Path(__file__).resolve().parents[2] / "reviewlab" / "data" / "episodes"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def imported() -> list[Episode]:
    """Episodes imported from the real logs of other agent systems in tests/fixtures."""
    episodes = [
        *import_openhands(FIXTURES / "openhands" / "basic_gui_mode.json"),
        *import_openhands(FIXTURES / "openhands" / "multi_swe_bench_examples_output.jsonl"),
        *import_inspect(FIXTURES / "inspect_ai" / "2025-05-12T20-27-36-04-00_browser.json"),
        *import_inspect(FIXTURES / "inspect_ai" / "log_message_deduplication.eval"),
        *import_swe_agent(FIXTURES / "swe_agent" / "marshmallow-code__marshmallow-1867.traj"),
    ]
    unique: dict[str, Episode] = {}
    for number, episode in enumerate(episodes):
        key = episode.id if episode.id not in unique else f"{episode.id}#{number}"
        unique[key] = episode.model_copy(update={"id": key})
    return list(unique.values())


def one(id: str = "e1", **changes: object) -> Episode:
    """A small episode with a read extent, a censored call and a non-UTC time stamp."""
    fields: dict[str, object] = dict(
        id=id,
        source="live",
        slot="slot-1",
        started_at=datetime(2025, 5, 1, 9, 0, 0, 123456, tzinfo=timezone(timedelta(hours=-5))),
        deadline_sec=600.0,
        rounds=[
            Round(
                send_sec=1.5,
                calls=[
                    Call(
                        tool="read_file",
                        args={"path": "a.py", "nested": {"x": [1, 2.5, None]}, "é": "ü"},
                        duration_sec=0.25,
                        result_chars=900,
                        extent=Extent(path="a.py", start_line=10, end_line=29),
                    ),
                    Call(
                        tool="query_code",
                        args={"timeout_sec": 5},
                        duration_sec=600.0,
                        completed=False,
                        returned_after_sec=900.5,
                        status="error",
                    ),
                ],
            ),
            Round(send_sec=0.5),
        ],
        meta={"b": "2", "a": "1"},
        task="review",
    )
    fields.update(changes)
    return Episode.model_validate(fields)


@pytest.mark.parametrize("layout", ["file", "partitions"])
def test_bundled_corpus_round_trips_to_the_same_bytes(tmp_path: Path, layout: str) -> None:
    """JSONL.gz → Parquet (one file or partitions) → JSONL.gz gives the bundled bytes back."""
    source = BUNDLED / "synthetic-1k.jsonl.gz"
    middle = tmp_path / ("c.parquet" if layout == "file" else "parts")
    written = convert_corpus(source, middle, rows_per_partition=None if layout == "file" else 300)
    assert written == 1000
    assert len(partition_paths(middle)) == (1 if layout == "file" else 4)
    assert load_episodes(middle) == load_episodes(source)
    convert_corpus(middle, tmp_path / "back.jsonl.gz")
    assert (tmp_path / "back.jsonl.gz").read_bytes() == source.read_bytes()


def test_imported_fixtures_round_trip(tmp_path: Path) -> None:
    """Episodes imported from OpenHands, Inspect AI and SWE-agent logs survive Parquet unchanged."""
    episodes = imported()
    assert len(episodes) >= 5
    save_episodes(episodes, tmp_path / "a.jsonl")
    save_episodes(episodes, tmp_path / "a.parquet")
    assert list(iter_episodes(tmp_path / "a.parquet")) == episodes
    convert_corpus(tmp_path / "a.parquet", tmp_path / "b.jsonl")
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()


def test_time_zones_args_and_meta_order_survive(tmp_path: Path) -> None:
    """UTC offsets, microseconds, nested unicode args and meta order come back identical."""
    episodes = [one("a"), one("b", started_at=datetime(2025, 1, 1, tzinfo=UTC), meta={})]
    save_episodes(episodes, tmp_path / "x.parquet")
    back = load_episodes(tmp_path / "x.parquet")
    assert [e.to_json_line() for e in back] == [e.to_json_line() for e in episodes]
    assert back[0].started_at.utcoffset() == timedelta(hours=-5)


def v2(id: str = "v2") -> Episode:
    """A version 2 episode whose call carries a transport, progress times and cancel fields."""
    data = one(id).model_dump(by_alias=True)
    data["schema"] = "reviewlab.episode/2"
    data["rounds"][0]["calls"][1].update(
        transport="mcp", progress_sec=[0.5, 0.5, 2.0], cancel_sent=True, cancel_honoured_sec=0.25
    )
    return Episode.model_validate(data)


def test_version_2_fields_and_mixed_versions_round_trip(tmp_path: Path) -> None:
    """A corpus mixing version 1 and 2 episodes comes back with each episode's own version."""
    episodes = [one("a"), v2("b")]
    save_episodes(episodes, tmp_path / "m.jsonl")
    convert_corpus(tmp_path / "m.jsonl", tmp_path / "m.parquet")
    back = load_episodes(tmp_path / "m.parquet")
    assert [e.schema_version for e in back] == ["reviewlab.episode/1", "reviewlab.episode/2"]
    assert back[1].rounds[0].calls[1].progress_sec == [0.5, 0.5, 2.0]
    convert_corpus(tmp_path / "m.parquet", tmp_path / "back.jsonl")
    assert (tmp_path / "back.jsonl").read_bytes() == (tmp_path / "m.jsonl").read_bytes()


def test_bad_version_2_values_are_named(tmp_path: Path) -> None:
    """Progress going back in time, an unknown transport and v2 fields in a v1 episode are named."""
    rows = episodes_table([one("a"), v2("b")]).to_pylist()
    rows[0]["rounds"][0]["calls"][0]["transport"] = "thread"
    rows[1]["rounds"][0]["calls"][1]["progress_sec"] = [1.0, 0.5]
    rows[1]["rounds"][0]["calls"][0]["transport"] = "smoke-signal"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA), tmp_path / "v.parquet")
    with pytest.raises(ColumnarFormatError) as caught:
        load_episodes(tmp_path / "v.parquet")
    assert {(p.row, p.field) for p in caught.value.problems} == {
        (1, "rounds.0.calls.0.transport"),
        (2, "rounds.0.calls.1.progress_sec.1"),
        (2, "rounds.0.calls.0.transport"),
    }
    assert "needs schema 'reviewlab.episode/2'" in str(caught.value)


def test_synth_columns_equal_the_validated_episodes() -> None:
    """The columnar generator writes exactly the episodes
    synth_corpus validates, for any batching."""
    cases: list[tuple[int, int, dict[str, Any]]] = [
        (0, 0, {}),
        (1, 1, {}),
        (1500, 0, {}),
        (700, 4, {"tail_scale": 50.0}),
    ]
    for n, seed, overrides in cases:
        built = pa.concat_tables(list(synth_tables(draw(n, seed=seed, **overrides), batch=333)))
        assert built.equals(episodes_table(synth_corpus(n, seed=seed, **overrides))), (n, seed)


def test_write_synthetic_parquet_loads_as_the_same_corpus(tmp_path: Path) -> None:
    """``write_synthetic`` to .parquet and to .jsonl.gz hold the same episodes."""
    write_synthetic(tmp_path / "s.parquet", 400, seed=9)
    write_synthetic(tmp_path / "s.jsonl.gz", 400, seed=9)
    assert load_episodes(tmp_path / "s.parquet") == load_episodes(tmp_path / "s.jsonl.gz")


def _corrupt(tmp_path: Path) -> Path:
    """A Parquet corpus with five bad values in rows 2 and 3 (and a good row 1)."""
    table = episodes_table([one("a"), one("b"), one("c")]).to_pylist()
    table[1]["rounds"][0]["calls"][1]["duration_sec"] = -3.0
    table[1]["rounds"][1]["send_sec"] = float("nan")
    table[2]["rounds"][0]["calls"][0]["status"] = "crashed"
    table[2]["rounds"][0]["calls"][0]["extent"] = {"path": "a.py", "start_line": 9, "end_line": 2}
    table[2]["source"] = "carrier-pigeon"
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(table, schema=ARROW_SCHEMA), path)
    return path


def test_every_bad_value_is_named_by_row_episode_and_field(tmp_path: Path) -> None:
    """One error lists every bad value of a corrupt file with its
    row, episode id and dotted field."""
    path = _corrupt(tmp_path)
    with pytest.raises(ColumnarFormatError) as caught:
        load_episodes(path)
    found = {(p.row, p.episode_id, p.field) for p in caught.value.problems}
    assert found == {
        (2, "b", "rounds.0.calls.1.duration_sec"),
        (2, "b", "rounds.1.send_sec"),
        (3, "c", "source"),
        (3, "c", "rounds.0.calls.0.status"),
        (3, "c", "rounds.0.calls.0.extent"),
    }
    text = str(caught.value)
    assert str(path) in text and "row 2 (episode 'b')" in text and "got -3.0" in text
    assert "'crashed' is not one of ok, error" in text and "end_line 2 is before" in text


def test_skip_mode_keeps_the_good_rows_and_reports_the_bad(tmp_path: Path) -> None:
    """With on_error='skip' the good episode loads and each bad value is a SkippedLine."""
    loaded = load_episodes(_corrupt(tmp_path), on_error="skip")
    assert [e.id for e in loaded] == ["a"]
    assert {(s.line, s.field) for s in loaded.skipped} >= {(2, "rounds.1.send_sec"), (3, "source")}
    assert all(isinstance(s, SkippedLine) and "episode '" in s.message for s in loaded.skipped)


def test_bad_args_json_is_named(tmp_path: Path) -> None:
    """Arguments that are not the JSON of an object are refused naming the call."""
    rows = episodes_table([one("a")]).to_pylist()
    rows[0]["rounds"][0]["calls"][1]["args"] = "[1, 2]"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA), tmp_path / "a.parquet")
    with pytest.raises(EpisodeFormatError, match=r"rounds\.0\.calls\.1\.args"):
        load_episodes(tmp_path / "a.parquet")
    rows[0]["rounds"][0]["calls"][1]["args"] = "{not json}"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA), tmp_path / "b.parquet")
    with pytest.raises(EpisodeFormatError, match=r"b\.parquet:1: rounds\.0\.calls\.1\.args"):
        load_episodes(tmp_path / "b.parquet")


def test_version_and_columns_are_checked(tmp_path: Path) -> None:
    """No version metadata, another version, a missing or unknown column, not Parquet: refused."""
    table = episodes_table([one("a")])
    pq.write_table(table.replace_schema_metadata({}), tmp_path / "none.parquet")
    with pytest.raises(EpisodeFormatError, match="missing schema version"):
        load_episodes(tmp_path / "none.parquet")
    meta = dict(ARROW_SCHEMA.metadata)
    meta[b"reviewlab.schema"] = b"reviewlab.episode/9"
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "v9.parquet")
    with pytest.raises(EpisodeFormatError, match="unsupported schema version"):
        load_episodes(tmp_path / "v9.parquet")
    pq.write_table(table.drop_columns(["slot"]), tmp_path / "slotless.parquet")
    with pytest.raises(EpisodeFormatError, match="slot: missing column"):
        load_episodes(tmp_path / "slotless.parquet")
    extra = table.append_column("colour", pa.array(["red"]))
    pq.write_table(extra.replace_schema_metadata(ARROW_SCHEMA.metadata), tmp_path / "x.parquet")
    with pytest.raises(EpisodeFormatError, match="colour: unknown column"):
        load_episodes(tmp_path / "x.parquet")
    (tmp_path / "text.parquet").write_text("hello")
    with pytest.raises(EpisodeFormatError, match="not a Parquet file"):
        load_episodes(tmp_path / "text.parquet")


def test_ids_are_unique_across_partitions(tmp_path: Path) -> None:
    """A repeated id in a later partition is named with the partition that had it first."""
    parts = tmp_path / "parts"
    write_columnar([one("a"), one("b")], parts, rows_per_partition=1)
    pq.write_table(episodes_table([one("a")]), parts / "part-00002.parquet")
    with pytest.raises(ColumnarFormatError, match=r"duplicate episode id 'a' \(first on row 1 of"):
        list(iter_tables(parts))


def test_a_failed_write_leaves_the_destination_untouched(tmp_path: Path) -> None:
    """A duplicate id aborts the write: the old file stays byte-identical, no temporary is left."""
    target = tmp_path / "c.parquet"
    save_episodes([one("a")], target)
    before = target.read_bytes()
    with pytest.raises(ValueError, match="duplicate episode id 'b'"):
        save_episodes([one("b"), one("c"), one("b")], target)
    assert target.read_bytes() == before
    parts = tmp_path / "parts"
    save_episodes([one("a")], parts, rows_per_partition=5)
    with pytest.raises(ValueError, match="duplicate"):
        save_episodes([one("z"), one("z")], parts, rows_per_partition=1)
    assert [e.id for e in load_episodes(parts)] == ["a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.parquet", "parts"]


def _child_peak_mib(code: str) -> float:
    """Peak RSS growth (MiB) of a fresh interpreter running ``code``, after its imports.

    The peak is reset after importing (Linux ``clear_refs``), so the figure is what
    ``code`` itself added at its highest, whatever the imports cost.
    """
    script = (
        "import re\n"
        "from reviewlab.recording.synth import synth_corpus, write_synthetic\n"
        "def rss(key):\n"
        "    text = open('/proc/self/status').read()\n"
        "    return int(re.search(key + r':\\s+(\\d+)', text).group(1))\n"
        "open('/proc/self/clear_refs', 'w').write('5')\n"
        "before = rss('VmRSS')\n"
        f"{code}\n"
        "print(rss('VmHWM') - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1]) / 1024


def test_synth_streams_with_bounded_memory(tmp_path: Path) -> None:
    """Writing 8,000 episodes grows the process by the draws only, unlike holding the episodes."""
    out = tmp_path / "big.jsonl.gz"
    streamed = _child_peak_mib(f"write_synthetic({str(out)!r}, 8_000, seed=1, progress=False)")
    held = _child_peak_mib("corpus = synth_corpus(8_000, seed=1)")
    assert held > 80, held  # what holding 8,000 Episode objects costs
    assert streamed < 30, streamed
    assert sum(1 for _ in iter_episodes(out)) == 8_000


def test_impossible_synth_sizes_are_refused() -> None:
    """A size that is not a count, or whose draws cannot fit in memory, is a SynthSizeError."""
    for bad in (-1, 2.5, True, 10**15):
        with pytest.raises(SynthSizeError):
            draw(bad)  # type: ignore[arg-type]


def test_cli_convert_and_synth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``convert`` writes each format; ``synth`` writes Parquet and
    refuses a huge -n in one line."""
    source = BUNDLED / "synthetic-1k.jsonl.gz"
    assert main(["convert", str(source), str(tmp_path / "c.parquet")]) == 0
    assert main(["convert", str(tmp_path / "c.parquet"), str(tmp_path / "parts")]) == 0
    assert main(["convert", str(tmp_path / "parts"), str(tmp_path / "c.jsonl.gz")]) == 0
    assert (tmp_path / "c.jsonl.gz").read_bytes() == source.read_bytes()
    assert "wrote 1000 episode(s)" in capsys.readouterr().out
    assert main(["synth", "-n", "50", "-o", str(tmp_path / "s.parquet")]) == 0
    assert len(load_episodes(tmp_path / "s.parquet")) == 50
    capsys.readouterr()
    assert main(["synth", "-n", str(10**15), "-o", str(tmp_path / "h.parquet")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GiB" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "h.parquet").exists()
    assert (
        main(["convert", str(_corrupt(tmp_path)), str(tmp_path / "ok.jsonl"), "--on-error", "skip"])
        == 0
    )
    assert "skipped" in capsys.readouterr().err
    assert [e.id for e in load_episodes(tmp_path / "ok.jsonl")] == ["a"]
