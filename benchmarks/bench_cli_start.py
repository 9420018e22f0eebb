"""How long a ``reviewlab`` command takes before it does anything (goals: ``reviewlab --help``
within 0.2 s, ``reviewlab presets`` within 1.0 s, median wall time).

Each command runs as a user runs it: the ``reviewlab`` script beside the interpreter (else
``python -m reviewlab``), a fresh process every time, its output discarded. The runs are
interleaved (one of each command per round, the order rotating), so a slow moment of the shared
machine falls on every command alike, and the median of each is judged. The interpreter alone
(``python -c pass``) runs in the same rounds: the figure a command adds to it is what reviewlab
costs. For information, one ``-X importtime`` run of each command names the heavy libraries it
imports (pandas, numpy, pydantic, pyarrow, matplotlib, asyncio …): ``--help`` needs none of them.

Run: ``.venv/bin/python benchmarks/bench_cli_start.py [--runs N] [--busy]`` (``--busy``: beside
a CPU-bound neighbour process, ``_busy.py``). Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _busy import add_busy_flag, machine_label, neighbour

COMMANDS: dict[str, tuple[str, ...]] = {"--help": ("--help",), "presets": ("presets",)}
"""The commands timed, by the name printed: the top-level help, and one real command (it lists
the bundled presets, so it imports pandas to build the table it prints)."""
GOAL_SEC = {"--help": 0.2, "presets": 1.0}
"""The goal of each command's median wall time, seconds. Measured 2026-12-05 on the shared
2-core machine, others working: --help 0.09 s (0.22-0.30 s before the options of a command were
added only when it runs and the recording packages became lazy), presets 0.67-0.78 s (0.69-0.79
s before; pandas builds its table, and its module imports the engines to score)."""
HEAVY = ("pandas", "numpy", "pyarrow", "pydantic", "matplotlib", "simpy", "scipy", "mcp", "asyncio")
"""Libraries worth naming when a command imports them."""
RUNS = 15
FLOOR = "python -c pass"


def entry_point() -> list[str]:
    """The ``reviewlab`` script of this interpreter's environment, else ``python -m reviewlab``."""
    script = Path(sys.executable).with_name("reviewlab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "reviewlab"]


def wall_time(argv: list[str]) -> float:
    """Seconds from starting ``argv`` to its exit; a failing command stops the benchmark."""
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()}")
    return elapsed


def heavy_imports(words: tuple[str, ...]) -> list[str]:
    """The :data:`HEAVY` libraries ``reviewlab WORDS`` imports (read from ``-X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "reviewlab", *words],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    return [name for name in HEAVY if name in imported]


def measure(runs: int) -> dict[str, list[float]]:
    """Wall times of the interpreter and of every command, ``runs`` interleaved rounds."""
    entry = entry_point()
    argvs = {FLOOR: [sys.executable, "-c", "pass"]}
    argvs.update({name: [*entry, *words] for name, words in COMMANDS.items()})
    times: dict[str, list[float]] = {name: [] for name in argvs}
    names = list(argvs)
    for round_ in range(runs):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(wall_time(argvs[name]))
    return times


def main() -> int:
    """Time the commands, print the figures and a verdict per command; 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"rounds (default {RUNS})")
    add_busy_flag(parser)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    label = machine_label(args.busy)
    print(f"entry point: {' '.join(entry_point())}; {args.runs} interleaved rounds ({label})")
    with neighbour(args.busy):
        times = measure(args.runs)
    floor = statistics.median(times[FLOOR])
    print(f"{FLOOR:>16}: median {floor:.3f} s (the interpreter alone)")
    missed = []
    for name, words in COMMANDS.items():
        median = statistics.median(times[name])
        heavy = heavy_imports(words)
        print(
            f"{'reviewlab ' + name:>16}: median {median:.3f} s, best {min(times[name]):.3f} s, "
            f"worst {max(times[name]):.3f} s; {median - floor:.3f} s over the interpreter "
            f"({median / floor:.1f}x); imports {', '.join(heavy) or 'no heavy library'}"
        )
        ok = median <= GOAL_SEC[name]
        print(f"{'':>16}  goal <= {GOAL_SEC[name]} s: {'PASS' if ok else 'MISS'} ({label})")
        if not ok:
            missed.append(name)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
