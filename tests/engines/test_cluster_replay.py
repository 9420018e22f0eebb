"""``replay(corpus, policy, client=...)``: one policy on a cluster, its summary exact, no frames."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._engine import Cluster, Twin
from reviewlab.engines._replay import replay
from reviewlab.engines._result import ReplaySummary
from reviewlab.recording.columnar import write_columnar
from reviewlab.recording.synth import synth_corpus

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five hundred synthetic episodes with deadlines and heavy tails, in three partitions."""
    root = tmp_path_factory.mktemp("replay")
    episodes = synth_corpus(500, seed=21, tail_scale=40.0, deadline_share=0.6)
    write_columnar(episodes, root / "parts", rows_per_partition=200)
    return root / "parts"


@pytest.mark.parametrize(
    ("policy", "censored"),
    [
        (Policy.ouroboros(), "wedge"),
        (Policy.of(TimeoutPolicy.uniform(0.5), Narrowing("reserve", reserve_sec=20.0)), "wedge"),
        (Policy.uniform(0.2), "observed"),
        (Policy.unbounded(), "wedge"),
    ],
)
def test_a_cluster_replay_has_the_in_process_summary(
    parts: Path, client: object, policy: Policy, censored: str
) -> None:
    """The summary merged from the partitions is the in-process vectorized replay's, every
    figure to the bit."""
    expected = replay(parts, policy, engine="vectorized", censored=censored).summary
    got = replay(parts, policy, engine="vectorized", censored=censored, client=client)
    assert got.summary == expected
    assert got.policy == policy and got.engine == "vectorized"
    assert got.assumptions["censored"] == censored and got.assumptions["partitions"] == 3


def test_a_cluster_replay_is_a_summary_without_frames(parts: Path, client: object) -> None:
    """A cluster replay answers with a ReplaySummary: the summary, no call or episode frame
    gathered to the client (nothing that raises when read: there is nothing to read)."""
    result = replay(parts, Policy.uniform(1.0), engine="vectorized", client=client)
    assert isinstance(result, ReplaySummary)
    assert not hasattr(result, "calls") and not hasattr(result, "episodes")
    assert result.summary["episodes"] == 500


def test_the_defaults_pick_the_cluster(parts: Path, client: object) -> None:
    """replay(path, client=c) with every default picks the cluster, the in-process vectorized
    summary to the bit; Cluster(client) as the engine is the same replay."""
    expected = replay(parts, Policy.uniform(1.0), engine="vectorized").summary
    assert replay(parts, Policy.uniform(1.0), client=client).summary == expected
    assert replay(parts, Policy.uniform(1.0), engine=Cluster(client)).summary == expected


def test_what_the_cluster_cannot_replay_is_one_line_why(parts: Path, client: object) -> None:
    """The twin, a reaction that rewrites rounds, hedges and breakers say in one line why."""
    for engine in ("twin", Twin(slots=2)):
        with pytest.raises(ValueError, match="engine: a replay on a cluster is Cluster") as caught:
            replay(parts, Policy.uniform(1.0), engine=engine, client=client)
        assert "\n" not in str(caught.value) and "in-process" in str(caught.value)
    with pytest.raises(ValueError, match="reaction: a replay on a cluster replays as_recorded"):
        replay(parts, Policy.uniform(1.0), reaction="reissue", client=client)
    hedged = Policy.uniform(1.0).with_idempotent("read_file").with_hedge("read_file", after_sec=0.2)
    with pytest.raises(ValueError, match="the policy's hedges cannot be honoured"):
        replay(parts, hedged, client=client)
    with pytest.raises(ValueError, match="the policy's breaker cannot be honoured"):
        replay(parts, Policy.uniform(1.0).with_breaker(2), client=client)


def test_a_compiled_partition_can_move_between_workers(parts: Path) -> None:
    """Dask may hand a compiled partition to another worker (over TCP, pickled): it pickles
    with its lazily read arguments, replays the same after the move, and Dask's ``sizeof``
    knows its real size (so the scheduler keeps the work where the partition is)."""
    import pickle

    from dask.sizeof import sizeof

    from reviewlab.engines.cluster._session import _compile
    from reviewlab.recording.columnar import partition_paths

    part = str(partition_paths(parts)[0])
    compiled = _compile(part, "wedge", 0, 0)
    moved = pickle.loads(pickle.dumps(compiled))
    policy = Policy.of(TimeoutPolicy.uniform(0.5), Narrowing("reserve", reserve_sec=20.0))
    assert moved.summary(policy) == compiled.summary(policy)
    assert list(moved.call_args) == list(compiled.call_args)  # read again from the file
    assert sizeof(compiled) >= compiled.duration_sec.nbytes + compiled.tool_code.nbytes
