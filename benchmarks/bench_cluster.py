"""Cluster-sweep figures of issue 26, each measured in a child process, with a verdict per goal.

Run: ``.venv/bin/python benchmarks/bench_cluster.py`` (about 10 minutes on 2 cores, the
``tune`` part 1.5 of them; the corpora are generated once into ``--cache`` by the synthetic
corpus's streaming writer, outside every figure; ``--only memory``, ``--only tune`` or
``--only large`` runs one part).

Figures and goals:

* ``memory``: the client's peak traced memory (``tracemalloc``, started just before the sweep;
  the ``LocalCluster``'s scheduler runs in the client's process and is traced with it) during
  a sweep of a 6-point grid on a 2-worker ``LocalCluster`` (worker processes, one thread each),
  for ``--small`` (50,000) and 4× as many episodes (200,000), 4 partitions each time — goal:
  ×1.5 at most for ×4 the episodes. The same 200,000 episodes in 16 partitions are measured
  beside it (what the client's memory grows with: partitions).
* ``tune``: the client's peak traced memory (``tracemalloc``, started just before the call; the
  scheduler traced with it) and wall time of ``recommend(corpus, client=...)`` (default
  arguments) on the same 2-worker ``LocalCluster``, for the memory part's corpora: ``--small``
  and 4× as many episodes, 4 partitions each time — goal: ×1.5 at most for ×4 the episodes.
  Beside it, in-process ``recommend(corpus)`` on the 4× corpus: its time and peak traced
  memory (no goal; context), and a goal: the cluster's recommended policy equals the
  in-process one there.
* ``large``: ``--large`` (4,000,000) episodes in ``--partitions`` (16) partitions on a
  2-worker ``LocalCluster``, end to end (open: survey + compile + id check, then a 10-point
  sweep), the client's peak RSS (its process's ``VmHWM``, the scheduler included) and each
  worker's; the per-partition costs from Dask's task stream (compute seconds by stage). Goal:
  the run completes and its frame equals the in-process sweep of the same partitions, every
  column (``--no-check`` skips the in-process sweep, a few GiB and a minute).
* ``extrapolation``: 100,000,000 episodes (400 partitions of 250,000) on 10 and 100 one-core
  workers, from the measured per-partition costs; printed, no goal.

Exit status 1 when a goal is missed. ``--json FILE`` writes every figure. ``--busy``: the parts
run beside a CPU-bound neighbour process (``_busy.py``); each verdict says which condition it
was measured in.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _busy import add_busy_flag, machine_label, neighbour

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
TARGET_EPISODES = 100_000_000
TARGET_PARTITION_ROWS = 250_000


def _peak_bytes() -> int:
    """This process's peak resident memory (``VmHWM``; see ``bench_corpus._peak_bytes``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def grid_6() -> Any:
    """The memory figure's 6 points: 3 scales of the reference policy × 2 narrowings."""
    from reviewlab.analysis.sweep import make_grid
    from reviewlab.core import Narrowing, TimeoutPolicy

    return make_grid(
        TimeoutPolicy.ouroboros(),
        scales=[0.05, 0.2, 1.0],
        narrowings=[Narrowing(), Narrowing("reserve", reserve_sec=30.0)],
    )


def grid_10() -> Any:
    """The large run's 10 points: 5 scales × 2 read_file timeouts (0.1-2 % abandoned)."""
    from reviewlab.analysis.sweep import make_grid
    from reviewlab.core import TimeoutPolicy

    return make_grid(
        TimeoutPolicy.ouroboros(),
        scales=[0.05, 0.2, 0.5, 1.0, 2.0],
        tools={"read_file": [10.0, 60.0]},
    )


def _cluster() -> Any:
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        memory_limit=0,  # the figures, not Dask's memory manager, say what a worker needs
    )


# -- children -------------------------------------------------------------------------------


def child_corpus(path: str, n: int, rows: int) -> dict[str, Any]:
    """Generate ``n`` synthetic episodes into partitions of ``rows`` at ``path`` (once)."""
    from reviewlab.recording.columnar import write_tables
    from reviewlab.recording.synth import draw, synth_tables

    start = time.perf_counter()
    written = write_tables(synth_tables(draw(n, seed=0)), path, rows_per_partition=rows)
    return {"episodes": written, "sec": time.perf_counter() - start}


