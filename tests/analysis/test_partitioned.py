"""Sweeps over corpora on disk: from columns in-process, and partition by partition on Dask."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.core._policy import Narrowing, TimeoutPolicy
from reviewlab.engines.cluster import ClusterCorpus
from reviewlab.engines.cluster._partials import sorted_walls
from reviewlab.engines.vectorized._columns import compile_columns
from reviewlab.recording._files import load_episodes, save_episodes
from reviewlab.recording.columnar import ColumnarFormatError, write_columnar
from reviewlab.recording.synth import TOOLS, synth_corpus

distributed = pytest.importorskip("distributed")

GRID = make_grid(
    [TimeoutPolicy.ouroboros(), TimeoutPolicy.uniform(3.0)],
    scales=[0.01, 0.2, 1.0],
    narrowings=[Narrowing(), Narrowing("reserve", reserve_sec=30.0), Narrowing.unbounded()],
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic corpus with deadlines, many wedges and heavy tails, in four unequal
    partitions."""
    root = tmp_path_factory.mktemp("corpus")
    # Wedges 20 times as common as by default: the unbounded points' p95 and p99 are inf.
    tools = {name: replace(p, wedge_p=20 * p.wedge_p) for name, p in TOOLS.items()}
    episodes = synth_corpus(900, seed=8, tail_scale=60.0, deadline_share=0.6, tools=tools)
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
def test_a_cluster_sweep_equals_the_in_process_sweep(
    corpus: Path, client: object, censored: str
) -> None:
    """On a real LocalCluster the merged partials give the in-process frame, every column."""
    expected = sweep(corpus / "parts", GRID, censored=censored)
    got = sweep(corpus / "parts", GRID, client=client, censored=censored, chunk_size=5)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    # The corpus exercises what the merge must get right: wedges, loose workers, quantiles.
    assert (expected["wedged_zombies"] > 0).any() == (censored == "wedge")
    assert (expected["peak_loose_workers"] > 1).any()
    assert np.isinf(expected["wall_p99_sec"]).any() == (censored == "wedge")
    assert np.isfinite(expected["wall_p50_sec"]).all()


def test_impute_is_refused_on_a_cluster(corpus: Path, client: object) -> None:
    """Imputation draws from the whole corpus's estimates: a cluster sweep refuses it by name."""
    with pytest.raises(ValueError, match="impute"):
        sweep(corpus / "parts", GRID, client=client, censored="impute")


def test_a_cluster_corpus_knows_its_shape(corpus: Path, client: object) -> None:
    """Opening the partitions on the workers gives the whole corpus's counts and tools."""
    whole = compile_columns(corpus / "parts")
    with ClusterCorpus.open(corpus / "parts", client) as on_cluster:
        assert len(on_cluster.partitions) == 4
        assert on_cluster.episodes == len(whole.episode_ids) == 900
        assert on_cluster.calls == whole.calls
        assert on_cluster.tools == sorted(whole.tools)
        assert on_cluster.origin_us == min(
            int(e.started_at.timestamp() * 1_000_000)
            for e in load_episodes(corpus / "all.jsonl.gz")
        )


def test_paths_refuse_the_twin_and_unknown_tools(corpus: Path, client: object) -> None:
    """A corpus path is for the vectorized engine; a grid naming an absent tool is refused."""
    with pytest.raises(ValueError, match="run_command"):
        sweep(corpus / "parts", make_grid(tools={"run_command": [5.0]}))
    with pytest.raises(ValueError, match="run_command"):
        sweep(corpus / "parts", make_grid(tools={"run_command": [5.0]}), client=client)


def test_small_batches_compile_the_same_corpus(corpus: Path) -> None:
    """Compiling a few hundred episodes at a time gives the very arrays of one whole read."""
    whole = compile_columns(corpus / "parts")
    batched = compile_columns(corpus / "parts", batch_rows=97)
    for name, value in vars(whole).items():
        if isinstance(value, np.ndarray) and value.dtype != object:
            assert np.array_equal(value, getattr(batched, name), equal_nan=True), name
    point = GRID.points[4]
    assert whole.summary(point.policy) == batched.summary(point.policy)


def test_a_repeated_id_across_partitions_is_named(tmp_path: Path, client: object) -> None:
    """Partitions that share an id are refused, in-process and on a cluster, naming the later
    partition, its row and where the id came first."""
    episodes = synth_corpus(6, seed=1)
    write_columnar(episodes, tmp_path / "parts", rows_per_partition=3)
    write_columnar(episodes[1:2], tmp_path / "extra.parquet")
    (tmp_path / "extra.parquet").rename(tmp_path / "parts" / "part-00009.parquet")
    message = r"part-00009\.parquet:1: id: .*duplicate episode id .*first on row 2 of .*part-00000"
    with pytest.raises(ColumnarFormatError, match=message):
        compile_columns(tmp_path / "parts")
    with pytest.raises(ColumnarFormatError, match=message):
        sweep(tmp_path / "parts", GRID, client=client)


def test_a_points_walls_are_sorted_without_sorting_the_corpus(corpus: Path) -> None:
    """The sorted walls a partition keeps per point (the static walls with the changed episodes
    merged in) are np.sort of the evaluation's walls, for every point of the grid."""
    compiled = compile_columns(corpus / "parts")
    for point in GRID:
        ev = compiled.evaluate(point.policy)
        got = sorted_walls(compiled, ev)
        assert np.array_equal(got, np.sort(ev.wall_sec)), point.params
