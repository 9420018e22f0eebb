"""Corpus-scale figures of issue 15, each measured in a child process, with a verdict per goal.

Run: ``.venv/bin/python benchmarks/bench_corpus.py`` (about 8 minutes on 2 cores; the
1,000,000- and 200,000-episode corpora are generated once into ``--cache``, outside every
figure; ``--only cli`` or ``--only corpus`` runs one part).

Figures and goals:

* ``parquet_1m``: open + compile + a 100-point sweep of 1,000,000 synthetic episodes
  from one Parquet file — goal ≤ 20 s and peak RSS ≤ 2 GiB (the child's whole peak).
* ``jsonl_1m``: the same from ``.jsonl.gz`` through the fast decoder — printed beside
  the Parquet figure; the issue sets its goals on the Parquet run, and so does this
  benchmark (the peak-RSS goal is applied to both).
* ``replay``: ``replay(engine="vectorized")`` on the bundled corpus against a warm
  twin replay (the twin's compile cache hit), like for like: without frames (both
  read only ``.summary``; both engines build frames on first access) and with them
  (``.calls`` and ``.episodes`` read from both) — goals ≥ 10× without frames, ≥ 1×
  with; the vectorized replay is warm too (its compiled corpus cached), its cold
  figure is printed beside.
* ``twin_cold``: the twin on fresh episode objects (its compile included; the objects
  are copied before the timed run) — goal ≥ 200,000 calls/s.
* ``synth_200k``: ``write_synthetic`` of 200,000 episodes to ``.jsonl.gz`` — goal
  peak RSS ≤ 300 MB.
* ``cli`` (issue 21, item 6): on ``--cli-episodes`` (200,000) synthetic episodes stored as
  Parquet, ``reviewlab sweep`` (10 points), ``reviewlab replay`` and ``reviewlab tune``, each
  run as ``python -m reviewlab ...`` in a fresh interpreter (:func:`run_module`: ``runpy``, as
  ``-m`` runs it, then the child's ``VmHWM``), against the same work through the library in a
  fresh interpreter of the same kind (like with like: both pay the interpreter's start and
  imports). Goals per command: CLI ≤ 1.5× the library; CLI ≤ a fifth of the time
  ``load_episodes`` needs to read the same corpus from ``.jsonl.gz`` (timed in a child of its
  own); the CLI child's peak RSS ≤ 800 MB. ``--only cli`` runs this part alone. And for
  ``reviewlab sweep`` (open, compile and a 10-point sweep of the Parquet corpus): ≥ 10× faster
  than ``load_episodes`` of the same corpus from ``.jsonl.gz`` (issue 33).

``--busy`` runs every part beside a CPU-bound neighbour process (``_busy.py``: the children and
the baseline alike); each verdict says which condition it was measured in.

Each timing is the best of ``--repeat`` runs where cheap (replays), one run for the
corpus-scale figures. Exit status 1 when any goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _busy import add_busy_flag, machine_label, neighbour

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "reviewlab" / "data" / "episodes" / "synthetic-1k.jsonl.gz"
GIB = 2**30


def _peak_bytes() -> int:
    """This process's peak resident memory since it started its program.

    ``VmHWM`` (the high-water mark of this address space), not ``ru_maxrss``: Linux carries
    the pre-exec address space's peak into ``ru_maxrss`` at ``exec``, and ``subprocess`` forks
    with ``vfork``, so a child's ``ru_maxrss`` reports at least its parent's peak.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def grid_100() -> Any:
    """100 policy points a tuner would sweep: 10 scales × 5 read_file timeouts × 2 narrowings.

    Scales 0.05-3 of the reference policy (30 s to 1,800 s floors) and read_file
    timeouts 5-120 s: most points abandon 0.1-2 % of the calls, as in tuning.
    """
    from reviewlab.analysis.sweep import make_grid
    from reviewlab.core import Narrowing, TimeoutPolicy

    return make_grid(
        TimeoutPolicy.ouroboros(),
        scales=[0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0],
        tools={"read_file": [5.0, 10.0, 30.0, 60.0, 120.0]},
        narrowings=[Narrowing(), Narrowing("reserve", reserve_sec=30.0)],
    )


