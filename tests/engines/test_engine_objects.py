"""Engines as objects (reviewlab/engines/_engine.py, honours.py): a name is the object with its
defaults, options set its fields, and its declaration refuses by name before any work."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from reviewlab.core._policy import Policy
from reviewlab.core._vocab import ENGINES
from reviewlab.engines import Cluster, Real, ReplaySummary, Twin, Vectorized
from reviewlab.engines._engine import engine_of
from reviewlab.engines._honours import CLUSTER, REAL, TWIN, VECTORIZED
from reviewlab.engines._replay import replay
from reviewlab.testing._conformance_corpus import conformance_corpus


def test_a_name_is_the_object_with_its_defaults() -> None:
    """Every engine name maps to its class with default fields; options set the fields; with a
    client and no engine the cluster is chosen."""
    assert {name: type(engine_of(name)) for name in ENGINES} == {
        "twin": Twin,
        "vectorized": Vectorized,
        "real": Real,
    }
    assert engine_of(None) == Twin()
    assert engine_of("twin", slots=6) == Twin(slots=6)
    assert engine_of(Twin(workers=2), slots=3) == Twin(slots=3, workers=2)
    assert engine_of("real", time_scale=0.5) == Real(time_scale=0.5)
    assert engine_of(None, client="tcp://127.0.0.1:9") == Cluster("tcp://127.0.0.1:9")
    assert engine_of("vectorized", client="tcp://127.0.0.1:9") == Cluster("tcp://127.0.0.1:9")
    assert engine_of(Vectorized(), client="tcp://127.0.0.1:9") == Cluster("tcp://127.0.0.1:9")


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: engine_of("warp"), "engine: expected one of twin, vectorized, real"),
        (lambda: engine_of("vectorized", slots=2), "slots: not an option of Vectorized"),
        (lambda: engine_of("twin", time_scale=2.0), "belongs to engine='real'"),
        (lambda: engine_of("twin", client="tcp://x:1"), "engine: a replay on a cluster is"),
        (lambda: engine_of(Real(), client="tcp://x:1"), "'Real' replays Episode objects"),
        (lambda: engine_of(Cluster("tcp://x:1"), client="tcp://x:1"), "client: given twice"),
        (lambda: Twin(slots=0), "slots: expected a whole number >= 1"),
        (lambda: Cluster(None), "client: Cluster(client) needs"),
    ],
)
def test_a_bad_choice_is_one_error_naming_the_parameter(call, needle: str) -> None:
    """An unknown name, an option of another engine, a twin on a cluster, a client given twice
    and bad fields are ValueErrors naming what is wrong."""
    with pytest.raises(ValueError) as caught:
        call()
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_an_engine_object_replays_as_its_name_does() -> None:
    """replay(engine=Twin(slots=2)) is replay(engine="twin", slots=2): the same calls, the same
    pool; Vectorized() is engine="vectorized"."""
    corpus, policy = conformance_corpus(), Policy.uniform(6.0)
    by_object = replay(corpus, policy, engine=Twin(slots=2))
    by_name = replay(corpus, policy, engine="twin", slots=2)
    assert by_object.calls.equals(by_name.calls) and by_object.summary == by_name.summary
    assert by_object.slots is not None and set(by_object.slots["slot_id"]) == set(
        by_name.slots["slot_id"]
    )
    assert (
        replay(corpus, policy, engine=Vectorized()).summary
        == replay(corpus, policy, engine="vectorized").summary
    )


def test_the_declaration_refuses_before_any_work(tmp_path: Path) -> None:
    """A part the engine does not honour is refused by name before the corpus is even opened
    (a missing file would be the other error)."""
    missing = tmp_path / "missing.jsonl"
    tasks = Policy.uniform(5.0).with_tasks(query_code="cancel")
    with pytest.raises(ValueError, match="the vectorized engine: the policy's tasks"):
        replay(missing, tasks, engine="vectorized")
    capped = Policy.uniform(5.0).with_idle(read_file=1.0).replace(cap_rule="checked_on_progress")
    with pytest.raises(ValueError, match="the real engine: the policy's cap_rule"):
        replay(missing, capped, engine=Real())


def test_the_declarations_say_what_each_engine_honours() -> None:
    """The twin alone replays another SDK's cap rule, no engine replays tasks, only the cluster
    gives no frames and keeps to the recorded rounds, wedge and observed."""
    assert "cap_rule" in TWIN.parts and "cap_rule" not in VECTORIZED.parts | REAL.parts
    assert all("tasks" not in h.parts for h in (TWIN, VECTORIZED, REAL, CLUSTER))
    assert [h.frames for h in (TWIN, VECTORIZED, REAL, CLUSTER)] == [True, True, True, False]
    assert CLUSTER.reactions == ("as_recorded",) and CLUSTER.censoring == ("wedge", "observed")
    assert CLUSTER.parts == {"timeouts", "narrowing", "idle_sec"}
    assert Twin.honours is TWIN and Cluster.honours is CLUSTER
    assert TWIN.describe()["parts"] == sorted(TWIN.parts)
    for kind in (Twin, Vectorized, Real, Cluster):  # the declared options are its fields
        assert set(kind.honours.options) == {f.name for f in fields(kind)}


def test_a_summary_only_result_has_no_frames_to_read() -> None:
    """ReplaySummary carries the summary, the engine, the policy and the assumptions, and no
    calls or episodes attribute at all."""
    summary = ReplaySummary({"episodes": 1}, "vectorized", Policy.ouroboros())
    assert not hasattr(summary, "calls") and not hasattr(summary, "episodes")
    assert summary.policy == Policy.ouroboros() and summary.assumptions == {}
