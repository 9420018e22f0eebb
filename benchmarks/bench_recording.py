"""Load throughput and peak memory of episode files (100k synthetic episodes).

Generates a 100,000-episode corpus into a temporary directory (plain and
gzip), then reads each file back in a fresh child process, two ways: streaming
with ``iter_episodes`` (each episode dropped once read: what reading a 1 GB
file costs) and whole with ``load_episodes`` (every episode kept). For each it
prints episodes/s, MB/s (of the decompressed JSON), and the child's peak
resident memory (``VmHWM``) next to its resident memory before reading
(interpreter + imports), so the difference is what the read itself needed.
Children keep the measurements independent and free of tracing overhead.

    .venv/bin/python benchmarks/bench_recording.py [N] [--busy]

``--busy``: the reads run beside a CPU-bound neighbour process (``_busy.py``); each figure
says which condition it was measured in.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _busy import add_busy_flag, machine_label, neighbour


def peak_rss_kib() -> int:
    """This process's peak resident memory in KiB.

    ``VmHWM`` (Linux) belongs to the current address space, so it starts afresh
    at ``exec``; ``ru_maxrss`` would carry over the parent's peak from the fork.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(mode: str, path: str) -> None:
    """Run one read and print its figures as JSON (runs in a fresh interpreter)."""
    from reviewlab.recording import iter_episodes, load_episodes

    before = peak_rss_kib()
    start = time.perf_counter()
    count = sum(1 for _ in iter_episodes(path)) if mode == "stream" else len(load_episodes(path))
    elapsed = time.perf_counter() - start
    peak = peak_rss_kib()
    print(json.dumps({"count": count, "elapsed": elapsed, "before_kib": before, "peak_kib": peak}))


def main(n: int = 100_000, busy: bool = False) -> None:
    from reviewlab.recording import save_episodes
    from reviewlab.recording.synth import synth_corpus

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        corpus = synth_corpus(n, seed=0)
        generated = time.perf_counter() - start
        plain, packed = Path(tmp) / "bench.jsonl", Path(tmp) / "bench.jsonl.gz"
        start = time.perf_counter()
        save_episodes(corpus, plain)
        saved = time.perf_counter() - start
        save_episodes(corpus, packed)
        calls = sum(len(ep.calls) for ep in corpus)
        del corpus
        megabytes = plain.stat().st_size / 1e6
        print(
            f"{n:,} episodes, {calls:,} calls: {megabytes:.1f} MB of JSON, "
            f"{packed.stat().st_size / 1e6:.1f} MB gzip"
        )
        print(
            f"generate {generated:.2f} s ({n / generated:,.0f} episodes/s); "
            f"save plain {saved:.2f} s ({megabytes / saved:.1f} MB/s)"
        )
        with neighbour(busy):
            reads = [
                (mode, path, _read_in_child(mode, path))
                for mode, path in (
                    ("stream", plain),
                    ("stream", packed),
                    ("load", plain),
                    ("load", packed),
                )
            ]
        for mode, path, figures in reads:
            assert figures["count"] == n, figures
            elapsed = figures["elapsed"]
            label = f"{'iter_episodes' if mode == 'stream' else 'load_episodes'} ({path.name})"
            print(
                f"{label:<34} {n / elapsed:>8,.0f} episodes/s {megabytes / elapsed:>7.1f} MB/s "
                f"{elapsed:>7.2f} s   peak RSS {figures['peak_kib'] / 1024:>7.1f} MiB "
                f"(before read {figures['before_kib'] / 1024:.1f} MiB) {machine_label(busy)}"
            )


def _read_in_child(mode: str, path: Path) -> dict:
    """One read of ``path`` in a fresh interpreter: its figures."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def verdict() -> None:
    """These figures have no goal of their own (issue 15's corpus goals are bench_corpus.py)."""
    print("goals: none set for these load figures (information only): PASS")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
        parser.add_argument("episodes", nargs="?", type=int, default=100_000)
        add_busy_flag(parser)
        args = parser.parse_args()
        main(args.episodes, args.busy)
        verdict()
