"""How fast the widgets follow the reader (goal: every update within 0.3 s).

Two parts, each with a verdict; exit status 1 on any miss.

* **The explorer** on the bundled 1k corpus: one update = replay the corpus under the edited
  policy with the vectorized engine (compiled once when the explorer opens), rebuild the metrics
  table and redraw the per-tool chart as a PNG. Printed: the time to open it, the median, p95 and
  max of a full update over many slider positions, split into replay and chart, and the latency
  from a slider move to the finished debounced update (debounce included). Judged on the median.
* **The scenes** of notebooks 01 and 07 (:mod:`reviewlab.ui.scenes`): every control of every
  scene moved through its range as a reader moves it, each move timed from the change to the
  redrawn PNG and the rewritten outcome (a button's action included: releasing a worker waits
  until it has retired). The scenes' replay caches are emptied before each scene is built; a
  slider position never shown replays on the twin (every slider value below is new), a toggle
  back to a position already shown reuses its replay, as on the page. Judged on the slowest move
  of each scene; the median cold replay of a move (both behaviours of a failure scene) is printed
  beside it. The live scenes' construction (a real episode that waits out its bound) and the fresh
  episode of "run the episode again" (on a thread of its own; the page stays live) are printed
  for information.

Run: ``.venv/bin/python benchmarks/bench_widgets.py [CORPUS] [--scenes-only] [--busy]``
(``--busy``: every part runs beside a CPU-bound neighbour process, ``_busy.py``; each verdict
says which condition it was measured in).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _busy import add_busy_flag, machine_label, neighbour

from reviewlab.recording import load_episodes
from reviewlab.ui import default_corpus, explore, figure_png
from reviewlab.ui.scenes import (
    AbandonmentScene,
    BoundScene,
    CensoringScene,
    CreditingScene,
    HiddenClockScene,
    Scene,
)
from reviewlab.ui.scenes import _bound as bound
from reviewlab.ui.scenes import _censoring as censoring
from reviewlab.ui.scenes import _hidden_clocks as hidden_clocks
from reviewlab.ui.scenes import _no_bound as no_bound
from reviewlab.ui.scenes import _progress_cap as progress_cap
from reviewlab.ui.scenes import _zombies as zombies
from reviewlab.ui.scenes._crediting import CREDITING_RULES
from reviewlab.ui.scenes._failure import FailureScene

GOAL_SEC = 0.3
UPDATES = 40
REPEATS = 3
"""Tries per control move; the best one counts (the machine is shared: one try can be preempted)."""
_CACHED = (
    bound.run_bound,
    censoring.run_censoring,
    no_bound.run_pool,
    hidden_clocks.run_hidden_clocks,
    zombies.run_zombies,
    progress_cap.run_progress_cap,
)
"""The scenes' replay caches, emptied before each scene is built."""


def _quantile(values: list[float], q: float) -> float:
    return float(np.quantile(np.asarray(values), q))


_CONDITION = {"label": machine_label(False)}
"""The condition every verdict names (``quiet``, or ``busy`` under ``--busy``)."""


def _verdict(ok: bool) -> str:
    return f"{'PASS' if ok else 'MISS'} ({_CONDITION['label']})"


# -- the explorer ----------------------------------------------------------------------------------


def bench_explorer(corpus_path: Path) -> bool:
    """The explorer's updates over ``UPDATES`` slider positions; True when the median meets the
    goal."""
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
    print(f"explorer median update: {median:.3f} s (goal <= {GOAL_SEC} s): {_verdict(ok)}")
    return ok


# -- the scenes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """One thing a reader does to a scene: set ``control`` to ``value``, or run ``action``."""

    name: str
    control: Any = None
    value: Any = None
    action: Callable[[], Any] | None = None
    fresh: bool = False
    """A position never shown before (a new slider value): its replay is cold every time."""
    informational: bool = False
    """Timed and printed, not judged (it is not an update: a live episode waits its bound)."""


def _toggles(control: Any, values: list[Any], rounds: int = 2) -> list[Move]:
    """Each value in turn, ``rounds`` times (the first value last, so a change always happens)."""
    order = [*values[1:], values[0]] * rounds
    return [Move(f"{control.description}={value}", control, value) for value in order]


def _slides(control: Any, values: tuple[float, ...]) -> list[Move]:
    return [Move(f"{control.description}={v:g}", control, v, fresh=True) for v in values]


