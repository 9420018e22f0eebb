"""The summary's quantiles (core/_quantiles.py): NumPy's linear method bit for bit on finite
values, infinity kept, and the same figures read from a sorted base with replaced values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewlab.core._quantiles import ReplacedValues, interpolate, quantile_ranks, quantiles

QS = (0.0, 0.5, 0.95, 0.99, 1.0)

finite = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
values = st.lists(st.one_of(finite, st.integers(0, 20).map(float)), min_size=1, max_size=400)
quantile = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(values, st.lists(quantile, min_size=1, max_size=4))
def test_finite_values_give_numpy_quantiles_bit_for_bit(data, qs):
    """Ranks, weights and interpolation are NumPy's own: the floats are identical."""
    array = np.array(data)
    assert quantiles(array, [*QS, *qs]) == tuple(float(v) for v in np.quantile(array, [*QS, *qs]))


def test_the_ranks_and_weights_by_hand():
    """Five values: p50 sits on rank 2 exactly; p95 between ranks 3 and 4 at weight 0.8."""
    (below, above, weight), (b95, a95, w95), (b1, a1, _) = quantile_ranks(5, (0.5, 0.95, 1.0))
    assert (below, above, weight) == (2, 3, 0.0)
    assert (b95, a95) == (3, 4) and w95 == pytest.approx(0.8)
    assert (b1, a1) == (4, 4)
    # From a weight of 0.5 NumPy interpolates from the upper value down.
    assert interpolate([(0, 1, 0.75)], {0: 1.0, 1: 3.0}) == (3.0 - 2.0 * 0.25,)
    assert interpolate([(0, 1, 0.25)], {0: 1.0, 1: 3.0}) == (1.0 + 2.0 * 0.25,)


def test_an_infinite_value_touched_with_weight_makes_the_quantile_infinite():
    """Never NaN: reaching inf with a positive weight is inf; with weight 0 it is not touched."""
    assert quantiles(np.array([1.0, 2.0, 3.0, math.inf]), (0.95, 1.0)) == (math.inf, math.inf)
    assert quantiles(np.array([math.inf, 2.0, 5.0]), (0.5,)) == (5.0,)
    assert quantiles(np.array([1.0, math.inf]), (0.0,)) == (1.0,)
    assert quantiles(np.zeros(0), (0.5, 0.99)) == (0.0, 0.0)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 30).map(float), min_size=1, max_size=300),
    st.data(),
)
def test_replaced_values_read_the_same_order_as_the_values_themselves(base, data):
    """Remove some values of a sorted base (ties and infinities included), add as many: every
    order statistic, quantile and the maximum equal those of the built array."""
    base_array = np.sort(np.array(base))
    n = base_array.size
    # Few replacements (the windowed search) as well as many.
    m = data.draw(st.integers(0, n if data.draw(st.booleans()) else max(0, n // 8)))
    at = data.draw(st.permutations(range(n)))[:m]
    added = data.draw(
        st.lists(
            st.one_of(st.integers(0, 40).map(float), st.just(math.inf)), min_size=m, max_size=m
        )
    )
    values = base_array.copy()
    values[list(at)] = added
    replaced = ReplacedValues(base_array, base_array[list(at)], np.array(added, dtype=float))
    expected = np.sort(values)
    assert np.array_equal(replaced.to_array(), expected)
    assert replaced.order_statistics(list(range(n))).tolist() == expected.tolist()
    assert quantiles(replaced, QS) == quantiles(values, QS)
    assert replaced.max() == float(expected[-1]) and replaced.size == n


def test_replaced_values_refuse_unbalanced_changes_and_ranks_outside():
    """As many added as removed; a rank outside the values is an error naming it."""
    with pytest.raises(ValueError, match="as many"):
        ReplacedValues(np.arange(3.0), np.array([1.0]), np.zeros(0))
    with pytest.raises(IndexError, match="rank 3"):
        ReplacedValues(np.arange(3.0), np.zeros(0), np.zeros(0)).order_statistics([3])