# -- children -------------------------------------------------------------------------------


def child_corpus(path: str) -> dict[str, Any]:
    """Open + compile + 100-point sweep of the corpus at ``path``."""
    from reviewlab.analysis.sweep import sweep
    from reviewlab.engines.vectorized._columns import compile_columns

    grid = grid_100()
    start = time.perf_counter()
    corpus = compile_columns(path)
    compiled = time.perf_counter()
    frame = sweep(corpus, grid, progress=False)
    done = time.perf_counter()
    return {
        "episodes": len(corpus.episode_ids),
        "calls": corpus.calls,
        "compile_sec": compiled - start,
        "sweep_sec": done - compiled,
        "total_sec": done - start,
        "points": len(frame),
        "peak_bytes": _peak_bytes(),
    }


def child_replay(repeat: int) -> dict[str, Any]:
    """Vectorized replay (warm and cold; with and without frames) against the warm twin.

    Like for like: both engines build their frames on first access, so the summary-only
    replays are compared with each other, and so are the replays whose frames are read.
    Fresh episode objects for the cold runs are made before each timed run, not in it.
    """
    from reviewlab.engines import replay
    from reviewlab.engines.twin import simulate
    from reviewlab.recording import load_episodes

    episodes = list(load_episodes(BUNDLED))
    calls = sum(len(e.calls) for e in episodes)

    def best(run: Any, setup: Any = None) -> float:
        times = []
        for _ in range(repeat):
            argument = setup() if setup is not None else None
            start = time.perf_counter()
            run(argument)
            times.append(time.perf_counter() - start)
        return min(times)

    def frames(result: Any) -> None:
        result.calls, result.episodes  # noqa: B018 - reading them builds them

    def fresh() -> list[Any]:
        return [e.model_copy() for e in episodes]  # new objects: no cache can answer

    simulate(episodes)  # warms the twin's compile cache
    twin = best(lambda _: simulate(episodes).summary)
    twin_frames = best(lambda _: frames(simulate(episodes)))
    replay(episodes, engine="vectorized")  # warms the vectorized engine's compiled corpus
    summary_only = best(lambda _: replay(episodes, engine="vectorized").summary)
    with_frames = best(lambda _: frames(replay(episodes, engine="vectorized")))
    cold_sec = best(lambda copies: replay(copies, engine="vectorized").summary, fresh)
    twin_cold_sec = best(lambda copies: simulate(copies).summary, fresh)
    return {
        "calls": calls,
        "twin_warm_sec": twin,
        "twin_warm_frames_sec": twin_frames,
        "vectorized_summary_sec": summary_only,
        "vectorized_frames_sec": with_frames,
        "vectorized_cold_sec": cold_sec,
        "twin_cold_sec": twin_cold_sec,
        "peak_bytes": _peak_bytes(),
    }


def child_synth(path: str, n: int) -> dict[str, Any]:
    """``write_synthetic`` of ``n`` episodes to ``path``."""
    from reviewlab.recording.synth import write_synthetic

    start = time.perf_counter()
    write_synthetic(path, n, seed=0, progress=False)
    return {"episodes": n, "sec": time.perf_counter() - start, "peak_bytes": _peak_bytes()}


def child_corpora(cache: str, n: int) -> dict[str, Any]:
    """Generate the ``n``-episode corpora into ``cache`` (outside the measuring parent)."""
    parquet, jsonl = ensure_corpora(Path(cache), n)
    return {"parquet": str(parquet), "jsonl": str(jsonl)}


def child_load(path: str) -> dict[str, Any]:
    """``load_episodes`` of the corpus at ``path`` (the objects every command once built)."""
    from reviewlab.recording import load_episodes

    start = time.perf_counter()
    episodes = load_episodes(path)
    return {"episodes": len(episodes), "sec": time.perf_counter() - start}


CHILDREN = {
    "corpora": child_corpora,
    "corpus": child_corpus,
    "load": child_load,
    "replay": child_replay,
    "synth": child_synth,
}


# -- the CLI against the library (issue 21, item 6) -----------------------------------------

