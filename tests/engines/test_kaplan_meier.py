"""The Kaplan–Meier estimate of reviewlab.engines._censoring: ties, censoring at an event time,
and agreement with lifelines on random right-censored samples."""

from __future__ import annotations

import lifelines  # the reference estimate (the test extra installs it)
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewlab.engines._censoring import KaplanMeier


def test_tied_event_times_all_leave_the_risk_set_at_once():
    """Durations 1, 1, 2 (all returned): two of three are at risk-and-gone at 1, so S(1) = 1/3."""
    km = KaplanMeier([1.0, 1.0, 2.0], [True, True, True])
    assert km.survival(0.5) == 1.0
    assert km.survival(1.0) == pytest.approx(1 / 3)
    assert km.survival(1.5) == pytest.approx(1 / 3)
    assert km.survival(2.0) == 0.0


def test_a_call_censored_at_an_event_time_is_still_at_risk_then():
    """1 (returned), 1+ (censored), 2, 2, 3+: S(1) = 1 - 1/5, S(2) = 4/5 * (1 - 2/3)."""
    km = KaplanMeier([1.0, 1.0, 2.0, 2.0, 3.0], [True, False, True, True, False])
    assert km.survival(1.0) == pytest.approx(4 / 5)
    assert km.survival(2.0) == pytest.approx(4 / 5 * (1 / 3))
    assert km.survival(3.0) == pytest.approx(4 / 5 * (1 / 3))  # the last one was censored


# Few distinct durations so that ties (between events, and events with censorings) are common.
_DURATIONS = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.0, 7.5, 30.0])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_DURATIONS, st.booleans()), min_size=1, max_size=25))
def test_survival_matches_lifelines_on_censored_samples_with_ties(sample):
    """At every observed duration, between them and beyond the last one, S(t) is lifelines's."""
    times = np.array([t for t, _ in sample], dtype=float)
    events = np.array([e for _, e in sample], dtype=bool)
    ours = KaplanMeier(times, events)
    theirs = lifelines.KaplanMeierFitter().fit(times, event_observed=events)
    grid = np.unique(np.concatenate([times, times + 0.25, [times.max() + 100.0]]))
    expected = theirs.survival_function_at_times(grid).to_numpy()
    got = np.array([ours.survival(float(t)) for t in grid])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_the_estimate_does_not_depend_on_the_order_of_the_observations():
    """The same observations in another order give the same tail to the bit (the column
    compiler and the episode reader pass them in different orders)."""
    import numpy as np

    rng = np.random.default_rng(7)
    times = rng.exponential(900.0, 257)
    events = rng.random(257) < 0.7
    order = rng.permutation(257)
    a = KaplanMeier(times, events)
    b = KaplanMeier(times[order], events[order])
    assert a.tail_hazard == b.tail_hazard
    assert a.draw_beyond(float(times.max()), 0.3) == b.draw_beyond(float(times.max()), 0.3)
