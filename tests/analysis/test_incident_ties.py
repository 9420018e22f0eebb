"""Equal silences are ranked by the documented tie-break (reviewlab/analysis/_incident.py): the
one that began first, then corpus order; ``longest_silences`` keeps that order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reviewlab.analysis._incident import longest_silences, recorded_silences
from reviewlab.core._policy import TimeoutPolicy
from reviewlab.recording._schema import Call, Episode, Round

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _episode(episode_id: str, at: float, silences: list[float]) -> Episode:
    """One episode starting ``at`` seconds after T0, one call per round (1 s sends)."""
    return Episode(
        id=episode_id,
        source="synthetic",
        started_at=T0 + timedelta(seconds=at),
        rounds=[
            *(
                Round(send_sec=1.0, calls=[Call(tool="search_code", duration_sec=s)])
                for s in silences
            ),
            Round(send_sec=1.0),
        ],
    )


def _corpus() -> list[Episode]:
    # Corpus order: late, twin_b, twin_a, early, longest. Every silence but one lasts 5 s.
    return [
        _episode("late", 100.0, [5.0]),  # begins at +101 s
        _episode("twin_b", 0.0, [5.0, 5.0]),  # begin at +1 s and +7 s
        _episode("twin_a", 0.0, [5.0]),  # begins at +1 s, like twin_b's first
        _episode("early", -50.0, [5.0]),  # begins at -49 s
        _episode("longest", 200.0, [9.0]),
    ]


EXPECTED = [
    ("longest", 1),  # the longest silence comes first whatever its start
    ("early", 1),  # then the 5-s ones, earliest beginning first
    ("twin_b", 1),  # same beginning as twin_a's: corpus order decides
    ("twin_a", 1),
    ("twin_b", 2),
    ("late", 1),
]


def test_equal_silences_rank_by_when_they_began_then_corpus_order():
    """Ties of silence_sec are ordered by began_at, and equal began_at by corpus order."""
    frame = recorded_silences(_corpus())
    assert list(zip(frame["episode_id"], frame["round"], strict=True)) == EXPECTED
    assert frame["rank"].tolist() == list(range(1, len(EXPECTED) + 1))


def test_the_ranking_does_not_depend_on_the_order_of_equal_starts_alone():
    """Reversing the corpus swaps only the rows that tie on both silence and beginning."""
    frame = recorded_silences(list(reversed(_corpus())))
    swapped = [EXPECTED[0], EXPECTED[1], EXPECTED[3], EXPECTED[2], *EXPECTED[4:]]
    assert list(zip(frame["episode_id"], frame["round"], strict=True)) == swapped


def test_longest_silences_cuts_the_ranking_after_the_tie_break():
    """top=3 keeps the first three rows of that ranking, in that order, and replays them."""
    frame = longest_silences(_corpus(), {"uniform 2 s": TimeoutPolicy.uniform(2.0)}, top=3)
    assert list(zip(frame["episode_id"], frame["round"], strict=True)) == EXPECTED[:3]
    assert frame["rank"].tolist() == [1, 2, 3]
    assert frame["bounded_sec.uniform 2 s"].tolist() == [2.0, 2.0, 2.0]