def scene_moves(scene: Scene) -> list[Move]:
    """Every control of ``scene`` moved through its range."""
    if isinstance(scene, BoundScene):
        return [
            *_slides(scene.deadline, (70.0, 45.0, 38.0, 30.0, 20.0, 10.0, 0.0, 90.0)),
            *_slides(scene.timeout, (5.0, 50.0, 120.0, 30.0)),
            *_toggles(scene.narrowing, list(bound.NARROWINGS)),
        ]
    if isinstance(scene, AbandonmentScene):
        moves: list[Move] = []
        for _ in range(3):
            moves.append(Move("release", action=scene.release_button.click))
            moves.append(Move("run again (click)", action=scene.again_button.click))
            moves.append(Move("fresh episode shown", action=scene.wait, informational=True))
        return moves
    if isinstance(scene, CreditingScene):
        return _toggles(scene.rule, list(CREDITING_RULES), rounds=3)
    if isinstance(scene, CensoringScene):
        return [
            *_toggles(scene.censored, list(censoring.CENSORINGS)),
            *_toggles(scene.policy, list(scene.POLICIES)),
            *_toggles(scene.censored, list(censoring.CENSORINGS)),
        ]
    assert isinstance(scene, FailureScene), scene
    moves = _toggles(scene.mode, ["broken", "reviewlab"], rounds=3)
    if isinstance(scene, HiddenClockScene):
        moves += _slides(scene.call, (30.0, 59.0, 61.0, 120.0, 299.0, 301.0, 400.0, 64.0))
    return moves


def _clear_caches() -> None:
    for function in _CACHED:
        function.cache_clear()


def time_move(move: Move, repeats: int = REPEATS) -> tuple[float, float]:
    """``(wall, cpu)`` seconds from the move to the redrawn scene: the best of ``repeats`` tries for
    a control (undone, untimed, between tries; a fresh position replays cold each time), one for a
    button. ``cpu`` is the process's CPU time (all its threads): what the move costs on a machine
    nobody else uses."""
    if move.action is not None:
        wall, cpu = time.perf_counter(), time.process_time()
        move.action()
        return time.perf_counter() - wall, time.process_time() - cpu
    previous = move.control.value
    best = (float("inf"), float("inf"))
    for attempt in range(repeats):
        if attempt:
            move.control.value = previous
        if move.fresh:
            _clear_caches()
        wall, cpu = time.perf_counter(), time.process_time()
        move.control.value = move.value
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    return best


def bench_scene(scene_type: type[Scene]) -> bool:
    """Every move of one scene; True when the slowest judged move meets the goal."""
    _clear_caches()
    started = time.perf_counter()
    scene = scene_type()
    built = time.perf_counter() - started
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    informational: dict[str, list[float]] = {}
    cold: list[float] = []
    for move in scene_moves(scene):
        elapsed, cpu = time_move(move)
        if move.informational:
            informational.setdefault(move.name, []).append(elapsed)
            continue
        walls.setdefault(move.name, []).append(elapsed)
        cpus.setdefault(move.name, []).append(cpu)
        _clear_caches()
        started = time.perf_counter()
        scene.compute()
        cold.append(time.perf_counter() - started)
    if isinstance(scene, AbandonmentScene):
        scene.run.release()
    # A move made several times (a toggle back and forth, a button pressed again) counts its best.
    judged = [(name, min(times)) for name, times in walls.items()]
    worst_name, worst = max(judged, key=lambda item: item[1])
    worst_cpu = max(min(times) for times in cpus.values())
    ok = worst <= GOAL_SEC
    extra = "".join(
        f"; {name} {statistics.median(times):.3f} s" for name, times in informational.items()
    )
    median = statistics.median(elapsed for _, elapsed in judged)
    print(
        f"{scene_type.__name__:<18} {len(judged):>3} positions: median {median:.3f} s, "
        f"max {worst:.3f} s ({worst_name}); CPU max {worst_cpu:.3f} s; "
        f"cold replay {statistics.median(cold):.3f} s; "
        f"built in {built:.2f} s{extra}: {_verdict(ok)}"
    )
    return ok


def bench_scenes() -> bool:
    """Every scene of notebooks 01 and 07; True when all meet the goal."""
    from reviewlab.ui.scenes import FAILURE_SCENES, SEMANTICS_SCENES

    print(f"scenes: every move as a reader makes it, goal <= {GOAL_SEC} s (the slowest judged)")
    results = [bench_scene(scene_type) for scene_type in (*SEMANTICS_SCENES, *FAILURE_SCENES)]
    ok = all(results)
    print(f"scenes: {sum(results)} of {len(results)} within the goal: {_verdict(ok)}")
    return ok


def main(argv: list[str]) -> int:
    """Run both parts (``--scenes-only``: the scenes alone); 1 on any miss."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("corpus", nargs="?", default=None)
    parser.add_argument("--scenes-only", action="store_true")
    add_busy_flag(parser)
    args = parser.parse_args(argv)
    _CONDITION["label"] = machine_label(args.busy)
    load = os.getloadavg()
    print(
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs "
        f"({_CONDITION['label']})"
    )
    ok = True
    with neighbour(args.busy):
        if not args.scenes_only:
            ok = bench_explorer(Path(args.corpus) if args.corpus else default_corpus()) and ok
            print()
        ok = bench_scenes() and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
