"""What every test folder shares: where the fixtures and the repository are.

The tests mirror the package (``core/``, ``live/``, ``recording/``, ``engines/``, ``analysis/``,
``ui/``, ``cli/``) and ``cross/`` holds the differential, conformance, architecture, exports,
docs, notebook and wheel tests. This folder is on ``sys.path`` (pytest puts a root conftest's
folder there), so helpers beside it, such as ``stub_openai``, import by name from any folder.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

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
