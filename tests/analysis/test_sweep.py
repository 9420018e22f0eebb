"""sweep(): one tidy row per policy point, the same in-process and on a Dask cluster."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from reviewlab.analysis.sweep import make_grid, pareto, points_grid, sweep, tool_curves
from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.core._policy import Narrowing, TimeoutPolicy
from reviewlab.engines.twin import simulate
from reviewlab.recording._files import load_episodes

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "episodes" / "synthetic-1k.jsonl.gz"


@pytest.fixture(scope="module")
def corpus():
    return list(load_episodes(BUNDLED))[:300]


def grid():
    return make_grid(
        base=TimeoutPolicy.ouroboros(),
        tools={"read_file": [1.0, 30.0], "query_code": [10.0, 600.0]},
        scales=[0.5, 1.0],
        narrowings=[Narrowing(), Narrowing("reserve", reserve_sec=30.0), Narrowing.unbounded()],
    )


def test_grid_is_the_product_of_its_axes():
    """Scales × per-tool values × narrowings, each point named by its parameter columns."""
    points = grid()
    assert len(points) == 2 * 2 * 2 * 3
    params = points.frame()
    assert list(params.columns) == [
        "policy_name",
        "scale",
        "timeout.read_file",
        "timeout.query_code",
        "narrowing.mode",
        "narrowing.reserve_sec",
        "narrowing.fraction",
    ]
    first = points.points[0]
    assert (
        first.policy.timeout_for(None, "read_file") == 1.0
    )  # exact, not raised by the 600 s floor (× 0.5)
    assert (
        first.policy.timeout_for(None, "list_files") == 300.0
    )  # the floor, scaled, still holds for the rest
    assert len(points + points) == 2 * len(points)


def test_sweep_frame_has_params_and_every_summary_metric(corpus):
    """One row per point in grid order; each row equals the twin replaying that point alone."""
    points = grid()
    frame = sweep(corpus, points)
    assert len(frame) == len(points)
    assert list(frame.columns) == [*points.frame().columns, *SUMMARY_KEYS]
    for row, point in zip(frame.to_dict("records"), points, strict=True):
        # The sweep runs the vectorized engine; the SimPy twin is the independent reference.
        assert {k: row[k] for k in SUMMARY_KEYS} == pytest.approx(
            simulate(corpus, point.policy).summary, rel=1e-12, abs=1e-12
        )
    assert (frame.loc[frame["narrowing.mode"] == "unbounded", "abandoned_call_rate"] == 0).all()
    lower = frame[(frame["timeout.read_file"] == 1.0) & (frame["narrowing.mode"] == "inherit")]
    higher = frame[(frame["timeout.read_file"] == 30.0) & (frame["narrowing.mode"] == "inherit")]
    assert lower["abandoned_call_rate"].sum() > higher["abandoned_call_rate"].sum()


def test_twin_engine_sweep_agrees(corpus):
    """The same grid swept with the twin gives the same frame."""
    points = points_grid(
        [
            (TimeoutPolicy.uniform(5.0), Narrowing()),
            (TimeoutPolicy.ouroboros(), Narrowing.unbounded()),
        ]
    )
    fast = sweep(corpus[:60], points)
    slow = sweep(corpus[:60], points, engine="twin")
    pd.testing.assert_frame_equal(fast, slow)
    assert (
        fast.loc[1, "wedged_zombies"]
        == simulate(corpus[:60], TimeoutPolicy.ouroboros(), Narrowing.unbounded()).summary[
            "wedged_zombies"
        ]
    )


def test_a_cluster_sweep_reads_partitions_and_refuses_an_in_memory_corpus(corpus, client, tmp_path):
    """On a cluster the sweep reads Parquet partitions where they live (the frame equals the
    in-process one); an in-memory corpus, which the cluster could only get by scattering it
    from the client, is refused in one line saying what to do."""
    from reviewlab.recording.columnar import write_columnar

    points = grid()
    write_columnar(corpus, tmp_path / "parts", rows_per_partition=120)
    local = sweep(corpus, points)
    remote = sweep(tmp_path / "parts", points, client=client, chunk_size=5)
    pd.testing.assert_frame_equal(local, remote, check_exact=True)
    with pytest.raises(ValueError, match="client: a sweep on a cluster reads Parquet") as caught:
        sweep(corpus, points, client=client)
    assert "\n" not in str(caught.value) and "write_columnar" in str(caught.value)


def test_pareto_and_tool_curves(corpus):
    """pareto marks the non-dominated points; tool_curves varies one tool at a time."""
    frame = pd.DataFrame(
        {"coverage_loss_rate": [0.0, 0.1, 0.05, 0.2], "wall_p95_sec": [10.0, 5.0, 12.0, 6.0]}
    )
    assert pareto(frame).tolist() == [True, True, False, False]
    curves = tool_curves(corpus, {"read_file": [1.0, 600.0], "search_code": [5.0]})
    assert curves[["tool", "timeout_sec"]].values.tolist() == [
        ["read_file", 1.0],
        ["read_file", 600.0],
        ["search_code", 5.0],
    ]
    assert {"abandoned_call_rate", "coverage_loss_rate"} <= set(curves.columns)


def test_bad_grid_and_engine_are_refused(corpus):
    """Wrong types in a grid and unknown engines are errors naming the parameter."""
    with pytest.raises(TypeError, match=r"narrowings\[0\]"):
        make_grid(narrowings=["inherit"])
    with pytest.raises(ValueError, match="tools.read_file"):
        make_grid(tools={"read_file": []})
    with pytest.raises(ValueError, match="engine"):
        sweep(corpus, grid(), engine="real")


def test_threads_replay_points_at_once_and_give_the_same_frame(corpus, monkeypatch):
    """Points run concurrently on threads (two of them meet at a barrier, which a sweep that
    ran them one after another would never reach), and the frame is the one-thread frame, in
    grid order; every point's summary is the twin's."""
    import threading

    from reviewlab.engines.vectorized import CompiledCorpus, compile_corpus

    points = list(grid())
    compiled = compile_corpus(corpus)
    serial = sweep(compiled, points, threads=1)
    meet = threading.Barrier(2, timeout=60)
    names: list[str] = []
    summary = CompiledCorpus.summary

    def spied(self, policy, narrowing=None):
        names.append(threading.current_thread().name)
        if len(names) <= 2:
            meet.wait()  # BrokenBarrierError unless a second point runs meanwhile
        return summary(self, policy, narrowing)

    monkeypatch.setattr(CompiledCorpus, "summary", spied)
    threaded = sweep(compiled, points, threads=3)
    pd.testing.assert_frame_equal(threaded, serial)
    assert len(names) == len(points) and all(n.startswith("reviewlab-sweep") for n in names)
    monkeypatch.undo()
    for index in (0, 5, len(points) - 1):
        point = points[index]
        twin = simulate(corpus, point.policy).summary
        assert threaded.loc[index, list(SUMMARY_KEYS)].to_dict() == {
            key: twin[key] for key in SUMMARY_KEYS
        }


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_a_bad_number_of_threads_is_refused_by_name(corpus, threads):
    """threads must be a whole number from 1."""
    with pytest.raises(ValueError, match="threads"):
        sweep(corpus[:10], grid(), threads=threads)


def test_threads_an_engine_would_ignore_are_refused(corpus):
    """More than one thread is an error where points cannot run on threads: the twin, points
    with a breaker, a Dask cluster (whose workers run them)."""
    from reviewlab.core._breaker import BreakerRule

    with pytest.raises(ValueError, match="threads: engine='twin'"):
        sweep(corpus[:10], grid(), engine="twin", threads=2)
    broken = make_grid(base=TimeoutPolicy.uniform(5.0), breakers=[BreakerRule(3)])
    with pytest.raises(ValueError, match="threads: engine='twin' and points that hedge"):
        sweep(corpus[:10], broken, threads=2)
    with pytest.raises(ValueError, match="threads: points on a Dask cluster"):
        sweep(corpus[:10], grid(), client="tcp://127.0.0.1:1", threads=2)
    assert len(sweep(corpus[:10], grid(), engine="twin", threads=1)) == len(grid())


def test_concurrent_summaries_each_get_their_own_scratch_array(corpus):
    """Two summaries at once hold two scratch arrays; a released one comes back all zeros."""
    from reviewlab.engines.vectorized import compile_corpus

    compiled = compile_corpus(corpus[:20])
    first, second = compiled.zombie_scratch(), compiled.zombie_scratch()
    assert first is not second and first.shape == second.shape == (compiled.calls,)
    compiled.release_scratch(first)
    assert compiled.zombie_scratch() is first and not first.any()


class _ReadsArgs:
    """A custom policy (not keyed like TimeoutPolicy): it reads every call's arguments."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def timeout_for(self, tools, tool_name, tool_args=None):
        return self.seconds * (2.0 if tool_args and "path" in tool_args else 1.0)


