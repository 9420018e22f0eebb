"""``recommend(corpus, client=...)``: the tuner's search on a Dask cluster's partials."""

from __future__ import annotations

import pickle
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from reviewlab.analysis._budgets import ratio_upper
from reviewlab.analysis._cluster_partials import Moments, merge_ratio
from reviewlab.analysis._profiles import ProfileSettings, profile_tool
from reviewlab.analysis._recommendation import Recommendation
from reviewlab.analysis._tune import recommend
from reviewlab.cli import main
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.core._prices import load_prices
from reviewlab.engines._engine import Cluster, Twin
from reviewlab.engines.cluster import ClusterCorpus
from reviewlab.recording.columnar import write_columnar
from reviewlab.recording.synth import synth_corpus
from reviewlab.resources import data_path

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,200 synthetic episodes with deadlines and heavy tails, in four partitions."""
    root = tmp_path_factory.mktemp("tune")
    episodes = synth_corpus(1200, seed=21, tail_scale=40.0, deadline_share=0.6)
    write_columnar(episodes, root / "parts", rows_per_partition=300)
    return root / "parts"


# -- the merge of the partitions' moments (the core of the cluster's upper bounds) ------------


@pytest.mark.parametrize("seed", range(6))
def test_merged_moments_give_the_whole_corpus_ratio_and_bound(seed: int) -> None:
    """Split per-episode numerators and denominators into partitions whose own ratios differ
    widely (one with no denominator at all): the merge is ``ratio_upper`` of the whole."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 400, size=5)
    xs, ds = [], []
    for p, size in enumerate(sizes):
        d = rng.integers(0, 60, size=size).astype(float) * (p != 2)  # partition 2: no lines
        x = np.minimum(d, rng.poisson(0.5 + 4 * p, size=size))  # each its own ratio
        xs.append(x)
        ds.append(d)
    parts = [Moments.of(x, d) for x, d in zip(xs, ds, strict=True)]
    z = 1.6448536269514722
    expected = ratio_upper(np.concatenate(xs), np.concatenate(ds), z)
    got = merge_ratio(parts, z)
    assert got[0] == pytest.approx(expected[0], rel=1e-12)
    assert got[1] == pytest.approx(expected[1], rel=1e-12)
    # The shift of each partition's residuals to the corpus's ratio carries the bound: without
    # it the merge is visibly wrong on these partitions.
    naive = [p._replace(residual_cross=0.0, d_squares=0.0) for p in parts]
    assert merge_ratio(naive, z)[1] != pytest.approx(expected[1], rel=1e-6)


def test_merged_moments_of_nothing_are_zero() -> None:
    nothing = Moments.of(np.zeros(3), np.zeros(3))
    assert merge_ratio([nothing, nothing], 1.96) == (0.0, 0.0)
    one = Moments.of(np.array([2.0]), np.array([4.0]))
    assert merge_ratio([one], 1.96) == ratio_upper(np.array([2.0]), np.array([4.0]), 1.96)


def test_a_profile_depends_on_the_multiset_not_the_order() -> None:
    """A tool's slices arrive from the partitions in any order: its profile is the same."""
    rng = np.random.default_rng(3)
    durations = np.round(rng.lognormal(0.0, 1.2, size=2000), 3)
    completed = rng.random(2000) > 0.03
    order = rng.permutation(2000)
    settings = ProfileSettings(base_sec=30.0, z=1.64, guarantee=0.9, guarantee_confidence=0.99)
    one = profile_tool("t", durations, completed, 5000.0, settings)
    other = profile_tool("t", durations[order], completed[order], 5000.0, settings)
    assert one.ladder == other.ladder and one.quantiles == other.quantiles
    assert dict(one.survival.points) == dict(other.survival.points)
    assert one.tail == other.tail and one.certificate == other.certificate
    # Every rung's survival is known; another point is refused by name.
    assert all(0.0 <= one.survival.survival(t) <= 1.0 for t in one.ladder)
    with pytest.raises(ValueError, match="t: the survival at 0.123"):
        one.survival.survival(0.123)


