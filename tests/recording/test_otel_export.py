"""Exporting recorded episodes as OTLP/JSON, and reading the export back."""

from __future__ import annotations

import json

import pytest

from reviewlab.cli import main
from reviewlab.recording._files import load_episodes
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.recording.interop import export_otel, import_otel
from reviewlab.recording.synth import synth_corpus
from reviewlab.resources import incident_path


def _assert_same(imported: list[Episode], original: list[Episode]) -> None:
    """Equal episodes, times to the nanosecond (OTLP's resolution), everything else exactly."""
    assert len(imported) == len(original)
    for got, want in zip(imported, original, strict=True):
        got_rounds, want_rounds = got.rounds, want.rounds
        assert [len(r.calls) for r in got_rounds] == [len(r.calls) for r in want_rounds], want.id
        for got_round, want_round in zip(got_rounds, want_rounds, strict=True):
            assert got_round.send_sec == pytest.approx(want_round.send_sec, abs=2e-9)
            for got_call, want_call in zip(got_round.calls, want_round.calls, strict=True):
                assert got_call.duration_sec == pytest.approx(want_call.duration_sec, abs=2e-9)
                exact = got_call.model_copy(update={"duration_sec": want_call.duration_sec})
                assert exact == want_call
        same_times = got.model_copy(update={"rounds": want.rounds})
        assert same_times == want


def _corner_episode() -> Episode:
    """Censored, failed, late-returning and overlapping calls, zero-length sends, an extent."""
    return Episode(
        id="corner",
        source="live",
        slot="reviewer-2",
        started_at="2026-11-30T10:00:00.123456+00:00",
        deadline_sec=30.0,
        rounds=[
            Round(send_sec=0.0, calls=[Call(tool="read_file", args={}, duration_sec=0.0)]),
            Round(
                send_sec=0.0,
                calls=[
                    Call(
                        tool="read_file",
                        args={"path": "a.py", "start_line": 1, "end_line": 9},
                        duration_sec=0.3,
                        completed=False,
                        returned_after_sec=4.25,
                        extent=Extent(path="a.py", start_line=1, end_line=9),
                    ),
                    Call(tool="search_code", args={"q": "ü"}, duration_sec=0.1, status="error"),
                    Call(tool="list_files", args={}, duration_sec=0.1, result_chars=17),
                ],
            ),
            Round(send_sec=1.5),
        ],
        end_reason="final_answer",
        task="review",
        meta={"call_offsets_sec": "[[0.0],[0.0,0.0,0.05]]", "model": "m"},
    )


def test_round_trip_of_the_synthetic_corpus_and_the_incident(tmp_path):
    """Exporting synthetic episodes and the incident day, then importing, gives them back."""
    original = synth_corpus(40, seed=3) + list(load_episodes(incident_path()))
    path = tmp_path / "corpus.otlp.jsonl"
    spans = export_otel(original, path)
    assert spans == sum(1 + len(e.rounds) + len(e.calls) for e in original)
    assert len(path.read_text().splitlines()) == len(original)
    imported = sorted(
        import_otel(path), key=lambda e: original.index(next(o for o in original if o.id == e.id))
    )
    _assert_same(imported, original)


def test_round_trip_keeps_overlap_ties_errors_and_late_returns(tmp_path):
    """Corner cases (zero-length sends and calls, simultaneous starts) come back unchanged."""
    original = [_corner_episode()]
    path = tmp_path / "corner.jsonl"
    export_otel(original, path)
    _assert_same(import_otel(path), original)
    spans = json.loads(path.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    censored = next(
        s for s in spans if s["name"] == "execute_tool read_file" and "message" in s["status"]
    )
    assert censored["status"]["code"] == 2


def test_export_cli_writes_otlp_json_that_import_reads(tmp_path, capsys):
    """`reviewlab export otel CORPUS -o FILE` writes a file `reviewlab import otel` reads back."""
    corpus = tmp_path / "c.jsonl"
    original = synth_corpus(5, seed=1)
    from reviewlab.recording._files import save_episodes

    save_episodes(original, corpus)
    out = tmp_path / "trace.jsonl"
    assert main(["export", "otel", str(corpus), "-o", str(out)]) == 0
    assert main(["import", "otel", str(out), "-o", str(tmp_path / "back.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert "exported 5 episode(s)" in printed and "imported 5 episode(s)" in printed
    _assert_same(list(load_episodes(tmp_path / "back.jsonl")), original)


def test_a_failed_export_leaves_the_destination_as_it_was(tmp_path):
    """An export that fails midway (a bad episode source) leaves the old file byte-identical."""
    path = tmp_path / "trace.jsonl"
    path.write_text("old\n")

    def episodes():
        yield from synth_corpus(2, seed=0)
        raise RuntimeError("source broke")

    with pytest.raises(RuntimeError, match="source broke"):
        export_otel(episodes(), path)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["trace.jsonl"]