def test_threads_on_a_column_compiled_corpus_with_custom_policies(corpus, tmp_path):
    """Custom policies read the arguments, decoded once from the file on first use, whichever
    thread asks first: the threaded frame is the one-thread frame."""
    from reviewlab.engines.vectorized._columns import compile_columns
    from reviewlab.recording._files import save_episodes

    path = tmp_path / "corpus.parquet"
    save_episodes(corpus, path)
    points = points_grid(
        [(_ReadsArgs(seconds), Narrowing()) for seconds in (0.5, 1.0, 2.0, 5.0, 30.0, 120.0)]
    )
    serial = sweep(compile_columns(path), points, threads=1, allow_unknown_tools=True)
    threaded = sweep(compile_columns(path), points, threads=4, allow_unknown_tools=True)
    pd.testing.assert_frame_equal(threaded, serial)
    twin = simulate(corpus, _ReadsArgs(2.0), Narrowing()).summary
    assert serial.loc[2, "abandoned_call_rate"] == twin["abandoned_call_rate"] > 0


def test_bases_that_differ_in_a_breaker_keep_two_names():
    """make_grid over a base and the same base with a breaker names the two points apart."""
    from reviewlab.analysis.sweep import make_grid
    from reviewlab.core._policy import Policy

    base = Policy.ouroboros()
    grid = make_grid([base, base.with_breaker(3)], scales=[1.0])
    names = [point.params["policy_name"] for point in grid]
    assert len(set(names)) == 2
    assert names[0] == "ouroborosx1" and "breaker(" in names[1]
    assert grid.points[1].policy.breaker is not None