# -- the cluster's recommendation is the in-process one -----------------------------------------


def _same(cluster: Recommendation, local: Recommendation) -> None:
    assert cluster.policy == local.policy
    assert cluster.summary == local.summary
    assert cluster.baseline == local.baseline
    assert cluster.rule == local.rule and cluster.objective == local.objective
    pd.testing.assert_frame_equal(cluster.explain, local.explain, rtol=1e-9, atol=1e-15)
    pd.testing.assert_frame_equal(cluster.budgets, local.budgets, rtol=1e-9, atol=1e-15)


CASES = [
    pytest.param({}, id="defaults"),
    pytest.param({"min_calls": 5, "max_abandoned_rate": 0.01}, id="abandoned-budget"),
    pytest.param({"objective": "max_silence", "max_timeout_coverage_loss": 0.05}, id="silence"),
    pytest.param({"guarantee": 0.9}, id="guarantee"),
    pytest.param(
        {
            "censored": "observed",
            "base": Policy.of(TimeoutPolicy.uniform(120.0), Narrowing("reserve", reserve_sec=20.0)),
            "allow_abandoning": ["query_code"],
        },
        id="observed-reserve",
    ),
]


@pytest.mark.parametrize("options", CASES)
def test_a_cluster_recommendation_is_the_in_process_one(
    parts: Path, client: Any, options: dict[str, Any]
) -> None:
    """Same policy, same summaries and counts to the bit; bounds equal to rounding."""
    local = recommend(parts, **options)
    on_cluster = recommend(parts, client=client, **options)
    _same(on_cluster, local)
    assert on_cluster.assumptions["partitions"] == 4
    assert on_cluster.assumptions["cluster"] == client.scheduler.address
    # The search did tighten something: the equality is not the base's twice.
    base = options.get("base", Policy.ouroboros())
    assert any(
        on_cluster.policy.timeouts.timeout_for(None, tool, remaining_sec=None)
        < base.timeouts.timeout_for(None, tool, remaining_sec=None)
        for tool in on_cluster.explain["tool"]
    )


