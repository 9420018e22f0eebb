"""A cluster sweep under failure: one error naming the partition or the scheduler, nothing
written, and a lost worker's partitions recomputed, never dropped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dask
import pandas as pd
import pytest
from cluster_rules import OnceInAWorker

from reviewlab.analysis.sweep import make_grid, points_grid, sweep
from reviewlab.cli import _sweep as cli_sweep
from reviewlab.cli import _tune_shared as cli_tune  # the tune commands connect through it
from reviewlab.cli import main
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines.cluster import ClusterCorpus, SchedulerLost
from reviewlab.recording._file_errors import EpisodeFormatError
from reviewlab.recording.columnar import write_columnar
from reviewlab.recording.synth import synth_corpus

distributed = pytest.importorskip("distributed")

GRID = make_grid([TimeoutPolicy.ouroboros(), TimeoutPolicy.uniform(3.0)], scales=[0.05, 1.0])
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def episodes() -> list:
    """Six hundred synthetic episodes with deadlines."""
    return synth_corpus(600, seed=4, deadline_share=0.5)


@pytest.fixture
def parts(tmp_path: Path, episodes: list) -> Path:
    """The episodes as four partitions."""
    write_columnar(episodes, tmp_path / "parts", rows_per_partition=150)
    return tmp_path / "parts"


@pytest.fixture(scope="module")
def tcp_client() -> Iterator[tuple[object, str]]:
    """A two-worker LocalCluster in this process, reachable by its TCP address."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            protocol="tcp",
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client, cluster.scheduler_address


