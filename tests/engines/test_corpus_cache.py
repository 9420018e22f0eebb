"""The compiled corpora the engines keep (engines/_corpus_cache.py): a hit needs the same episodes
in the same order and the same options; the least recently used entry goes first."""

from __future__ import annotations

import pytest

from reviewlab.engines._corpus_cache import CorpusCache


class Thing:
    """An object compared by identity only (as distinct episodes are, unless equal)."""


def test_the_same_objects_hit_and_another_list_of_them_too():
    """A new list holding the same objects in the same order is a hit."""
    cache: CorpusCache[str] = CorpusCache(2)
    things = [Thing() for _ in range(5)]
    cache.put(things, "compiled")
    assert cache.get(list(things)) == "compiled"
    assert cache.get(tuple(things)) == "compiled"


def test_a_changed_middle_episode_or_order_misses():
    """Same length, first and last: a different object inside, or a swap, is not a hit."""
    cache: CorpusCache[str] = CorpusCache(2)
    things = [Thing() for _ in range(5)]
    cache.put(things, "compiled")
    assert cache.get([*things[:2], Thing(), *things[3:]]) is None
    assert cache.get([things[0], things[2], things[1], things[3], things[4]]) is None
    assert cache.get(things[:4]) is None


def test_options_are_part_of_the_key():
    """The same episodes under other options (censoring, seed) are another entry."""
    cache: CorpusCache[str] = CorpusCache(4)
    things = [Thing(), Thing()]
    cache.put(things, "wedge", "wedge", 0)
    cache.put(things, "impute-1", "impute", 1)
    assert cache.get(things, "wedge", 0) == "wedge"
    assert cache.get(things, "impute", 1) == "impute-1"
    assert cache.get(things, "impute", 2) is None


def test_equal_episodes_that_are_other_objects_hit_by_value():
    """Objects equal by value compile to the same corpus: list equality finds them."""
    cache: CorpusCache[str] = CorpusCache(2)
    cache.put([("a", 1), ("b", 2), ("c", 3)], "compiled")
    assert cache.get([("a", 1), ("b", 2), ("c", 3)]) == "compiled"
    assert cache.get([("a", 1), ("b", 9), ("c", 3)]) is None


def test_the_least_recently_used_entry_goes_first():
    """With room for two, a third put drops the one not used for longest."""
    cache: CorpusCache[str] = CorpusCache(2)
    first, second, third = ([Thing()] for _ in range(3))
    cache.put(first, "1")
    cache.put(second, "2")
    assert cache.get(first) == "1"  # first is now the most recently used
    cache.put(third, "3")
    assert cache.get(second) is None and cache.get(first) == "1" and cache.get(third) == "3"
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0 and cache.get(first) is None


def test_an_entry_keeps_its_objects_alive_and_the_empty_corpus_is_an_entry():
    """The entry holds the episodes (so their ids are not reused); [] is cached like any list."""
    cache: CorpusCache[str] = CorpusCache(1)
    things = [Thing(), Thing()]
    cache.put(things, "two")
    kept = cache._entries[next(iter(cache._entries))][0]
    assert kept == things and kept is not things
    cache.put([], "none")
    assert cache.get([]) == "none"
    with pytest.raises(ValueError, match="size"):
        CorpusCache(0)
