"""Partitions where large corpora live: fsspec URLs written, converted, read and swept."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pandas as pd
import pytest

from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.cli import main
from reviewlab.core._policy import TimeoutPolicy
from reviewlab.engines.vectorized._columns import compile_columns
from reviewlab.recording._files import save_episodes
from reviewlab.recording._locations import is_url
from reviewlab.recording.columnar import iter_columnar, partition_paths, write_columnar
from reviewlab.recording.interop import convert_corpus
from reviewlab.recording.synth import synth_corpus

distributed = pytest.importorskip("distributed")

GRID = make_grid([TimeoutPolicy.ouroboros(), TimeoutPolicy.uniform(2.0)], scales=[0.1, 1.0])


@pytest.fixture(scope="module")
def episodes() -> list:
    """Three hundred synthetic episodes with deadlines."""
    return synth_corpus(300, seed=11, deadline_share=0.5)


@pytest.fixture
def memory_url() -> Iterator[str]:
    """A fresh directory URL on fsspec's in-memory filesystem, removed afterwards."""
    url = f"memory://reviewlab-tests/{uuid.uuid4().hex}"
    yield url
    fs = fsspec.filesystem("memory")
    if fs.exists(url):
        fs.rm(url, recursive=True)


def test_only_a_scheme_makes_a_url() -> None:
    """``proto://`` strings are URLs; paths, path objects and Windows drives are not."""
    assert is_url("s3://bucket/corpus") and is_url("file:///tmp/x") and is_url("memory://a")
    assert not is_url("corpus/parts") and not is_url(Path("s3:/x")) and not is_url("C:\\x")


def test_partitions_written_to_a_url_read_back_as_written(
    episodes: list, tmp_path: Path, memory_url: str
) -> None:
    """A directory of partitions and one .parquet object behind a URL compile to the very
    arrays of the same files on a local disk, their partitions named as URLs."""
    write_columnar(episodes, tmp_path / "parts", rows_per_partition=100)
    write_columnar(episodes, f"{memory_url}/parts", rows_per_partition=100)
    write_columnar(episodes, f"{memory_url}/one.parquet")
    assert partition_paths(f"{memory_url}/parts") == [
        f"{memory_url}/parts/part-{n:05d}.parquet" for n in range(3)
    ]
    local = compile_columns(tmp_path / "parts")
    point = GRID.points[1]
    for url in (f"{memory_url}/parts", f"{memory_url}/one.parquet"):
        assert compile_columns(url).summary(point.policy) == local.summary(point.policy)
    assert [e.id for e in iter_columnar(f"{memory_url}/parts")] == [e.id for e in episodes]


def test_a_failed_write_to_a_url_leaves_the_old_corpus(episodes: list, memory_url: str) -> None:
    """A repeated id stops the write; the corpus already at the URL and nothing else is left."""
    target = f"{memory_url}/parts"
    write_columnar(episodes[:50], target, rows_per_partition=20)
    before = sorted(fsspec.filesystem("memory").find(memory_url))
    with pytest.raises(ValueError, match="duplicate episode id"):
        write_columnar([*episodes[50:80], episodes[60]], target, rows_per_partition=20)
    assert sorted(fsspec.filesystem("memory").find(memory_url)) == before
    assert [e.id for e in iter_columnar(target)] == [e.id for e in episodes[:50]]


def test_convert_writes_partitions_to_a_url_and_a_cluster_sweeps_them(
    episodes: list, tmp_path: Path, memory_url: str, client: object
) -> None:
    """``convert_corpus`` streams JSONL into partitions behind a URL; a cluster sweep of the
    URL equals the in-process sweep of the same corpus on disk."""
    save_episodes(episodes, tmp_path / "c.jsonl.gz")
    assert convert_corpus(tmp_path / "c.jsonl.gz", memory_url, rows_per_partition=70) == 300
    assert len(partition_paths(memory_url)) == 5
    expected = sweep(tmp_path / "c.jsonl.gz", GRID)
    pd.testing.assert_frame_equal(
        sweep(memory_url, GRID, client=client), expected, check_exact=True
    )


def test_a_file_url_sweeps_like_its_path(episodes: list, tmp_path: Path, client: object) -> None:
    """``file://`` partitions, written and swept by URL, give the frame of the local path."""
    url = (tmp_path / "parts").as_uri()
    write_columnar(episodes, url, rows_per_partition=80)
    assert (tmp_path / "parts" / "part-00003.parquet").exists()
    expected = sweep(tmp_path / "parts", GRID)
    pd.testing.assert_frame_equal(sweep(url, GRID, client=client), expected, check_exact=True)


def test_a_url_sweep_needs_a_cluster_and_names_what_is_missing(
    memory_url: str, client: object
) -> None:
    """In-process, a URL is refused by name; a missing URL is named; an unknown scheme names
    the extra to install."""
    with pytest.raises(ValueError, match="behind a URL is swept on a Dask cluster"):
        sweep(f"{memory_url}/parts", GRID)
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        sweep(f"{memory_url}/nothing-here", GRID, client=client)
    with pytest.raises(ValueError, match=r"nosuchfs://x/parts: .*reviewlab\[cloud\]"):
        sweep("nosuchfs://x/parts", GRID, client=client)


def test_the_command_line_converts_to_a_url_and_sweeps_it_on_a_cluster(
    episodes: list,
    tmp_path: Path,
    memory_url: str,
    capsys: pytest.CaptureFixture[str],
    dask_log_levels: None,
    tcp_cluster: Any,
) -> None:
    """``reviewlab convert`` writes partitions behind a URL; ``reviewlab sweep URL --scheduler``
    writes the frame of the in-process sweep of the same corpus."""
    save_episodes(episodes, tmp_path / "c.jsonl.gz")
    argv = ["convert", str(tmp_path / "c.jsonl.gz"), memory_url, "--rows-per-partition", "100"]
    assert main(argv) == 0
    assert f"wrote 300 episode(s) to {memory_url}" in capsys.readouterr().out
    scales = ["--scale", "0.1,1"]
    out = tmp_path / "frame.csv"
    argv = ["sweep", memory_url, *scales, "--scheduler", tcp_cluster.scheduler_address]
    assert main([*argv, "-o", str(out)]) == 0
    assert (
        main(["sweep", str(tmp_path / "c.jsonl.gz"), *scales, "-o", str(tmp_path / "in.csv")]) == 0
    )
    pd.testing.assert_frame_equal(pd.read_csv(out), pd.read_csv(tmp_path / "in.csv"))