def child_memory(path: str) -> dict[str, Any]:
    """The client's peak traced memory during a 6-point cluster sweep of ``path``."""
    import tracemalloc

    from distributed import Client

    from reviewlab.analysis.sweep import sweep

    grid = grid_6()
    with _cluster() as cluster, Client(cluster) as client:
        sweep(path, grid, client=client)  # warm: imports, the workers' first tasks
        tracemalloc.start()
        start = time.perf_counter()
        frame = sweep(path, grid, client=client)
        sec = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {"episodes": int(frame["episodes"][0]), "traced_peak_bytes": peak, "sec": sec}


def child_tune(path: str, cluster: int) -> dict[str, Any]:
    """``recommend(path)``, default arguments, on a 2-worker cluster (``cluster`` 1) or in-process
    (0): the client's peak traced memory during the call, its wall time, the policy's TOML."""
    import tracemalloc
    from contextlib import ExitStack

    from distributed import Client

    from reviewlab.analysis import recommend

    with ExitStack() as stack:
        client = None
        if cluster:
            client = stack.enter_context(Client(stack.enter_context(_cluster())))
        recommend(path, client=client)  # warm: imports, the workers' first tasks
        tracemalloc.start()
        start = time.perf_counter()
        got = recommend(path, client=client)
        sec = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {
        "episodes": int(got.summary["episodes"]),
        "traced_peak_bytes": peak,
        "sec": sec,
        "policy": got.policy.to_toml(),
    }


def child_large(path: str, out: str) -> dict[str, Any]:
    """The large run: open + 10-point sweep on a 2-worker cluster; RSS and task costs."""
    from distributed import Client, get_task_stream

    from reviewlab.engines.cluster import ClusterCorpus

    grid = grid_10()
    with _cluster() as cluster, Client(cluster) as client:
        client.wait_for_workers(2)
        cpu_start = time.process_time()
        with get_task_stream(client) as stream:
            start = time.perf_counter()
            with ClusterCorpus.open(path, client) as corpus:
                opened = time.perf_counter()
                rows = corpus.summaries([point.policy for point in grid])
                done = time.perf_counter()
                passes = list(corpus.passes)
                partitions = len(corpus.partitions)
        client_cpu = time.process_time() - cpu_start
        workers = client.run(_peak_bytes)
    import pandas as pd

    pd.DataFrame(rows).to_parquet(out)
    stages: dict[str, list[float]] = {}
    for task in stream.data:
        key = str(task["key"])
        stage = key.split("-")[1] if key.startswith("reviewlab-") else "other"
        for part in task["startstops"]:
            if part["action"] == "compute":
                stages.setdefault(stage, []).append(part["stop"] - part["start"])
    return {
        "episodes": int(rows[0]["episodes"]),
        "calls": int(rows[0]["calls"]),
        "partitions": partitions,
        "points": len(rows),
        "open_sec": opened - start,
        "sweep_sec": done - opened,
        "total_sec": done - start,
        "passes": passes,
        "client_cpu_sec": client_cpu,
        "client_peak_bytes": _peak_bytes(),
        "worker_peak_bytes": sorted(workers.values()),
        "stage_sec": {stage: sum(values) for stage, values in stages.items()},
        "stage_tasks": {stage: len(values) for stage, values in stages.items()},
    }


def child_check(path: str, frame: str) -> dict[str, Any]:
    """Whether the in-process sweep of ``path`` equals the cluster's summaries, every column
    (the parameter columns are the grid's on both sides)."""
    import pandas as pd

    from reviewlab.analysis.sweep import sweep
    from reviewlab.core import SUMMARY_KEYS

    start = time.perf_counter()
    expected = pd.DataFrame(sweep(path, grid_10()))[list(SUMMARY_KEYS)]  # as the file: plain
    got = pd.read_parquet(frame)[list(SUMMARY_KEYS)]
    try:
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        equal, detail = True, ""
    except AssertionError as exc:
        equal, detail = False, str(exc).splitlines()[0]
    return {
        "equal": equal,
        "detail": detail,
        "sec": time.perf_counter() - start,
        "peak_bytes": _peak_bytes(),
    }


