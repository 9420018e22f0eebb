"""recommend() does less work than a brute-force search and answers the same: the policy, the
summaries, the budget table and the per-tool table equal those of a search that replays every
candidate in full, on its own, with nothing kept."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from reviewlab.analysis import _budget_evaluator as budget_evaluator
from reviewlab.analysis import _tune as tune
from reviewlab.analysis import _tune_figures
from reviewlab.analysis import _tune_search as tune_search
from reviewlab.analysis._budget_evaluator import BudgetEvaluator
from reviewlab.analysis._budgets import AbandonedCounts, BudgetPoint
from reviewlab.core._policy import Narrowing, Policy
from reviewlab.recording.synth import synth_corpus


class BruteForce(BudgetEvaluator):
    """Every point, rate and count from a full replay of its own: the per-call arrays (the
    dense formulas of the budgets), the summary of the full result with its frames, nothing
    cached between two questions."""

    replays = 0

    def evaluation(self, chosen: dict[str, float]) -> Any:
        BruteForce.replays += 1
        ev = self.corpus.evaluate(self.policy(chosen))
        # The per-call arrays whole: the budgets' dense branch, not the sparse one.
        return SimpleNamespace(
            parts=None,
            outcome=ev.outcome,
            abandoned=np.asarray(ev.abandoned, dtype=bool),
            credited_lines=ev.credited_lines,
            summary=lambda: self.corpus.result(self.policy(chosen)).summary,
        )

    def rates(self, chosen: dict[str, float]) -> dict[str, tuple[float, float]]:
        return self.rates_of(self.evaluation(chosen))

    def abandoned_counts(self, chosen: dict[str, float]) -> AbandonedCounts:
        abandoned = self.evaluation(chosen).abandoned
        codes = np.asarray(self.corpus.tool_code)
        names = self.corpus.tools
        by_tool = np.bincount(codes[abandoned], minlength=len(names))
        done = np.bincount(codes[abandoned & self.recorded_completed], minlength=len(names))
        return AbandonedCounts(
            int(abandoned.sum()),
            {tool: int(by_tool[code]) for code, tool in enumerate(names)},
            {tool: int(done[code]) for code, tool in enumerate(names)},
        )

    def prefetch(self, candidates: list[dict[str, float]]) -> None:
        return None

    def point(self, chosen: dict[str, float]) -> BudgetPoint:
        ev = self.evaluation(chosen)
        rates = self.rates_of(ev)
        coverage, abandoned = self.predicted(chosen)
        added, per_tool = self.added_abandoned(chosen, ev)
        return BudgetPoint(
            ev.summary(),
            rates["timeout_coverage_loss_rate"][1],
            rates["abandoned_call_rate"][1],
            coverage,
            abandoned,
            added,
            per_tool,
        )


def brute_force(monkeypatch: pytest.MonkeyPatch, episodes: list[Any], **options: Any) -> Any:
    """recommend() with every candidate replayed in full (none skipped on the tail model)."""
    with monkeypatch.context() as patched:
        patched.setattr(_tune_figures, "BudgetEvaluator", BruteForce)  # the in-process route
        patched.setattr(
            tune_search.TuneSearch, "foreseen_out", lambda self, evaluator, chosen: False
        )
        BruteForce.replays = 0
        return tune.recommend(episodes, **options), BruteForce.replays


def counted(monkeypatch: pytest.MonkeyPatch, episodes: list[Any], **options: Any) -> Any:
    """recommend() as it is, with the number of replays it made."""
    made = {"replays": 0}
    evaluate = budget_evaluator.CompiledCorpus.evaluate

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        made["replays"] += 1
        return evaluate(self, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(budget_evaluator.CompiledCorpus, "evaluate", counting)
        return tune.recommend(episodes, **options), made["replays"]


CASES: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "default budgets": (synth_corpus(300, seed=3), {}),
    "tight coverage budget": (
        synth_corpus(300, seed=11),
        {"max_timeout_coverage_loss": 0.004, "max_abandoned_rate": 0.02},
    ),
    "reserve narrowing, p99": (
        synth_corpus(250, seed=5),
        {
            "objective": "wall_p99",
            "base": Policy.ouroboros().replace(narrowing=Narrowing("reserve", reserve_sec=30.0)),
            "max_added_abandoned_rate": 0.002,
        },
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_recommendation_equals_the_brute_force_search(
    monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """The tuned policy and every reported figure equal those of the search that replays each
    candidate in full, and the tuner replays fewer times."""
    episodes, options = CASES[case]
    fast, replays = counted(monkeypatch, episodes, **options)
    slow, brute_replays = brute_force(monkeypatch, episodes, **options)
    assert fast.policy == slow.policy
    assert fast.policy.timeouts.tools_sec == slow.policy.timeouts.tools_sec
    assert fast.summary == slow.summary
    assert fast.baseline == slow.baseline
    pd.testing.assert_frame_equal(fast.budgets, slow.budgets)
    pd.testing.assert_frame_equal(fast.explain, slow.explain)
    assert replays < brute_replays


def test_a_candidate_the_tail_model_refuses_is_not_replayed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With an abandoned-call budget below the rate the loosest timeouts already abandon (calls
    that never returned), the tail model refuses every tightening: the search replays the
    loosest point alone, the brute-force search each tool's tighter step as well, and both keep
    the loosest timeouts."""
    episodes = synth_corpus(200, seed=2)
    asked: list[dict[str, float]] = []
    point = BudgetEvaluator.point

    def recording(self: BudgetEvaluator, chosen: dict[str, float]) -> BudgetPoint:
        asked.append(dict(chosen))
        return point(self, chosen)

    monkeypatch.setattr(BudgetEvaluator, "point", recording)
    monkeypatch.setattr(tune_search, "explain_table", lambda *args, **kwargs: pd.DataFrame())
    options: dict[str, Any] = {"max_abandoned_rate": 1e-9, "max_added_abandoned_rate": None}
    rec = tune.recommend(episodes, **options)
    assert not rec.met
    assert asked == [dict(rec.policy.timeouts.tools_sec)]
    tools = len(asked[0])
    asked.clear()
    monkeypatch.setattr(
        tune_search.TuneSearch, "foreseen_out", lambda self, evaluator, chosen: False
    )
    assert tune.recommend(episodes, **options).policy == rec.policy
    assert len(asked) == 1 + tools