CLI_SCALES = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)
"""The 10 sweep points: scales of the reference policy."""
CLI_COMMANDS = ("sweep", "replay", "tune")


def cli_argv(command: str, corpus: str) -> list[str]:
    """The ``reviewlab`` arguments of one measured command."""
    if command == "sweep":
        return ["sweep", corpus, "--scale", ",".join(f"{s:g}" for s in CLI_SCALES)]
    return [command, corpus]


def library_work(command: str, corpus: str) -> None:
    """What ``reviewlab <command>`` computes and prints, through the library."""
    from reviewlab import Policy, replay

    if command == "sweep":
        from reviewlab.analysis.sweep import make_grid, pareto, sweep

        frame = sweep(corpus, make_grid(Policy.ouroboros(), scales=CLI_SCALES))
        pareto(frame)
    elif command == "replay":
        result = replay(corpus, Policy.ouroboros(), engine="vectorized")
        result.per_tool()
    else:
        from reviewlab.analysis import recommend

        recommend(corpus)


def measure(out: str, kind: str, command: str, corpus: str) -> None:
    """In a fresh interpreter: ``python -m reviewlab <command> ...`` (``kind="cli"``, run by
    :mod:`runpy` as ``-m`` runs it) or the library's same work; then write the exit status and
    this process's peak RSS to ``out``."""
    code: Any = 0
    if kind == "cli":
        sys.argv = ["reviewlab", *cli_argv(command, corpus)]
        try:
            runpy.run_module("reviewlab", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            code = exc.code
    else:
        library_work(command, corpus)
    Path(out).write_text(json.dumps({"code": code, "peak_bytes": _peak_bytes()}))


def run_measured(kind: str, command: str, corpus: Path) -> dict[str, Any]:
    """Wall time of one measured child (interpreter start included) and its peak RSS."""
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as folder:
        out = Path(folder) / "measured.json"
        argv = [sys.executable, __file__, "--measure", str(out), kind, command, str(corpus)]
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        sec = time.perf_counter() - start
        if done.returncode or not out.exists():
            raise SystemExit(f"{kind} {command} failed:\n{done.stderr}")
        got = json.loads(out.read_text())
    if got["code"]:
        raise SystemExit(f"{kind} {command} exited {got['code']}:\n{done.stderr}")
    return {"sec": sec, "peak_bytes": got["peak_bytes"]}


def cli_goals(cache: str, n: int, repeat: int) -> bool:
    """The issue-21 figures: each command through the CLI against the library and
    ``load_episodes``; True when every goal is met."""
    made = run_child("corpora", cache, n, echo=True)
    parquet, jsonl = Path(made["parquet"]), Path(made["jsonl"])
    # The baseline's best of two runs (a slower one would make the goal easier).
    load = min((run_child("load", jsonl) for _ in range(2)), key=lambda got: got["sec"])
    print(
        f"{n:,} synthetic episodes: load_episodes from .jsonl.gz {load['sec']:.1f} s "
        f"(a fifth: {load['sec'] / 5:.1f} s)"
    )
    ok = True
    for command in CLI_COMMANDS:
        # Interleaved, so a burst of other work on the machine falls on both kinds alike.
        measured: dict[str, list[dict[str, Any]]] = {"cli": [], "library": []}
        for _ in range(repeat):
            for kind, runs_of_kind in measured.items():
                runs_of_kind.append(run_measured(kind, command, parquet))
        # The best time of each kind, and the highest peak of any of its runs.
        runs = {
            kind: {
                "sec": min(one["sec"] for one in got),
                "peak_bytes": max(one["peak_bytes"] for one in got),
            }
            for kind, got in measured.items()
        }
        cli, lib = runs["cli"], runs["library"]
        print(
            f"reviewlab {command}: CLI {cli['sec']:.2f} s, {cli['peak_bytes'] / 1e6:.0f} MB; "
            f"library {lib['sec']:.2f} s, {lib['peak_bytes'] / 1e6:.0f} MB (best time, highest "
            f"peak of {repeat} runs each)"
        )
        ratio = cli["sec"] / lib["sec"]
        ok &= verdict(f"{command}: CLI vs the library (≤ 1.5×)", f"{ratio:.2f}×", ratio <= 1.5)
        share = cli["sec"] / load["sec"]
        ok &= verdict(
            f"{command}: CLI vs load_episodes .jsonl.gz (≤ 0.20)", f"{share:.3f}", share <= 0.2
        )
        if command == "sweep":
            speed = load["sec"] / cli["sec"]
            ok &= verdict(
                "sweep: open, compile, 10 points vs load_episodes (≥ 10×)",
                f"{speed:.1f}×",
                speed >= 10,
            )
        ok &= verdict(
            f"{command}: CLI peak RSS (≤ 800 MB)",
            f"{cli['peak_bytes'] / 1e6:.0f} MB",
            cli["peak_bytes"] <= 800e6,
        )
    return ok


def run_child(name: str, *args: Any, echo: bool = False) -> dict[str, Any]:
    """Run one child in a fresh interpreter (its own peak RSS); its JSON answer. ``echo``:
    let the child's stderr (progress bars) through."""
    command = [sys.executable, __file__, "--child", name, *map(str, args)]
    stderr = None if echo else subprocess.PIPE
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"child {name} failed:\n{done.stderr}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# -- setup ----------------------------------------------------------------------------------


def ensure_corpora(cache: Path, n: int) -> tuple[Path, Path]:
    """The ``n``-episode synthetic corpus as Parquet and as JSONL.gz (generated once)."""
    import gzip

    from reviewlab.recording.synth import iter_synth_rows, write_synthetic

    cache.mkdir(parents=True, exist_ok=True)
    parquet = cache / f"synthetic-{n}.parquet"
    jsonl = cache / f"synthetic-{n}.jsonl.gz"
    if not parquet.exists():
        print(f"generating {parquet} ...", file=sys.stderr, flush=True)
        write_synthetic(parquet, n, seed=0, progress=True)
    if not jsonl.exists():
        print(f"generating {jsonl} ...", file=sys.stderr, flush=True)
        temp = jsonl.with_suffix(".tmp")
        encode = json.JSONEncoder(separators=(",", ":"), default=lambda t: t.isoformat()).encode
        with gzip.open(temp, "wb", compresslevel=1) as out:
            batch = []
            for row in iter_synth_rows(n, seed=0):
                batch.append(encode(row))
                if len(batch) == 4096:
                    out.write(("\n".join(batch) + "\n").encode())
                    batch = []
            if batch:
                out.write(("\n".join(batch) + "\n").encode())
        os.replace(temp, jsonl)
    return parquet, jsonl


# -- report ---------------------------------------------------------------------------------


CONDITION = {"label": machine_label(False)}
"""The condition every verdict names (``quiet``, or ``busy`` under ``--busy``)."""


def verdict(name: str, figure: str, ok: bool | None) -> bool:
    """Print one figure with its verdict and the condition it was measured in; False when a
    goal is missed."""
    mark = "n/a (no goal)" if ok is None else ("PASS" if ok else "MISS")
    print(f"  {name:<58} {figure:<24} {CONDITION['label']:<6} {mark}")
    return ok is not False


PARTS = ("cli", "corpus", "replay", "synth")
"""The parts of the benchmark, in the order they run."""


def corpus_goals(cache: str, episodes: int) -> bool:
    """Open + compile + a 100-point sweep of the 1,000,000-episode corpora (issue 15)."""
    made = run_child("corpora", cache, episodes, echo=True)
    parquet, jsonl = Path(made["parquet"]), Path(made["jsonl"])
    ok = True
    for label, path in (("parquet", parquet), ("jsonl.gz", jsonl)):
        got = run_child("corpus", path)
        print(
            f"{label}: {got['episodes']:,} episodes, {got['calls']:,} calls: compile "
            f"{got['compile_sec']:.1f} s, {got['points']}-point sweep {got['sweep_sec']:.1f} s"
        )
        timed = label == "parquet"
        ok &= verdict(
            f"{label}: open + compile + 100-point sweep (≤ 20 s)",
            f"{got['total_sec']:.1f} s",
            got["total_sec"] <= 20.0 if timed else None,
        )
        ok &= verdict(
            f"{label}: peak RSS (≤ 2 GiB)",
            f"{got['peak_bytes'] / GIB:.2f} GiB",
            got["peak_bytes"] <= 2 * GIB,
        )
    return ok


def replay_goals(repeat: int) -> bool:
    """The vectorized replay against the twin on the bundled corpus (issue 15)."""
    ok = True
    got = run_child("replay", repeat)
    twin, twin_frames = got["twin_warm_sec"], got["twin_warm_frames_sec"]
    print(
        f"bundled corpus ({got['calls']:,} calls): twin warm {twin * 1e3:.1f} ms "
        f"(with frames {twin_frames * 1e3:.1f} ms), vectorized summary "
        f"{got['vectorized_summary_sec'] * 1e3:.2f} ms, with frames "
        f"{got['vectorized_frames_sec'] * 1e3:.1f} ms, "
        f"cold {got['vectorized_cold_sec'] * 1e3:.1f} ms"
    )
    speed = twin / got["vectorized_summary_sec"]
    ok &= verdict("replay vectorized vs warm twin, no frames (≥ 10×)", f"{speed:.1f}×", speed >= 10)
    speed = twin_frames / got["vectorized_frames_sec"]
    ok &= verdict("replay vectorized vs warm twin, with frames (≥ 1×)", f"{speed:.1f}×", speed >= 1)
    rate = got["calls"] / got["twin_cold_sec"]
    ok &= verdict(
        "twin cold, compile included (≥ 200,000 calls/s)", f"{rate:,.0f} calls/s", rate >= 200_000
    )
    return ok


def synth_goals(cache: str, n: int) -> bool:
    """The synthesiser's memory at 200,000 episodes (issue 15)."""
    out = Path(cache) / "synth-200k.jsonl.gz"
    got = run_child("synth", out, n)
    print(f"synth {got['episodes']:,} episodes to .jsonl.gz in {got['sec']:.1f} s")
    ok = verdict(
        f"synth {n:,} episodes: peak RSS (≤ 300 MB)",
        f"{got['peak_bytes'] / 1e6:.0f} MB",
        got["peak_bytes"] <= 300e6,
    )
    out.unlink(missing_ok=True)
    return ok


def main() -> int:
    """Run every child, print the figures and verdicts; 1 if a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--synth", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--cache", default="/tmp/reviewlab-bench-corpus")
    parser.add_argument("--cli-episodes", type=int, default=200_000)
    parser.add_argument("--cli-repeat", type=int, default=5)
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument(
        "--only",
        default=",".join(PARTS),
        help=f"the parts to run, comma-separated: {', '.join(PARTS)} (default: all)",
    )
    add_busy_flag(parser)
    args = parser.parse_args()
    if args.child:
        name, *rest = args.child
        typed = [int(a) if a.isdigit() else a for a in rest]
        print(json.dumps(CHILDREN[name](*typed)))
        return 0
    if args.measure:
        measure(*args.measure)
        return 0
    parts = {part.strip() for part in args.only.split(",")}
    unknown = parts - set(PARTS)
    if unknown:
        parser.error(f"--only: unknown part(s) {', '.join(sorted(unknown))}")

    CONDITION["label"] = machine_label(args.busy)
    print(
        f"machine: {os.cpu_count()} cores (shared with other work), python "
        f"{sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}; "
        f"{CONDITION['label']}"
    )
    if "cli" in parts:  # the corpora are generated before the neighbour starts
        run_child("corpora", args.cache, args.cli_episodes, echo=True)
    if "corpus" in parts:
        run_child("corpora", args.cache, args.episodes, echo=True)
    ok = True
    with neighbour(args.busy):
        if "cli" in parts:
            ok &= cli_goals(args.cache, args.cli_episodes, args.cli_repeat)
        if "corpus" in parts:
            ok &= corpus_goals(args.cache, args.episodes)
        if "replay" in parts:
            ok &= replay_goals(args.repeat)
        if "synth" in parts:
            ok &= synth_goals(args.cache, args.synth)
    print("all goals met" if ok else "some goals missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