@pytest.fixture(scope="module")
def process_client() -> Iterator[object]:
    """A two-worker LocalCluster whose workers are processes (they can be killed)."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def _corrupt(part: Path) -> None:
    part.write_bytes(b"PAR1 this is not a Parquet file")


def test_an_unreadable_partition_is_named_by_the_cluster(parts: Path, tcp_client: tuple) -> None:
    """A partition that is no Parquet file fails the survey on its worker, naming it."""
    _corrupt(parts / "part-00002.parquet")
    with pytest.raises(
        EpisodeFormatError, match=r"part-00002\.parquet:0: <parquet>: not a Parquet"
    ):
        sweep(parts, GRID, client=tcp_client[0])


def test_the_command_line_names_the_partition_and_keeps_the_old_output(
    parts: Path, tcp_client: tuple, capsys: pytest.CaptureFixture[str]
) -> None:
    """``reviewlab sweep --scheduler`` on a bad partition: one error line naming it, exit 2,
    and the ``-o`` file keeps its old bytes."""
    out = parts.parent / "frame.csv"
    out.write_text("old frame\n")
    _corrupt(parts / "part-00001.parquet")
    code = main(
        ["sweep", str(parts), "--scale", "0.5,1", "--scheduler", tcp_client[1], "-o", str(out)]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "part-00001.parquet" in err, err
    assert out.read_text() == "old frame\n"


def test_an_unreachable_scheduler_is_one_error_naming_it(parts: Path) -> None:
    """An address nobody listens on is a SchedulerLost naming the address."""
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "1s"}),
        pytest.raises(SchedulerLost, match=r"scheduler tcp://127\.0\.0\.1:9: cannot connect"),
    ):
        sweep(parts, GRID, client="tcp://127.0.0.1:9")


def test_a_partition_missing_after_a_worker_died_is_named(
    parts: Path, process_client: object
) -> None:
    """A partition deleted after it was compiled, then lost with its worker: the recompute
    fails with an error naming the partition, and no summary is returned."""
    with ClusterCorpus.open(parts, process_client) as on_cluster:
        os.remove(parts / "part-00001.parquet")
        pids = process_client.run(os.getpid)  # type: ignore[attr-defined]
        for pid in pids.values():
            os.kill(pid, signal.SIGKILL)  # every compiled partition is lost
        with pytest.raises(FileNotFoundError, match=r"part-00001\.parquet"):
            on_cluster.summaries([point.policy for point in GRID])
    process_client.wait_for_workers(2)  # type: ignore[attr-defined]


def test_a_worker_killed_mid_sweep_is_recomputed_not_dropped(
    parts: Path, process_client: object, tmp_path: Path
) -> None:
    """A worker process that dies while replaying a point is replaced and its partitions
    recomputed: the frame is complete and equals the in-process sweep."""
    marker = tmp_path / "killed"
    grid = points_grid(
        [
            Policy.of(OnceInAWorker(2.0, str(marker), "kill")),
            TimeoutPolicy.uniform(0.5),
            Policy.ouroboros(),
        ]
    )
    expected = sweep(parts, grid)
    assert not marker.exists()  # the rule acts only in a worker
    process_client.wait_for_workers(2)  # type: ignore[attr-defined]
    got = sweep(parts, grid, client=process_client, chunk_size=1)
    assert marker.exists()  # a worker did die mid-sweep
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def _scheduler_process() -> tuple[subprocess.Popen[str], str]:
    """A scheduler and one worker in a process of their own (so it can be killed), and its
    address."""
    script = (
        "import asyncio\n"
        "from distributed import Scheduler, Worker\n"
        "async def main():\n"
        "    async with Scheduler(host='127.0.0.1', port=0, dashboard_address=None) as s:\n"
        "        print(s.address, flush=True)\n"
        "        async with Worker(s.address, nthreads=1):\n"
        "            await asyncio.sleep(300)\n"
        "asyncio.run(main())\n"
    )
    path = os.pathsep.join([str(HERE), *sys.path])
    cluster = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
    )
    return cluster, cluster.stdout.readline().strip()  # type: ignore[union-attr]


def test_a_scheduler_that_goes_away_mid_sweep_is_named(parts: Path, tmp_path: Path) -> None:
    """Killing the scheduler while a worker replays a point ends the sweep with one error
    naming the scheduler; no frame is returned."""
    marker = tmp_path / "hanging"
    cluster, address = _scheduler_process()
    try:
        grid = points_grid([Policy.of(OnceInAWorker(2.0, str(marker), "hang"))])

        def kill_when_hanging() -> None:
            for _ in range(1200):  # the marker appears once the worker is inside the point
                if marker.exists():
                    cluster.send_signal(signal.SIGKILL)
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_when_hanging)
        killer.start()
        with pytest.raises(SchedulerLost, match=f"scheduler {address}: .*lost"):
            sweep(parts, grid, client=address)
        killer.join()
    finally:
        cluster.kill()
        cluster.wait()


@pytest.mark.parametrize(
    ("command", "output", "old"),
    [("sweep", "frame.csv", "old frame\n"), ("tune", "policy.toml", "# old policy\n")],
)
def test_the_command_line_names_a_lost_scheduler_in_one_line(
    parts: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dask_log_levels: None,
    command: str,
    output: str,
    old: str,
) -> None:
    """A scheduler gone between ``--scheduler``'s connection and the sweep or the tune: exit 2,
    one stderr line naming the scheduler (Dask's own log lines quieted), the ``-o`` file
    untouched."""
    module = cli_sweep if command == "sweep" else cli_tune
    cluster, address = _scheduler_process()
    connect = module.dask_client

    def connect_then_lose(where: str, timeout_sec: float) -> object:
        client = connect(where, timeout_sec)
        cluster.kill()
        cluster.wait()
        return client

    monkeypatch.setattr(module, "dask_client", connect_then_lose)
    out = parts.parent / output
    out.write_text(old)
    try:
        argv = [command, str(parts), "--scheduler", address, "--connect-timeout", "1"]
        code = main([*argv, "-o", str(out)])
    finally:
        cluster.kill()
        cluster.wait()
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == (
        f"reviewlab: error: scheduler {address}: the connection to the scheduler was lost "
        "during the work; nothing was returned"
    )
    assert out.read_text() == old
