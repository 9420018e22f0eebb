"""recommend(): per-tool timeouts that beat the ouroboros policy within the coverage
budget, on seen and unseen episodes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reviewlab.analysis._profiles import km_quantile
from reviewlab.analysis._recommendation import Recommendation
from reviewlab.analysis._tune import excess, recommend
from reviewlab.core._policy import Narrowing, TimeoutPolicy
from reviewlab.engines._censoring import KaplanMeier
from reviewlab.engines.twin import simulate
from reviewlab.engines.vectorized import compile_corpus
from reviewlab.recording._files import load_episodes

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "episodes" / "synthetic-1k.jsonl.gz"


@pytest.fixture(scope="module")
def corpus():
    return list(load_episodes(BUNDLED))


def reference_summary(episodes, unlimited=1e6):
    """The replay with every tool's timeout beyond any call: the losses no tuning can avoid."""
    tools = sorted({call.tool for episode in episodes for call in episode.calls})
    policy = TimeoutPolicy.ouroboros().with_tool_timeouts(
        None, **{tool: unlimited for tool in tools}
    )
    return compile_corpus(episodes).summary(policy, Narrowing())


def test_recommendation_beats_ouroboros_within_budget_on_bundled_corpus(corpus):
    """On the bundled corpus the recommended policy has a lower p95 wall time
    at ≤ 1 % excess coverage loss."""
    rec = recommend(corpus, max_coverage_loss=0.01, objective="p95_wall")
    assert isinstance(rec, Recommendation) and rec.policy.name == "recommended"
    fast = compile_corpus(corpus)
    ours = fast.summary(rec.policy, Narrowing())
    theirs = fast.summary(TimeoutPolicy.ouroboros(), Narrowing())
    assert ours["wall_p95_sec"] <= theirs["wall_p95_sec"]
    assert ours["max_silence_sec"] < theirs["max_silence_sec"]
    assert excess(ours, reference_summary(corpus))[0] <= 0.01
    # tune replays with the vectorized engine; the SimPy twin checks its figures independently.
    twin_ours = simulate(corpus, rec.policy).summary
    twin_theirs = simulate(corpus, TimeoutPolicy.ouroboros(), Narrowing()).summary
    assert rec.summary == pytest.approx(twin_ours, rel=1e-12, abs=1e-12)
    assert rec.baseline == pytest.approx(twin_theirs, rel=1e-12, abs=1e-12)


def test_budget_holds_on_held_out_episodes(corpus):
    """Tuned on one half of the corpus, the policy stays within the coverage and
    abandonment budgets on the other."""
    for train, test in (
        (corpus[::2], corpus[1::2]),
        (corpus[1::2], corpus[::2]),
        (corpus[:700], corpus[700:]),
    ):
        rec = recommend(train, max_coverage_loss=0.01, max_abandoned_rate=0.005)
        held_out = compile_corpus(test).summary(rec.policy, Narrowing())
        coverage, abandoned = excess(held_out, reference_summary(test))
        assert coverage <= 0.01 and abandoned <= 0.005


def test_explain_has_one_row_per_tool_with_censoring_aware_quantiles(corpus):
    """The explanation lists every tool with its Kaplan–Meier quantiles, both
    timeouts and what the choice costs."""
    rec = recommend(corpus[:300], objective="max_silence")
    explain = rec.explain.set_index("tool")
    assert set(explain.index) == {call.tool for episode in corpus[:300] for call in episode.calls}
    for column in (
        "calls",
        "censored",
        "duration_p50_sec",
        "duration_p99_sec",
        "base_timeout_sec",
        "timeout_sec",
        "abandoned_rate",
        "timeout_coverage_loss_rate",
        "saved_max_silence_sec",
    ):
        assert column in explain.columns
    assert (explain["duration_p50_sec"] <= explain["duration_p99_sec"]).all()
    for tool, row in explain.iterrows():
        assert rec.policy.timeout_for(None, tool) == row["timeout_sec"]
    assert rec.summary["max_silence_sec"] <= rec.baseline["max_silence_sec"]


def test_km_quantile_accounts_for_censoring():
    """Censored observations keep the upper quantiles open instead of being read as completions."""
    estimate = KaplanMeier(
        [1.0, 2.0, 3.0, 4.0, 100.0, 100.0], [True, True, True, True, False, False]
    )
    assert km_quantile(estimate, 0.5) == 3.0
    assert math.isinf(km_quantile(estimate, 0.9))  # a third of the calls never returned
    naive = float(np.quantile([1.0, 2.0, 3.0, 4.0], 0.5))
    assert km_quantile(estimate, 0.5) > naive


def test_bad_arguments_are_clear_errors(corpus):
    """Out-of-range budgets, unknown objectives and an unbounded narrowing are
    refused with the parameter's name."""
    with pytest.raises(ValueError, match="max_coverage_loss"):
        recommend(corpus[:20], max_coverage_loss=2.0)
    with pytest.raises(ValueError, match="objective"):
        recommend(corpus[:20], objective="fastest")
    with pytest.raises(ValueError, match="narrowing"):
        recommend(corpus[:20], narrowing=Narrowing.unbounded())
    with pytest.raises(ValueError, match="no episodes"):
        recommend([])


def test_the_search_replays_on_the_calling_thread_only(monkeypatch):
    """Every replay of the in-process search runs on the thread that called recommend (no pool
    of threads: a busy machine has no core for one), and a second run answers the same."""
    import threading

    from reviewlab.analysis import _budget_evaluator as budget_evaluator
    from reviewlab.resources import corpus_path

    episodes = list(load_episodes(corpus_path()))[:300]
    seen: set[str] = set()
    original = budget_evaluator.BudgetEvaluator.evaluation

    def noting(self, chosen):
        seen.add(threading.current_thread().name)
        return original(self, chosen)

    monkeypatch.setattr(budget_evaluator.BudgetEvaluator, "evaluation", noting)
    first = recommend(episodes, max_timeout_coverage_loss=0.01)
    again = recommend(episodes, max_timeout_coverage_loss=0.01)
    assert seen == {threading.current_thread().name}
    assert again.policy == first.policy
    assert again.summary == first.summary
    pd.testing.assert_frame_equal(again.explain, first.explain)