def child_partition(part: str) -> dict[str, Any]:
    """One partition's worker work, alone in a process, in CPU seconds (robust to a machine
    shared with other work): survey, compile, then the 10 points evaluated and every answer
    pass they take, as one worker does them."""
    from reviewlab.engines.cluster import _ids
    from reviewlab.engines.cluster._partials import PointMerge, answer_points, evaluate_points
    from reviewlab.engines.cluster._session import _compile

    grid = grid_10()
    clock = time.process_time
    start = clock()
    survey = _ids.survey(part, 16)
    surveyed = clock()
    compiled = _compile(part, "wedge", 0, survey.first_started_us or 0)
    made = clock()
    states = evaluate_points(compiled, [p.policy for p in grid], 0, compiled.calls)
    merges = [PointMerge(len(compiled.episode_ids), compiled.calls) for _ in grid]
    first, passes = True, 0
    while True:
        asked = [m.requests(first) for m in merges]
        if all(a is None for a in asked):
            break
        for merge, answer in zip(merges, answer_points(states, asked), strict=True):
            if answer is not None:
                merge.take(answer)
        for merge in merges:
            merge.close_pass()
        first, passes = False, passes + 1
    done = clock()
    return {
        "episodes": len(compiled.episode_ids),
        "survey_cpu_sec": surveyed - start,
        "compile_cpu_sec": made - surveyed,
        "points_cpu_sec": done - made,
        "points": len(grid),
        "passes": passes,
        "peak_bytes": _peak_bytes(),
    }


CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "check": child_check,
    "corpus": child_corpus,
    "large": child_large,
    "memory": child_memory,
    "partition": child_partition,
    "tune": child_tune,
}


