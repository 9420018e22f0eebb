"""Acceptance: a tool that wedges three times in a row is withheld by the breaker identically in
the real engine (real ReviewEpisodes on threads), the twin and the vectorized engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_breaker_replay import POLICY, wedging_episode

from reviewlab.core._metrics import CALL_FRAME_COLUMNS
from reviewlab.core._policy import Narrowing, Policy
from reviewlab.engines._replay import replay

TIME_SCALE = 0.1
"""Recorded seconds × this = real seconds: the corpus's margins (1-s calls, 2-s bounds) are
100 ms of real time or more."""
LATE_SEC = 1.0
"""How much later (recorded seconds, 100 ms real) a real time may be than the twin's: thread
wake-ups on a loaded machine. Never earlier."""
TIMES = ("duration_sec", "start_sec", "wait_sec", "zombie_sec")


def assert_real_matches(real: pd.DataFrame, twin: pd.DataFrame) -> None:
    """Every column equal; the measured times no earlier than the twin's and at most
    ``LATE_SEC`` later per earlier event of the episode."""
    assert list(real.columns) == list(twin.columns) == list(CALL_FRAME_COLUMNS)
    exact = [c for c in twin.columns if c not in TIMES]
    pd.testing.assert_frame_equal(real[exact], twin[exact])
    events = twin.groupby("episode_id").cumcount().to_numpy() + twin["round"].to_numpy()
    for column in TIMES:
        got, want = real[column].to_numpy(float), twin[column].to_numpy(float)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        with np.errstate(invalid="ignore"):
            late = got - want
            near = (late >= -1e-6) & (late <= LATE_SEC * np.maximum(events, 1))
        bad = ~(same | near)
        assert not bad.any(), (column, twin[bad], real[bad])


@pytest.mark.parametrize("reaction", ["as_recorded", "reissue", "skip_target"])
def test_the_breaker_withholds_identically_in_every_engine(reaction):
    """The wedging corpus under 3x/2 rounds: the same calls withheld, every column equal between
    twin and vectorized, and equal (times within the real clock's band) in the real engine."""
    corpus = [wedging_episode()]
    runs = {
        engine: replay(corpus, POLICY, Narrowing("none"), engine=engine, reaction=reaction)
        for engine in ("twin", "vectorized")
    }
    real = replay(
        corpus, POLICY, Narrowing("none"), engine="real", reaction=reaction, time_scale=TIME_SCALE
    )
    twin = runs["twin"].calls
    pd.testing.assert_frame_equal(twin, runs["vectorized"].calls)
    assert twin["source_gap"].eq("native_tool_withheld").sum() >= 2
    assert_real_matches(real.calls, twin)


def test_a_slot_breaker_carries_across_episodes_in_the_real_engine():
    """Slot scope (rounds): the real engine runs a slot's episodes in start order with one
    shared state and withholds what the twin withholds."""
    corpus = [
        wedging_episode("b", slot="s", at=500.0),
        wedging_episode("a", slot="s", at=0.0),
        wedging_episode("c", slot="t", at=10.0),
    ]
    policy = Policy.uniform(2.0).with_breaker(2, cooldown_rounds=9, scope="slot")
    policy = policy.replace(narrowing=Narrowing("none"))
    twin = replay(corpus, policy)
    vectorized = replay(corpus, policy, engine="vectorized")
    real = replay(corpus, policy, engine="real", time_scale=TIME_SCALE)
    pd.testing.assert_frame_equal(twin.calls, vectorized.calls)
    first = twin.calls.groupby("episode_id")["outcome"].first()
    # "b" starts while slot s's breaker (tripped in "a", open 9 rounds) is still open; "c" is
    # alone in slot t and "a" starts closed.
    assert (first["a"], first["b"], first["c"]) == ("error", "withheld", "error")
    assert_real_matches(real.calls, twin.calls)
