"""What replay() keeps between calls to stay cheap (the default policy, the tables a policy
resolves to) never changes an answer: each replay equals the one of a freshly compiled corpus."""

from __future__ import annotations

import pytest

from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.engines.vectorized import compile_corpus
from reviewlab.recording.synth import synth_corpus


@pytest.fixture(scope="module")
def episodes() -> list:
    return synth_corpus(120, seed=4)


def fresh(episodes: list, policy: Policy) -> dict:
    """The summary from a corpus compiled for this one replay (nothing kept)."""
    return compile_corpus([e.model_copy() for e in episodes]).summary(policy)


def test_replay_without_a_policy_is_the_reference_policy(episodes: list) -> None:
    """replay() without a policy answers as Policy.of() of nothing (ouroboros, inherit), every
    time it is asked."""
    reference = Policy(timeouts=TimeoutPolicy.ouroboros(), narrowing=Narrowing())
    first = replay(episodes, engine="vectorized")
    second = replay(episodes, engine="vectorized")
    assert first.policy == reference
    assert first.summary == second.summary == fresh(episodes, reference)


def test_alternating_policies_each_get_their_own_answer(episodes: list) -> None:
    """Two policies replayed in turn on one compiled corpus, each twice: every answer is that
    policy's own (a kept resolution of the other is never read)."""
    tight = Policy.ouroboros().replace(
        timeouts=TimeoutPolicy.ouroboros().with_tool_timeouts(None, read_file=0.5, list_files=0.2)
    )
    loose = Policy.ouroboros().replace(narrowing=Narrowing("reserve", reserve_sec=10.0))
    expected = {"tight": fresh(episodes, tight), "loose": fresh(episodes, loose)}
    assert expected["tight"] != expected["loose"]
    corpus = compile_corpus(episodes)
    for name in ("tight", "loose", "tight", "loose"):
        policy = tight if name == "tight" else loose
        assert corpus.summary(policy) == expected[name]
        assert replay(corpus, policy, engine="vectorized").summary == expected[name]


def test_an_equal_policy_object_gets_the_same_answer(episodes: list) -> None:
    """A policy equal to a replayed one but another object answers as that one does."""
    corpus = compile_corpus(episodes)
    one = Policy.ouroboros().replace(
        timeouts=TimeoutPolicy.ouroboros().with_tool_timeouts(None, search_code=1.0)
    )
    other = Policy.ouroboros().replace(
        timeouts=TimeoutPolicy.ouroboros().with_tool_timeouts(None, search_code=1.0)
    )
    assert one == other and one is not other
    assert corpus.summary(one) == corpus.summary(other) == fresh(episodes, one)
