"""Sweeps over corpora on disk: from columns in-process, and partition by partition on Dask."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reviewlab.analysis.partitioned import evaluate_partition, merge_parts, sweep_path
from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.core.policy import Narrowing, TimeoutPolicy
from reviewlab.engines.vectorized.columns import compile_columns
from reviewlab.recording.column_checks import ColumnarFormatError
from reviewlab.recording.columnar import write_columnar
from reviewlab.recording.columnar_read import partition_paths
from reviewlab.recording.files import load_episodes, save_episodes
from reviewlab.recording.synth import synth_corpus

GRID = make_grid(
    [TimeoutPolicy.ouroboros(), TimeoutPolicy.uniform(3.0)],
    scales=[0.01, 0.2, 1.0],
    narrowings=[Narrowing(), Narrowing("reserve", reserve_sec=30.0), Narrowing.unbounded()],
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic corpus with deadlines, wedges and heavy tails, in four unequal partitions."""
    root = tmp_path_factory.mktemp("corpus")
    episodes = synth_corpus(900, seed=8, tail_scale=60.0, deadline_share=0.6)
    save_episodes(episodes, root / "all.jsonl.gz")
    write_columnar(episodes, root / "parts", rows_per_partition=250)
    return root


def test_a_corpus_path_sweeps_like_its_episodes(corpus: Path) -> None:
    """JSONL, one Parquet file and a partition directory give the frame of the Episode list."""
    expected = sweep(load_episodes(corpus / "all.jsonl.gz"), GRID)
    assert (expected["abandoned_call_rate"] > 0).any() and (expected["wedged_zombies"] > 0).any()
    write_columnar(load_episodes(corpus / "all.jsonl.gz"), corpus / "one.parquet")
    for source in ("all.jsonl.gz", "one.parquet", "parts"):
        pd.testing.assert_frame_equal(sweep(corpus / source, GRID), expected, check_exact=True)


@pytest.mark.parametrize("censored", ["wedge", "observed"])
def test_partition_parts_merge_to_the_whole_corpus_summary(corpus: Path, censored: str) -> None:
    """Per-partition parts merged give exactly the single-process summary (percentiles included)."""
    compiled, _, _ = sweep_path(corpus / "parts", list(GRID), censored=censored)
    assert compiled is not None
    parts = partition_paths(corpus / "parts")
    assert len(parts) == 4
    origin = int(
        pd.Timestamp(min(e.started_at for e in load_episodes(corpus / "all.jsonl.gz"))).value
        // 1000
    )
    per_partition = [evaluate_partition(str(p), list(GRID), censored, 0, origin) for p in parts]
    for i, point in enumerate(GRID):
        merged = merge_parts([parts_of[i] for parts_of in per_partition])
        assert merged == compiled.summary(point.policy, point.narrowing), point.params


def test_dask_local_cluster_sweeps_partitions_exactly(corpus: Path) -> None:
    """On a real two-process LocalCluster, each worker replays its
    partitions; the frame is exact."""
    distributed = pytest.importorskip("distributed")
    expected = sweep(corpus / "parts", GRID)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        got = sweep(corpus / "parts", GRID, client=client)
        observed = sweep(corpus / "parts", GRID, client=client, censored="observed")
        with pytest.raises(ValueError, match="impute"):
            sweep(corpus / "parts", GRID, client=client, censored="impute")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    pd.testing.assert_frame_equal(
        observed, sweep(corpus / "parts", GRID, censored="observed"), check_exact=True
    )


def test_paths_sweep_on_the_twin_and_refuse_unknown_tools(corpus: Path) -> None:
    """The twin sweeps a partition directory as it sweeps its loaded episodes; a grid naming an
    absent tool is refused."""
    pd.testing.assert_frame_equal(
        sweep(corpus / "parts", GRID, engine="twin"),
        sweep(load_episodes(corpus / "parts"), GRID, engine="twin"),
    )
    with pytest.raises(ValueError, match="run_command"):
        sweep(corpus / "parts", make_grid(tools={"run_command": [5.0]}))


def test_small_batches_compile_the_same_corpus(corpus: Path) -> None:
    """Compiling a few hundred episodes at a time gives the very arrays of one whole read."""
    whole = compile_columns(corpus / "parts")
    batched = compile_columns(corpus / "parts", batch_rows=97)
    for name, value in vars(whole).items():
        if isinstance(value, np.ndarray) and value.dtype != object:
            assert np.array_equal(value, getattr(batched, name), equal_nan=True), name
    point = GRID.points[4]
    assert whole.summary(point.policy, point.narrowing) == batched.summary(
        point.policy, point.narrowing
    )


def test_a_repeated_id_across_partitions_is_named(tmp_path: Path) -> None:
    """Compiling partitions that share an id names the later partition, its row and the first."""
    episodes = synth_corpus(6, seed=1)
    write_columnar(episodes, tmp_path / "parts", rows_per_partition=3)
    write_columnar(episodes[:1], tmp_path / "extra.parquet")
    (tmp_path / "extra.parquet").rename(tmp_path / "parts" / "part-00009.parquet")
    with pytest.raises(ColumnarFormatError, match=r"part-00009\.parquet:1: id: .*first on row 1"):
        compile_columns(tmp_path / "parts")
