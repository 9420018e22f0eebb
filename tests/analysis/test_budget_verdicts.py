"""Budget verdicts weigh the tail model's prediction for unseen episodes as well as the upper
confidence bound on the corpus (reviewlab/analysis/_budgets.py, tune.py)."""

from __future__ import annotations

import math

import pytest

from reviewlab.analysis._budgets import budget_table
from reviewlab.analysis._tune import recommend
from reviewlab.recording._files import load_episodes
from reviewlab.resources import corpus_path

COVERAGE, ABANDONED = "timeout_coverage_loss_rate", "abandoned_call_rate"


def _verdicts(upper: dict[str, float], predicted: dict[str, float], **limits: float | None):
    rates = {budget: (value / 2, value) for budget, value in upper.items()}
    table = budget_table(
        rates, predicted, limits["coverage"], limits.get("abandoned"), confidence=0.95
    )
    return dict(zip(table["budget"], table["met"], strict=True)), table


def test_a_prediction_beyond_the_limit_fails_the_budget_even_when_the_upper_bound_holds():
    """A budget is met only when both its upper bound and its unseen-episode prediction are
    within the limit; equality still meets it."""
    met, table = _verdicts(
        {COVERAGE: 0.004, ABANDONED: 0.01},
        {COVERAGE: 0.02, ABANDONED: 0.30},
        coverage=0.01,
        abandoned=0.05,
    )
    assert met == {COVERAGE: False, ABANDONED: False}
    assert table["predicted_unseen"].tolist() == [0.02, 0.30]
    assert table["upper_95%"].tolist() == [0.004, 0.01]
    met, _ = _verdicts(
        {COVERAGE: 0.02, ABANDONED: 0.30},
        {COVERAGE: 0.004, ABANDONED: 0.01},
        coverage=0.01,
        abandoned=0.05,
    )
    assert met == {COVERAGE: False, ABANDONED: False}
    met, _ = _verdicts(
        {COVERAGE: 0.01, ABANDONED: 0.01},
        {COVERAGE: 0.01, ABANDONED: 0.05},
        coverage=0.01,
        abandoned=0.05,
    )
    assert met == {COVERAGE: True, ABANDONED: True}


def test_an_unset_abandonment_budget_is_met_whatever_its_prediction():
    """With no abandonment budget its row is met (limit inf) however high the prediction."""
    met, table = _verdicts(
        {COVERAGE: 0.0, ABANDONED: 0.9}, {COVERAGE: 0.0, ABANDONED: 0.9}, coverage=0.01
    )
    assert met == {COVERAGE: True, ABANDONED: True}
    assert math.isinf(table.loc[table["budget"] == ABANDONED, "limit"].item())


@pytest.fixture(scope="module")
def loose():
    """The bundled corpus tuned at a 50 % timeout coverage-loss budget and no added-abandonment
    budget: wide enough that the corpus's upper bounds allow tighter steps, which the tail
    model's predictions do not."""
    return recommend(
        list(load_episodes(corpus_path())),
        max_timeout_coverage_loss=0.5,
        max_added_abandoned_rate=None,
        max_tool_added_abandoned_rate=None,
    )


def test_the_tuner_stops_where_the_prediction_leaves_the_budget(loose):
    """Tuning takes no step whose prediction for unseen episodes breaks the budget, even when
    the step's upper bound on the corpus is within it."""
    row = loose.budgets.set_index("budget").loc[COVERAGE]
    assert row["predicted_unseen"] <= 0.5 and bool(row["met"])
    tighter = loose.explain.dropna(subset=["tighter_sec"])
    assert len(tighter)
    for _, tool in tighter.iterrows():
        worst = max(tool["tighter_timeout_loss_upper"], tool["tighter_timeout_loss_predicted"])
        assert worst > 0.5, tool["tool"]
    # The prediction is what stops it: the corpus's bound alone would allow a tighter step.
    blocked_by_prediction = (tighter["tighter_timeout_loss_upper"] <= 0.5) & (
        tighter["tighter_timeout_loss_predicted"] > 0.5
    )
    assert blocked_by_prediction.any()