def run_child(name: str, *args: Any) -> dict[str, Any]:
    """Run one child in a fresh interpreter (its own peak RSS); its JSON answer."""
    command = [sys.executable, __file__, "--child", name, *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"child {name} failed:\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def ensure_corpus(cache: Path, n: int, partitions: int) -> Path:
    """``n`` synthetic episodes in ``partitions`` partitions under ``cache`` (made once)."""
    rows = -(-n // partitions)
    path = cache / f"synthetic-{n}-p{partitions}"
    if not path.exists():
        print(f"generating {path} ...", file=sys.stderr, flush=True)
        made = run_child("corpus", path, n, rows)
        print(f"  {made['episodes']:,} episodes in {made['sec']:.0f} s", file=sys.stderr)
    return path


_CONDITION = {"label": machine_label(False)}
"""The condition every verdict names (``quiet``, or ``busy`` under ``--busy``)."""


def verdict(name: str, value: str, ok: bool) -> bool:
    """Print one goal's verdict line; return ``ok``."""
    print(f"  {'PASS' if ok else 'FAIL'}  {name} ({_CONDITION['label']}): {value}")
    return ok


# -- parts ----------------------------------------------------------------------------------


def memory_part(cache: Path, small: int, figures: dict[str, Any]) -> bool:
    """The client's traced memory at ×1 and ×4 the episodes, same partitions."""
    runs = {}
    for n, partitions in ((small, 4), (4 * small, 4), (4 * small, 16)):
        got = run_child("memory", ensure_corpus(cache, n, partitions))
        runs[(n, partitions)] = got
        print(
            f"memory: {n:,} episodes in {partitions} partitions, 6 points: client peak traced "
            f"{got['traced_peak_bytes'] / MIB:.1f} MiB (sweep {got['sec']:.2f} s)"
        )
    ratio = runs[(4 * small, 4)]["traced_peak_bytes"] / runs[(small, 4)]["traced_peak_bytes"]
    per_partition = (
        runs[(4 * small, 16)]["traced_peak_bytes"] - runs[(4 * small, 4)]["traced_peak_bytes"]
    ) / 12
    figures["memory"] = {f"{n}/{p}": got for (n, p), got in runs.items()}
    figures["memory_ratio"] = ratio
    figures["memory_per_partition_bytes"] = per_partition
    print(f"  per partition beyond 4: {per_partition / 1024:.0f} KiB of client memory")
    return verdict("client peak traced memory, ×4 episodes (≤ ×1.5)", f"×{ratio:.2f}", ratio <= 1.5)


def tune_part(cache: Path, small: int, figures: dict[str, Any]) -> bool:
    """The cluster tuner's client memory at ×1 and ×4 the episodes, same partitions; beside it
    the in-process tuner on the ×4 corpus, whose policy the cluster's must equal."""
    from reviewlab.core import Policy

    runs = {}
    for n in (small, 4 * small):
        got = run_child("tune", ensure_corpus(cache, n, 4), 1)
        runs[n] = got
        print(
            f"tune: {got['episodes']:,} episodes in 4 partitions, recommend on 2 workers: "
            f"client peak traced {got['traced_peak_bytes'] / MIB:.1f} MiB ({got['sec']:.2f} s)"
        )
    local = run_child("tune", ensure_corpus(cache, 4 * small, 4), 0)
    print(
        f"  in-process recommend, {local['episodes']:,} episodes: peak traced "
        f"{local['traced_peak_bytes'] / MIB:.1f} MiB ({local['sec']:.2f} s)"
    )
    ratio = runs[4 * small]["traced_peak_bytes"] / runs[small]["traced_peak_bytes"]
    figures["tune"] = {f"{n}/4": got for n, got in runs.items()}
    figures["tune"][f"{4 * small}/in-process"] = local
    figures["tune_ratio"] = ratio
    ok = verdict(
        "cluster recommend, client peak traced memory, ×4 episodes (≤ ×1.5)",
        f"×{ratio:.2f}",
        ratio <= 1.5,
    )
    same = Policy.from_toml(runs[4 * small]["policy"]) == Policy.from_toml(local["policy"])
    figures["tune_policy_equal"] = same
    return ok & verdict(
        f"cluster recommend's policy equals the in-process one ({4 * small:,} episodes)",
        "equal" if same else "differs",
        same,
    )


def large_part(cache: Path, n: int, partitions: int, check: bool, figures: dict[str, Any]) -> bool:
    """The large end-to-end run and the 100 M extrapolation from its per-partition costs."""
    path = ensure_corpus(cache, n, partitions)
    frame = cache / f"frame-{n}-p{partitions}.parquet"
    got = run_child("large", path, frame)
    figures["large"] = got
    workers = ", ".join(f"{b / 2**30:.2f}" for b in got["worker_peak_bytes"])
    print(
        f"large: {got['episodes']:,} episodes ({got['calls']:,} calls) in {got['partitions']} "
        f"partitions, {got['points']} points, 2 workers: open {got['open_sec']:.1f} s + sweep "
        f"{got['sweep_sec']:.1f} s = {got['total_sec']:.1f} s end to end"
    )
    print(
        f"  client peak RSS {got['client_peak_bytes'] / 2**30:.2f} GiB (scheduler included), "
        f"client CPU {got['client_cpu_sec']:.1f} s; worker peak RSS {workers} GiB; answer "
        f"passes per chunk {got['passes']}"
    )
    stage, tasks = got["stage_sec"], got["stage_tasks"]
    p = got["partitions"]
    per_partition = {
        name: stage.get(name, 0.0) / p for name in ("survey", "compile", "evaluate", "answer")
    }
    per_point = (per_partition["evaluate"] + per_partition["answer"]) / got["points"]
    print(
        "  per partition of "
        f"{got['episodes'] // p:,} episodes (worker compute): survey "
        f"{per_partition['survey']:.2f} s, compile {per_partition['compile']:.2f} s, "
        f"{per_point * 1000:.0f} ms a point (evaluate + answers); "
        f"{sum(tasks.values()):,} tasks"
    )
    ok = verdict(
        "≥ 4,000,000 episodes in ≥ 16 partitions, every point summarised",
        f"{got['episodes']:,} in {p}, {got['points']} points",
        got["episodes"] >= 4_000_000 and p >= 16 and got["points"] == 10,
    )
    if check:
        same = run_child("check", path, frame)
        figures["check"] = same
        print(
            f"  in-process sweep of the same partitions: {same['sec']:.0f} s, peak RSS "
            f"{same['peak_bytes'] / 2**30:.2f} GiB"
        )
        ok &= verdict(
            "the cluster's frame equals the in-process frame, every column",
            "equal" if same["equal"] else f"differs: {same['detail']}",
            same["equal"],
        )
    # 100 M episodes in partitions of 250,000, from one partition's work measured alone (CPU).
    alone = run_child(
        "partition", sorted(path.glob("*.parquet"))[len(list(path.glob("*.parquet"))) // 2]
    )
    figures["partition_alone"] = alone
    scale = TARGET_PARTITION_ROWS / alone["episodes"]
    target_parts = TARGET_EPISODES // TARGET_PARTITION_ROWS
    open_sec = (alone["survey_cpu_sec"] + alone["compile_cpu_sec"]) * scale
    point_sec = alone["points_cpu_sec"] / alone["points"] * scale
    client_per_task = got["client_cpu_sec"] / max(1, sum(tasks.values()))
    print(
        f"  one partition of {alone['episodes']:,} episodes alone (CPU seconds): survey "
        f"{alone['survey_cpu_sec']:.2f} s, compile {alone['compile_cpu_sec']:.2f} s, "
        f"{point_sec * 1000:.0f} ms a point ({alone['passes']} answer passes), peak RSS "
        f"{alone['peak_bytes'] / 2**30:.2f} GiB"
    )
    figures["extrapolation"] = {
        "partitions": target_parts,
        "open_worker_sec": open_sec * target_parts,
    }
    print(
        f"extrapolation: {TARGET_EPISODES:,} episodes = {target_parts} partitions of "
        f"{TARGET_PARTITION_ROWS:,}; per partition {open_sec:.1f} s to open, "
        f"{point_sec * 1000:.0f} ms a point (one core)"
    )
    for points in (10, 100):
        worker_sec = target_parts * (open_sec + points * point_sec)
        chunks = -(-points // 16)
        client_tasks = target_parts * (5 + 16 + chunks * (1 + alone["passes"]))
        client_sec = client_tasks * client_per_task
        figures["extrapolation"][f"{points}_points"] = {
            "worker_sec": worker_sec,
            "client_cpu_sec": client_sec,
        }
        print(
            f"  {points} points: {worker_sec / 3600:.1f} worker-hours "
            f"({worker_sec / 10 / 60:.0f} min on 10 one-core workers, "
            f"{worker_sec / 100 / 60:.1f} min on 100); client and scheduler about "
            f"{client_sec:.0f} s of CPU ({client_per_task * 1000:.1f} ms a task, "
            f"{client_tasks:,} tasks)"
        )
    per_partition_mem = figures.get("memory_per_partition_bytes")
    if per_partition_mem is not None:
        print(
            f"  client memory: flat in the episodes; about "
            f"{per_partition_mem * target_parts / MIB:.0f} MiB more for {target_parts} partitions "
            "than for none (measured per partition)"
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default="/tmp/reviewlab-bench-cluster")
    parser.add_argument("--small", type=int, default=50_000)
    parser.add_argument("--large", type=int, default=4_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--only", choices=("memory", "tune", "large"), default=None)
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--json", default=None, metavar="FILE")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    add_busy_flag(parser)
    args = parser.parse_args(argv)
    if args.child:
        name, *rest = args.child
        function = CHILDREN[name]
        typed = [int(a) if a.isdigit() else a for a in rest]
        print(json.dumps(function(*typed)))
        return 0
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {"machine": {"cores": os.cpu_count(), "load": os.getloadavg()}}
    print(
        f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} (other work on the "
        "machine slows the wall-clock figures; the extrapolation uses CPU seconds)"
    )
    _CONDITION["label"] = figures["machine"]["condition"] = machine_label(args.busy)
    ok = True
    with neighbour(args.busy):
        if args.only in (None, "memory"):
            ok &= memory_part(cache, args.small, figures)
        if args.only in (None, "tune"):
            ok &= tune_part(cache, args.small, figures)
        if args.only in (None, "large"):
            ok &= large_part(cache, args.large, args.partitions, not args.no_check, figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("all goals met" if ok else "some goals missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
