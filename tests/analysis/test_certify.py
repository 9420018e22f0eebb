"""Certified timeouts: the order-statistic bound, its finite-sample coverage with censored
calls, and recommend(guarantee=...) (reviewlab/analysis/_certify.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from reviewlab.analysis._certify import (
    binomial_tail,
    calls_needed,
    certify,
    certify_rank,
    check_guarantee,
)
from reviewlab.analysis._tune import recommend
from reviewlab.resources import corpus_path


def test_the_binomial_tail_matches_scipy():
    """P(Bin(n, p) >= k) for every k equals scipy's survival function."""
    for n, p in ((1, 0.5), (7, 0.3), (200, 0.95), (3000, 0.99)):
        expected = binom.sf(np.arange(n + 1) - 1, n, p)
        assert np.allclose(binomial_tail(n, p), expected, rtol=1e-9, atol=1e-14)


def test_the_rank_is_the_smallest_with_a_small_enough_tail_by_brute_force():
    """certify_rank is the smallest k whose exact tail (summed with math.comb) is <= 1 - c."""
    for n, p, c in ((60, 0.95, 0.95), (150, 0.95, 0.999), (40, 0.9, 0.99), (10, 0.95, 0.95)):

        def tail(k: int, n: int = n, p: float = p) -> float:
            return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))

        brute = next((k for k in range(1, n + 1) if tail(k) <= 1 - c), None)
        assert certify_rank(n, p, c) == brute
    assert calls_needed(0.95, 0.999) == 135  # 0.95**135 <= 0.001 < 0.95**134
    assert certify_rank(134, 0.95, 0.999) is None and certify_rank(135, 0.95, 0.999) == 135


def test_coverage_holds_at_the_stated_confidence_under_type_one_censoring():
    """Over 2,000 corpora of 300 lognormal calls censored at a common bound (Type-I), the true
    coverage F(t) of the certified timeout is below the guarantee in at most 1 - confidence of
    them (plus binomial noise); the censored calls are kept, never dropped."""
    rng = np.random.default_rng(7)
    p, c, bound = 0.9, 0.95, 6.0  # about 1.3 % of calls cut at the bound
    misses = 0
    trials = 2000
    for _ in range(trials):
        true = rng.lognormal(0.0, 0.8, 300)
        seen = np.minimum(true, bound)
        done = true <= bound
        cert = certify(seen, done, p, c)
        assert cert.certified
        coverage = _lognormal_cdf(cert.timeout_sec, 0.0, 0.8)
        misses += coverage < p
    allowed = (1 - c) * trials + 3 * math.sqrt((1 - c) * c * trials)
    assert misses <= allowed
    assert misses > 0  # the bound is not vacuous: it is near its stated confidence


def _lognormal_cdf(t: float, mu: float, sigma: float) -> float:
    return 0.5 * (1 + math.erf((math.log(t) - mu) / (sigma * math.sqrt(2))))


def test_too_many_censored_calls_or_too_few_calls_say_so():
    """A tool whose k-th shortest call never returned, or with fewer calls than the guarantee
    needs, gets no finite timeout and a reason naming the counts."""
    durations = np.linspace(0.1, 1.0, 200)
    done = np.ones(200, dtype=bool)
    done[-20:] = False  # 10 % never returned
    cert = certify(durations, done, 0.95, 0.999)
    assert not cert.certified and "20 of 200 call(s) never returned" in cert.reason
    few = certify(np.ones(30), np.ones(30, dtype=bool), 0.95, 0.999)
    assert not few.certified and few.rank is None and "needs at least 135" in few.reason


def test_a_guarantee_outside_zero_and_one_is_refused():
    """0, 1, negative, NaN and booleans are not probabilities strictly between 0 and 1."""
    for bad in (0.0, 1.0, -0.5, 1.5, float("nan"), True):
        with pytest.raises(ValueError, match=r"^guarantee: expected a probability strictly"):
            check_guarantee("guarantee", bad)
    with pytest.raises(ValueError, match=r"^guarantee: "):
        recommend(corpus_path(), guarantee=1.0)


def test_recommend_with_a_guarantee_gives_each_tool_its_certified_timeout():
    """On the bundled corpus every tool's timeout is its certificate rounded up, the
    certificate's own recorded coverage is at least the guarantee, and the rule says so."""
    rec = recommend(corpus_path(), guarantee=0.95)
    explain = rec.explain.set_index("tool")
    assert "certified at confidence 0.999" in rec.rule
    assert rec.assumptions["guarantee"] == 0.95
    from reviewlab.engines._corpus import open_corpus

    observed = open_corpus(corpus_path()).observations()
    for tool, row in explain.iterrows():
        assert row["certified_sec"] <= row["timeout_sec"] <= row["certified_sec"] * 1.1
        mine = observed.of_tool(str(tool))
        within = observed.completed[mine] & (observed.duration_sec[mine] <= row["timeout_sec"])
        assert within.mean() >= 0.95


def test_a_tail_exactly_on_the_limit_certifies():
    """Two calls, guarantee 0.5, confidence 0.75: P(Bin(2, 0.5) >= 2) = 0.25 equals
    1 - 0.75 exactly, so rank 2 certifies and 2 calls are enough (0.5 ** 2 = 0.25)."""
    assert certify_rank(2, 0.5, 0.75) == 2
    assert calls_needed(0.5, 0.75) == 2
    assert calls_needed(0.5, 0.875) == 3  # 0.5 ** 3 = 0.125
    cert = certify([0.3, 0.7], [True, True], 0.5, 0.75)
    assert cert.certified and cert.rank == 2 and cert.timeout_sec == 0.7


def test_a_tool_with_one_call_too_few_is_told_the_exact_count():
    """One call at guarantee 0.5, confidence 0.75 cannot certify, and the reason names 2 calls
    (the smallest n with 0.5 ** n <= 0.25), not 3."""
    cert = certify([0.3], [True], 0.5, 0.75)
    assert not cert.certified and cert.reason.endswith("needs at least 2")
