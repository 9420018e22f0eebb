"""Benchmark the OpenTelemetry paths: trace import and export speed, and the cost of tracing off.

Prints, in one run:

* export and import throughput on the bundled 1,000-episode corpus written as OTLP/JSON
  (spans per second; goal: import ≥ 2,000 spans/s on this 2-core machine, so 100,000 spans
  of traces import in under a minute);
* the round trip's exactness on that corpus (episodes whose calls differ; goal: 0);
* the per-call cost of the live span hook when no tracer provider is configured (median of
  batches, µs; goal ≤ 10 µs: small next to a thread hand-off per call).

Exits non-zero when a goal is missed.
Run: ``.venv/bin/python benchmarks/bench_otel.py [--busy]`` (``--busy``: beside a CPU-bound
neighbour process, ``_busy.py``; each figure says which).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _busy import add_busy_flag, machine_label, neighbour

from reviewlab.live import _otel as otel
from reviewlab.recording import load_episodes
from reviewlab.recording.interop import export_otel, read_otel
from reviewlab.resources import corpus_path

IMPORT_GOAL_SPANS_PER_SEC = 2_000.0
OFF_COST_GOAL_US = 10.0


def _same(a, b) -> bool:
    """Two episodes agree call by call (times to 2 ns)."""
    if len(a.calls) != len(b.calls):
        return False
    for x, y in zip(a.calls, b.calls, strict=True):
        if abs(x.duration_sec - y.duration_sec) > 2e-9:
            return False
        if x.model_copy(update={"duration_sec": y.duration_sec}) != y:
            return False
    return True


def main() -> int:
    """Run the three measurements, print figures and verdicts; 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_busy_flag(parser)
    args = parser.parse_args()
    label = machine_label(args.busy)
    with neighbour(args.busy):
        figures = _measure()
    corpus, spans, export_sec, import_sec, differing, off_us = figures
    rate = spans / import_sec
    ok_import = rate >= IMPORT_GOAL_SPANS_PER_SEC
    ok_exact = differing == 0
    ok_off = off_us <= OFF_COST_GOAL_US
    print(
        f"export ({label}): {len(corpus)} episodes, {spans} spans in {export_sec:.2f} s "
        f"({spans / export_sec:,.0f} spans/s)"
    )
    print(
        f"import ({label}): {rate:,.0f} spans/s (goal >= {IMPORT_GOAL_SPANS_PER_SEC:,.0f}) "
        f"{'PASS' if ok_import else 'FAIL'}"
    )
    print(
        f"round trip ({label}): {differing} episode(s) differ (goal 0) "
        f"{'PASS' if ok_exact else 'FAIL'}"
    )
    print(
        f"span hook with tracing off ({label}): {off_us:.2f} us/call (goal <= "
        f"{OFF_COST_GOAL_US:.0f}) {'PASS' if ok_off else 'FAIL'}"
    )
    return 0 if ok_import and ok_exact and ok_off else 1


def _measure() -> tuple[list, int, float, float, int, float]:
    """Export, import and compare the bundled corpus; time the span hook with tracing off."""
    corpus = list(load_episodes(corpus_path()))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.otlp.jsonl"
        start = time.perf_counter()
        spans = export_otel(corpus, path)
        export_sec = time.perf_counter() - start
        start = time.perf_counter()
        result = read_otel(path)
        import_sec = time.perf_counter() - start
    by_id = {episode.id: episode for episode in result.episodes}
    differing = sum(not _same(episode, by_id[episode.id]) for episode in corpus)
    batches = []
    for _ in range(21):
        start = time.perf_counter()
        for _ in range(20_000):
            otel.active_tracer()
        batches.append((time.perf_counter() - start) / 20_000 * 1e6)
    off_us = statistics.median(batches)
    return corpus, spans, export_sec, import_sec, differing, off_us


if __name__ == "__main__":
    sys.exit(main())
