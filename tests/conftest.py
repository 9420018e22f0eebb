"""What every test folder shares: where the fixtures and the repository are.

The tests mirror the package (``core/``, ``live/``, ``recording/``, ``engines/``, ``analysis/``,
``ui/``, ``cli/``) and ``cross/`` holds the differential, conformance, architecture, exports,
docs, notebook and wheel tests. This folder is on ``sys.path`` (pytest puts a root conftest's
folder there), so helpers beside it, such as ``stub_openai``, import by name from any folder.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
"""This folder."""
REPO = TESTS.parent
"""The checkout."""
FIXTURES = TESTS / "fixtures"
"""The real logs of other agents (a link to the shipped ``reviewlab/data/real-logs``)."""


@pytest.fixture
def fixtures_dir() -> Path:
    """The real agent logs the importers' tests read."""
    return FIXTURES


@pytest.fixture
def dask_log_levels() -> Iterator[None]:
    """Dask's logger levels as they were before the test (``--scheduler`` quiets them)."""
    names = ("distributed", "distributed.client")
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    """A real two-worker ``LocalCluster`` in this process (one thread per worker, in-process
    transport: its workers see this process's memory filesystem), one per test module: a cluster
    left running would slow every later test (its event loops share this process)."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as connected,
    ):
        yield connected


def tcp_local_cluster(workers: int = 2) -> Any:
    """A ``LocalCluster`` in this process reachable over TCP (what a command's ``--scheduler``
    connects to), one thread per worker; use it as a context manager."""
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )


@pytest.fixture(scope="module")
def tcp_cluster() -> Iterator[object]:
    """A two-worker :func:`tcp_local_cluster`, one per test module."""
    with tcp_local_cluster() as cluster:
        yield cluster


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what importing and collecting made (about 800,000 objects that live as long as
    the session): every later collection, the real engine's before each run and the automatic
    ones, then scans only what the tests made. On tests/engines and tests/analysis, time in
    collections 20 -> 12.5 s and the real engine's 25 explicit ones 5.8 -> 0.5 s."""
    gc.collect()
    gc.freeze()


_EXIT_STATUS: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Keep the session's exit status for :func:`pytest_unconfigure`."""
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave with the session's status once pytest has reported everything, without running
    the interpreter's teardown: a native library's thread still alive in this process (the
    in-process Dask clusters and servers of the suite start many) can abort that teardown with
    "terminate called without an active exception" (exit 134) after every test passed, seen
    once in a full run and never in any folder run alone. A test's failure is its own status."""
    import os
    import sys

    if not _EXIT_STATUS:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(_EXIT_STATUS[-1])
