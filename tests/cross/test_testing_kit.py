"""reviewlab.testing's builders, strategies, assertions and side-by-side runs, and one differential
test on them."""

from __future__ import annotations

import gc
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewlab import Policy, replay
from reviewlab.recording._schema import SCHEMA_VERSION, SCHEMA_VERSION_2
from reviewlab.testing._assertions import assert_same_replay, assert_same_summary
from reviewlab.testing._builders import START, call, corpus, episode, read
from reviewlab.testing._overlap import frozen_heap, side_by_side
from reviewlab.testing._strategies import corpora, policies


def test_builders_make_valid_episodes_of_the_right_version():
    """A read carries its extent, a final-answer round is appended, progress makes format 2."""
    plain = episode("e", [[read("a.py", 1, 10, 2.0)], [call("list_files", 1.0)]])
    assert plain.schema_version == SCHEMA_VERSION
    assert [len(r.calls) for r in plain.rounds] == [1, 1, 0]
    assert plain.calls[0].requested_lines == 10
    v2 = episode("f", [[read("a.py", 1, 5, 3.0, progress_sec=[1.0])]], final_answer=False)
    assert v2.schema_version == SCHEMA_VERSION_2 and len(v2.rounds) == 1
    both = corpus(plain, [v2], spacing_sec=10.0)
    assert [e.id for e in both] == ["e", "f"]
    assert (both[1].started_at - START).total_seconds() == 10.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora(progress=True),
    policy=policies(),
    censored=st.sampled_from(["wedge", "observed", "impute"]),
    reaction=st.sampled_from(["as_recorded", "reissue", "skip_target"]),
)
def test_the_twin_and_the_vectorized_engine_agree_on_the_shared_strategies(
    corpus, policy, censored, reaction
):
    """On any corpus and policy the one strategy module draws (idle, hedges, breaker included),
    the twin and the vectorized engine give the same frames and summary, exactly."""
    try:
        twin = replay(corpus, policy, engine="twin", censored=censored, reaction=reaction, seed=1)
    except ValueError as refusal:  # e.g. impute with no completed call: both say the same
        with pytest.raises(ValueError, match=str(refusal).split(":")[0]):
            replay(corpus, policy, engine="vectorized", censored=censored, reaction=reaction)
        return
    try:
        fast = replay(
            corpus, policy, engine="vectorized", censored=censored, reaction=reaction, seed=1
        )
    except ValueError as refusal:  # allowed only by name, for the combination it cannot replay
        assert str(refusal).startswith("hedges:") and policy.hedges
        assert any(c.progress_sec is not None for e in corpus for c in e.calls)
        return
    assert_same_replay(twin, fast)


def test_assert_same_replay_names_what_differs():
    """A replay under another policy differs, and the assertion says where."""
    episodes = [episode("e", [[call("search_code", 3.0)]])]
    a = replay(episodes, Policy.uniform(5.0), engine="twin")
    b = replay(episodes, Policy.uniform(1.0), engine="twin")
    assert_same_replay(a, replay(episodes, Policy.uniform(5.0), engine="vectorized"))
    with pytest.raises(AssertionError):
        assert_same_replay(a, b)
    with pytest.raises(AssertionError, match="abandoned_call_rate"):
        assert_same_summary(a.summary, b.summary, tolerance=0.5)
    assert_same_summary({"x": 1.0}, {"x": 1.4}, tolerance=0.5)
    with pytest.raises(AssertionError, match="summary x"):
        assert_same_summary({"x": float("inf")}, {"x": 1e300}, tolerance=1e309)


def test_side_by_side_runs_items_at_once_and_answers_in_their_order():
    """Two items meet at a two-party barrier (so they ran at the same time), answers keep the
    items' order, and a caught exception is the answer of its item alone."""
    meet = threading.Barrier(2, timeout=60)

    def run(item: int) -> int:
        if item < 2:
            meet.wait()
        if item == 3:
            raise AssertionError("three")
        return item * 10

    answers = side_by_side(run, [0, 1, 2, 3], workers=2, caught=(AssertionError,))
    assert answers[:3] == [0, 10, 20]
    assert isinstance(answers[3], AssertionError) and str(answers[3]) == "three"


def test_side_by_side_raises_what_it_does_not_catch_and_refuses_bad_workers():
    """An exception not among those caught is raised; a worker count below one is refused by
    name."""

    def run(item: int) -> int:
        raise KeyError(item)

    with pytest.raises(KeyError):
        side_by_side(run, [1], workers=1, caught=(AssertionError,))
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="workers"):
            side_by_side(lambda item: item, [1], workers=bad)


def test_the_heap_is_frozen_while_the_runs_run_and_only_by_its_freezer_unfrozen():
    """Inside the runs every object alive before them is frozen and afterwards none is; in a
    heap frozen before (as the test session freezes it), what the block froze stays frozen."""
    was_frozen = gc.get_freeze_count()
    gc.unfreeze()
    try:
        seen = side_by_side(lambda _: gc.get_freeze_count(), [0], workers=1)
        assert seen[0] > 0 and gc.get_freeze_count() == 0
        gc.freeze()
        outer = gc.get_freeze_count()
        fresh = [[index] for index in range(1000)]  # made after the outer freeze
        assert _in_a_generation(fresh[0])
        with frozen_heap():
            assert gc.get_freeze_count() >= outer + len(fresh)
        assert gc.get_freeze_count() >= outer + len(fresh)
        assert not _in_a_generation(fresh[0])  # still frozen
    finally:
        gc.unfreeze()
        if was_frozen:
            gc.freeze()


def _in_a_generation(thing: object) -> bool:
    """Whether the collector scans ``thing`` (it is in one of its generations, not frozen)."""
    return any(other is thing for other in gc.get_objects())
