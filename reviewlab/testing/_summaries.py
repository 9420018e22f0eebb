"""The conformance suite's hold on an engine without frames: its summary against the twin's.

An engine that gathers no call to the caller (:class:`~reviewlab.engines._engine.Cluster`)
answers a :class:`~reviewlab.engines._result.ReplaySummary`; :func:`assert_summary_conforms` holds
every key of :data:`~reviewlab.core._metric_names.SUMMARY_KEYS` to the twin's (within a tolerance:
the merge sums in another order), and
:func:`replay_on_partitions` is the entry point that writes the corpus as Parquet partitions
and replays them on a cluster through the dispatch. :func:`declared_refusal` says what an
engine's declaration (``engine.honours``) makes it refuse in one cell, so a suite can hold the
engine to its own word.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.core._policy import Policy
from reviewlab.engines._engine import Cluster, Engine
from reviewlab.recording._schema import Episode
from reviewlab.testing._assertions import assert_same_summary

_PARTITION_ROWS = 3
"""Episodes per Parquet partition in :func:`replay_on_partitions`: the suite's corpus then
spans several partitions, so the merge is exercised."""
SUMMARY_TOLERANCE = 1e-9
"""Tolerance on a summary's float figures (the exact merge sums in another order than the
twin's frames)."""


def assert_summary_conforms(
    reference: Mapping[str, Any], other: Mapping[str, Any], *, what: str = ""
) -> None:
    """``other`` has ``reference``'s figure for every key of
    :data:`~reviewlab.core._metric_names.SUMMARY_KEYS` (within :data:`SUMMARY_TOLERANCE`;
    :func:`~reviewlab.testing._assertions.assert_same_summary` compares them); the
    ``AssertionError`` names ``what`` and the key."""
    missing = [key for key in SUMMARY_KEYS if key not in other]
    if missing:
        raise AssertionError(f"{what}: summary has no {', '.join(missing)}")
    try:
        assert_same_summary(
            {key: reference[key] for key in SUMMARY_KEYS},
            {key: other[key] for key in SUMMARY_KEYS},
            tolerance=SUMMARY_TOLERANCE,
        )
    except AssertionError as failure:
        raise AssertionError(f"{what}: {failure}") from None


def replay_on_partitions(client: Any) -> Callable[..., dict[str, Any]]:
    """An entry point that writes the corpus as Parquet partitions (three episodes each, so
    the merge is exercised) and replays them with ``Cluster(client)`` through
    :func:`reviewlab.replay`; it returns the summary (a cluster gathers no frame)."""

    def run(
        corpus: list[Episode], policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> dict[str, Any]:
        from reviewlab.engines._replay import replay
        from reviewlab.recording.columnar import write_columnar

        with tempfile.TemporaryDirectory(prefix="reviewlab-conformance-") as folder:
            parts = Path(folder) / "parts"
            write_columnar(corpus, parts, rows_per_partition=_PARTITION_ROWS)
            result = replay(
                parts,
                policy,
                engine=Cluster(client),
                censored=censored,
                reaction=reaction,
                seed=seed,
            )
        return dict(result.summary)

    run.__name__ = "replay_cluster"
    return run


def declared_refusal(engine: Engine, policy: Policy, censored: str, reaction: str) -> str | None:
    """What ``engine``'s declaration makes it refuse in this cell (a policy part, the censoring
    mode or the reaction, by name), or ``None`` when it declares it honours all of it."""
    honours = engine.honours
    for part in policy.parts_in_use:
        if part not in honours.parts:
            return part
    if censored not in honours.censoring:
        return censored
    if reaction not in honours.reactions:
        return reaction
    return None