def _received(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """Record the pickled size of everything the cluster session hands the client."""
    seen: dict[str, list[int]] = {"profiles": [], "points": []}
    evaluate, results = ClusterCorpus.evaluate, ClusterCorpus.results

    def spy_evaluate(self: ClusterCorpus, policies: Any, **kwargs: Any) -> Any:
        answers = evaluate(self, policies, **kwargs)
        seen["points"].extend(len(pickle.dumps(answer)) for answer in answers)
        return answers

    def spy_results(self: ClusterCorpus, futures: list[Any]) -> list[Any]:
        got = results(self, futures)
        seen["profiles"].extend(len(pickle.dumps(item)) for item in got)
        return got

    monkeypatch.setattr(ClusterCorpus, "evaluate", spy_evaluate)
    monkeypatch.setattr(ClusterCorpus, "results", spy_results)
    return seen


def test_what_reaches_the_client_does_not_grow_with_the_corpus(
    tmp_path: Path, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four times the episodes in as many partitions: every profile and every point's answer
    the client receives stays the same size (at most ×1.5), and the in-process tuner's
    recommendation is still the cluster's."""
    sizes = {}
    for n in (400, 1600):
        episodes = synth_corpus(n, seed=5, tail_scale=40.0, deadline_share=0.6)
        write_columnar(episodes, tmp_path / str(n), rows_per_partition=n // 4)
        seen = _received(monkeypatch)
        got = recommend(tmp_path / str(n), client=client, min_calls=5)
        monkeypatch.undo()
        _same(got, recommend(tmp_path / str(n), min_calls=5))
        sizes[n] = (max(seen["profiles"]), max(seen["points"]))
    assert sizes[1600][0] <= 1.5 * sizes[400][0]
    assert sizes[1600][1] <= 1.5 * sizes[400][1]


def test_the_cluster_engine_object_tunes_as_client_does(parts: Path, client: Any) -> None:
    """recommend(parts, engine=Cluster(client)) is the tune client=client makes, which the
    in-process one equals (above)."""
    _same(recommend(parts, engine=Cluster(client), min_calls=5), recommend(parts, min_calls=5))


def test_what_a_cluster_cannot_tune_is_refused_by_name(parts: Path, client: Any) -> None:
    """Prices, imputation, an in-memory corpus and an engine other than the vectorized one (or
    the cluster's) are refused by name, imputation by the cluster's declaration."""
    with pytest.raises(ValueError, match="prices: .*in-process"):
        recommend(parts, client=client, prices=load_prices(data_path("prices.toml")))
    with pytest.raises(ValueError, match="on a cluster replays wedge, observed, not 'impute'"):
        recommend(parts, client=client, censored="impute")
    with pytest.raises(ValueError, match="engine: the tuner replays with the vectorized engine"):
        recommend(parts, engine=Twin())
    with pytest.raises(ValueError, match="engine: a replay on a cluster is Cluster"):
        recommend(parts, client=client, engine="twin")
    episodes = synth_corpus(30, seed=1)
    with pytest.raises(ValueError, match="pass a path or URL"):
        recommend(episodes, client=client)


# -- the command line ----------------------------------------------------------------------------


def test_tune_scheduler_writes_the_in_process_policy(
    parts: Path,
    tcp_cluster: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    dask_log_levels: None,
) -> None:
    """``reviewlab tune DIR --scheduler ADDRESS -o FILE`` writes the policy file the in-process
    ``reviewlab tune DIR -o FILE`` writes, and prints the same tables."""
    local, remote = tmp_path / "local.toml", tmp_path / "remote.toml"
    assert main(["tune", str(parts), "--min-calls", "5", "-o", str(local)]) == 0
    printed_local = capsys.readouterr().out
    address = tcp_cluster.scheduler_address
    argv = ["tune", str(parts), "--min-calls", "5", "--scheduler", address, "-o", str(remote)]
    assert main(argv) == 0
    printed_remote = capsys.readouterr().out
    assert tomllib.loads(remote.read_text()) == tomllib.loads(local.read_text())
    assert address in printed_remote
    same = [line for line in printed_local.splitlines() if "/" not in line]
    assert same and all(line in printed_remote for line in same)


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        # tune baselines takes no --scheduler at all (tests/cli/test_cli_checks.py)
        (["--prices", "sample"], "--prices"),
        (["--on-error", "skip"], "--on-error"),
    ],
)
def test_tune_scheduler_refuses_what_reads_episodes_here(
    parts: Path,
    tcp_cluster: Any,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    named: str,
    dask_log_levels: None,
) -> None:
    argv = ["tune", str(parts), "--scheduler", tcp_cluster.scheduler_address, *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0] and "without --scheduler" in err[0]


def test_tune_connect_timeout_needs_a_scheduler(
    parts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tune", str(parts), "--connect-timeout", "3"]) == 2
    assert "--connect-timeout" in capsys.readouterr().err


# -- failures ------------------------------------------------------------------------------------


def test_a_worker_killed_mid_tune_is_recomputed_not_dropped(
    parts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker process killed once the search has started (its compiled partitions, their
    observations and the loosest timeouts' marks are lost with it) is replaced and its
    partitions recomputed from their lineage: the recommendation is the in-process one."""
    import os
    import signal

    from reviewlab.analysis import _cluster_tune as cluster_tune

    expected = recommend(parts, min_calls=5)
    start = cluster_tune.ClusterBudgetEvaluator.start
    killed: list[int] = []

    def start_then_kill(self: Any, loosest: dict[str, float]) -> None:
        start(self, loosest)
        pids = self.corpus.client.run(os.getpid)
        victim = sorted(pids.values())[0]
        os.kill(victim, signal.SIGKILL)  # it held half the partitions
        killed.append(victim)

    monkeypatch.setattr(cluster_tune.ClusterBudgetEvaluator, "start", start_then_kill)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as local,
        distributed.Client(local) as connected,
    ):
        got = recommend(parts, client=connected, min_calls=5)
    assert killed
    _same(got, expected)
