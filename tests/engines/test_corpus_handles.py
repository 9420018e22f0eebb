"""The corpus handles open_corpus keeps for lists of episodes: the one cache of compiled forms.

Compiles are counted by wrapping the two compiled forms' constructors (the vectorized engine's
``CompiledCorpus``, the twin's ``TwinCorpus``); every replay of a kept handle is compared with
a replay of an independent deep copy of the same episodes, which no handle can answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from reviewlab.core._policy import Policy
from reviewlab.engines._corpus import HANDLES_KEPT, clear_corpora, open_corpus
from reviewlab.engines._replay import replay
from reviewlab.engines.twin._corpus import TwinCorpus
from reviewlab.engines.vectorized._compiled import CompiledCorpus
from reviewlab.recording._schema import Episode
from reviewlab.recording.synth import synth_corpus

ENGINES = ("vectorized", "twin")
TIGHT = Policy.uniform(2.0)
"""A bound :func:`_slowed`'s 100-second calls all pass."""


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Compiles per engine from here on, with no handle kept before."""
    counts = dict.fromkeys(ENGINES, 0)
    for engine, kind in (("vectorized", CompiledCorpus), ("twin", TwinCorpus)):
        real = kind.__init__

        def counted(self: Any, *args: Any, _real: Any = real, _engine: str = engine, **kw: Any):
            counts[_engine] += 1
            _real(self, *args, **kw)

        monkeypatch.setattr(kind, "__init__", counted)
    clear_corpora()
    yield counts
    clear_corpora()


def _slowed(episode: Episode) -> Episode:
    """``episode`` with every call returning after 100 seconds."""
    slow = {"duration_sec": 100.0, "completed": True, "returned_after_sec": None}
    return episode.model_copy(
        update={
            "rounds": [
                rnd.model_copy(update={"calls": [c.model_copy(update=slow) for c in rnd.calls]})
                for rnd in episode.rounds
            ]
        }
    )


def _assert_replays_like_a_copy(episodes: list[Episode], engine: str) -> None:
    """The replay of ``episodes`` equals the replay of an independent deep copy of them."""
    got = replay(episodes, TIGHT, engine=engine)
    fresh = replay([e.model_copy(deep=True) for e in episodes], TIGHT, engine=engine)
    pd.testing.assert_frame_equal(got.calls, fresh.calls)
    pd.testing.assert_frame_equal(got.episodes, fresh.episodes)
    assert got.summary == pytest.approx(fresh.summary, nan_ok=True)


def test_a_list_replayed_again_compiles_once(compiles: dict[str, int]) -> None:
    """Replays of the same episodes, under several policies and in a new list, share one
    compile per engine, and answer as the first replay did."""
    episodes = synth_corpus(12, seed=3)
    for engine in ENGINES:
        first = replay(episodes, TIGHT, engine=engine)
        for policy in (Policy.ouroboros(), Policy.uniform(30.0)):
            replay(episodes, policy, engine=engine)
        again = replay(list(episodes), TIGHT, engine=engine)
        pd.testing.assert_frame_equal(again.calls, first.calls)
    assert compiles == {"vectorized": 1, "twin": 1}
    assert open_corpus(tuple(episodes)) is open_corpus(episodes)


def test_a_list_changed_in_the_middle_is_compiled_again(compiles: dict[str, int]) -> None:
    """An episode replaced in place, in the middle of the list (its length and ends unchanged),
    is compiled anew and replayed as changed."""
    episodes = synth_corpus(12, seed=3)
    assert episodes[6].calls, "the replaced episode must have calls for the change to show"
    for engine in ENGINES:
        replay(episodes, TIGHT, engine=engine)
    kept = open_corpus(episodes)
    episodes[6] = _slowed(episodes[6])
    assert open_corpus(episodes) is not kept
    assert kept.episodes()[6] is not episodes[6]  # the kept handle holds its own list
    for engine in ENGINES:
        got = replay(episodes, TIGHT, engine=engine).calls
        mine = got[got["episode_id"] == episodes[6].id]
        assert mine["duration_sec"].tolist() == [100.0] * len(episodes[6].calls)
        _assert_replays_like_a_copy(episodes, engine)
    # per engine: the first list, the changed one, and the two independent copies
    assert compiles == {"vectorized": 3, "twin": 3}


def test_lists_sharing_their_length_and_ends_do_not_collide(compiles: dict[str, int]) -> None:
    """Two lists alike in length, first and last episode, replayed in turn, each answer for
    their own episodes."""
    episodes = synth_corpus(12, seed=3)
    other = [*episodes[:6], _slowed(episodes[6]), *episodes[7:]]
    assert open_corpus(episodes) is not open_corpus(other)
    for _ in range(2):
        for corpus in (episodes, other, episodes[:5], episodes[5:]):
            for engine in ENGINES:
                _assert_replays_like_a_copy(corpus, engine)


def test_past_the_kept_handles_the_oldest_list_is_opened_anew(compiles: dict[str, int]) -> None:
    """Past HANDLES_KEPT lists the least recently opened one is forgotten; clear_corpora
    forgets them all."""
    episodes = synth_corpus(HANDLES_KEPT + 2, seed=4)
    lists = [[episode] for episode in episodes]
    first = open_corpus(lists[0])
    for later in lists[1:HANDLES_KEPT]:
        open_corpus(later)
    assert open_corpus(lists[0]) is first  # still kept, and now the most recent
    newest = open_corpus(lists[HANDLES_KEPT])
    assert open_corpus(lists[1]) is not open_corpus(lists[HANDLES_KEPT + 1])
    clear_corpora()
    assert open_corpus(lists[HANDLES_KEPT]) is not newest
