"""How fast the explorer follows a slider on the bundled 1k corpus (goal: one update within 0.3 s).

One update = replay the corpus under the edited policy with the vectorized
engine (compiled once when the explorer opens), rebuild the metrics table and
redraw the per-tool chart as a PNG. Printed, from one run: the time to open the
explorer, then the median, p95 and max of a full update over many slider
positions, split into replay and chart, and the latency from a slider move to
the finished debounced update (which includes the debounce delay itself).

Run: ``.venv/bin/python benchmarks/bench_widgets.py``
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

from reviewlab.recording.files import load_episodes
from reviewlab.ui.dashboard import default_corpus
from reviewlab.ui.widgets import explore, figure_png

GOAL_SEC = 0.3
UPDATES = 40


def _quantile(values: list[float], q: float) -> float:
    return float(np.quantile(np.asarray(values), q))


def main() -> int:
    corpus_path = Path(sys.argv[1]) if len(sys.argv) > 1 else default_corpus()
    episodes = load_episodes(corpus_path)
    started = time.perf_counter()
    explorer = explore(episodes, debounce_sec=0.15)
    opened = time.perf_counter() - started
    calls = explorer.result.summary["calls"] if explorer.result else 0
    print(f"corpus: {corpus_path.name}, {len(episodes):,} episodes, {calls:,} calls")
    print(f"open explorer (compile + baseline + first update): {opened * 1000:.0f} ms")

    slider = explorer.editor.sliders["query_code"]
    positions = np.geomspace(0.5, 3000.0, UPDATES)
    totals, replays, charts = [], [], []
    for seconds in positions:
        explorer.editor._quiet += 1  # move the slider without scheduling a debounced update
        try:
            slider.value = float(seconds)
        finally:
            explorer.editor._quiet -= 1
        started = time.perf_counter()
        result = explorer.update()
        totals.append(time.perf_counter() - started)
        started = time.perf_counter()
        explorer._replay(explorer.editor.policy)
        replays.append(time.perf_counter() - started)
        started = time.perf_counter()
        figure_png(explorer.figure(result))
        charts.append(time.perf_counter() - started)

    latencies = []
    for seconds in positions[::8]:
        before = explorer.updates
        started = time.perf_counter()
        slider.value = float(seconds) * 1.01
        explorer.wait(timeout=30)
        if explorer.updates > before:
            latencies.append(time.perf_counter() - started)

    median = statistics.median(totals)
    print(
        f"update ({UPDATES} slider positions): median {median * 1000:.0f} ms, "
        f"p95 {_quantile(totals, 0.95) * 1000:.0f} ms, max {max(totals) * 1000:.0f} ms "
        f"(goal <= {GOAL_SEC * 1000:.0f} ms)"
    )
    print(
        f"  of which replay: median {statistics.median(replays) * 1000:.1f} ms; "
        f"chart PNG: median {statistics.median(charts) * 1000:.1f} ms"
    )
    print(
        f"slider move -> debounced update shown (debounce {explorer.debounce_sec * 1000:.0f} ms "
        "included): "
        f"median {statistics.median(latencies) * 1000:.0f} ms over {len(latencies)} moves"
    )
    ok = median <= GOAL_SEC
    print(f"median update: {median:.3f} s (goal <= {GOAL_SEC} s): {'PASS' if ok else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
