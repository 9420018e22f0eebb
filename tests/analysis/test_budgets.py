"""The tuner's budgets of a sparse replay equal the same figures computed over every call.

The reference here is the direct computation: per-call arrays of the replay, summed per episode
with ``np.bincount`` and bounded by :func:`ratio_upper` — what the evaluator reads off the
changed episodes alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from reviewlab import Policy
from reviewlab.analysis._budget_evaluator import BudgetEvaluator
from reviewlab.analysis._budgets import Denominator, ratio_upper, sparse_ratio_upper
from reviewlab.analysis._tails import LossModel
from reviewlab.core import _metrics as metrics
from reviewlab.engines._corpus import open_corpus
from reviewlab.engines.vectorized._evaluation import EXECUTED
from reviewlab.recording.synth import synth_corpus

Z = 1.6448536269514722


@pytest.fixture(scope="module")
def evaluator() -> BudgetEvaluator:
    """An evaluator on 300 synthetic episodes, anchored at loose timeouts."""
    corpus = open_corpus(synth_corpus(300, seed=11))
    model = LossModel(corpus.observations())
    ev = BudgetEvaluator(corpus.compiled(), Policy.ouroboros(), Z, model)
    ev.start({"read_file": 120.0, "query_code": 600.0, "search_code": 120.0, "list_files": 60.0})
    return ev


def _dense(evaluator: BudgetEvaluator, chosen: dict[str, float]) -> dict[str, tuple[float, float]]:
    c = evaluator.corpus
    ev = evaluator.evaluation(chosen)
    n = len(c.episode_ids)
    abandoned = np.asarray(ev.abandoned, dtype=bool)
    lost = metrics.timeout_lost_lines(
        c.requested_lines, ev.credited_lines, abandoned, ev.outcome == EXECUTED
    )
    per_episode = np.bincount(c.episode_index, minlength=n).astype(float)
    added = abandoned & ~evaluator.loosest_abandoned
    figures = {
        "timeout_coverage_loss_rate": ratio_upper(
            np.bincount(c.episode_index, weights=lost, minlength=n), evaluator.requested, Z
        ),
        "abandoned_call_rate": ratio_upper(
            np.bincount(c.episode_index, weights=abandoned, minlength=n), per_episode, Z
        ),
        "added": ratio_upper(
            np.bincount(c.episode_index, weights=added, minlength=n), per_episode, Z
        ),
    }
    for tool in chosen:
        mine = np.asarray(c.tool_code) == evaluator.tool_code[tool]
        own = np.bincount(c.episode_index[mine], weights=added[mine], minlength=n)
        calls = np.bincount(c.episode_index[mine], minlength=n).astype(float)
        figures[tool] = ratio_upper(own, calls, Z)
    return figures


@pytest.mark.parametrize("read_file", [0.05, 0.2, 1.0, 5.0, 120.0])
@pytest.mark.parametrize("query_code", [1.0, 10.0, 600.0])
def test_sparse_budgets_equal_the_figures_over_every_call(
    evaluator: BudgetEvaluator, read_file: float, query_code: float
) -> None:
    """Rates, upper bounds and the added abandonment (overall and per tool) of a sparse replay
    equal the per-call computation."""
    chosen = {"read_file": read_file, "query_code": query_code}
    ev = evaluator.evaluation(chosen)
    assert ev.parts is not None  # the path under test
    expected = _dense(evaluator, chosen)
    rates = evaluator.rates_of(ev)
    for budget in ("timeout_coverage_loss_rate", "abandoned_call_rate"):
        assert rates[budget] == pytest.approx(expected[budget], rel=1e-12, abs=1e-15)
    (estimate, upper, _), per_tool = evaluator.added_abandoned(chosen, ev)
    assert (estimate, upper) == pytest.approx(expected["added"], rel=1e-12, abs=1e-15)
    for tool, (own, own_upper, _) in per_tool.items():
        assert (own, own_upper) == pytest.approx(expected[tool], rel=1e-12, abs=1e-15)


def test_the_sparse_bound_is_the_bound_of_the_whole_numerator() -> None:
    """``sparse_ratio_upper`` of a numerator 0 outside some rows is ``ratio_upper`` of it."""
    rng = np.random.default_rng(3)
    denominator = rng.integers(1, 9, size=500).astype(float)
    numerator = np.zeros(500)
    rows = np.sort(rng.choice(500, size=40, replace=False))
    numerator[rows] = rng.integers(0, 4, size=40)
    got = sparse_ratio_upper(rows, numerator[rows], Denominator.of(denominator), Z)
    assert got == pytest.approx(ratio_upper(numerator, denominator, Z), rel=1e-12)
    assert sparse_ratio_upper(rows, numerator[rows], Denominator.of(np.zeros(500)), Z) == (
        0.0,
        0.0,
    )
