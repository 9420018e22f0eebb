"""What :func:`~reviewlab.analysis.recommend` returns, and the rules it states in words.

A :class:`Recommendation` is a result, not a search: the policy chosen, one row per tool saying
why, the summaries under it and under the base, the budgets' verdicts, and the assumptions it
rests on (style rule 12). :data:`RULE` and :data:`RULE_GUARANTEE` are the two rules the tuner
applies, as its output states them (the search itself:
:mod:`reviewlab.analysis._tune_search`).

Invariants: ``policy`` names every tool of the corpus; ``met`` is true only when every budget
holds at its upper confidence bound; :meth:`Recommendation.save` writes the policy file whole or
not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from reviewlab.analysis._attribution import difference
from reviewlab.core._atomic import write_text_atomic
from reviewlab.core._display import html_of
from reviewlab.core._policy import Policy

RULE = (
    "each tool starts at its loosest candidate (its base timeout, or beyond its longest "
    "completed call) and is tightened one step of its Kaplan–Meier quantile ladder at a time, "
    "always the step with the best {objective}, as long as {objective} gets no worse and both "
    "the {confidence:.0%} upper bounds over episodes and the tail model's predictions for "
    "unseen episodes of the timeout coverage loss and the abandoned-call rate stay within "
    "budget; it stops when no step is allowed"
)
"""The rule :func:`~reviewlab.analysis.recommend` applies, as the output states it (then the
safety rules, :meth:`~reviewlab.analysis._safety.SafetyRules.describe`)."""
RULE_GUARANTEE = (
    "each tool gets the shortest timeout t with P(a call finishes within t) >= {guarantee:g} "
    "certified at confidence {guarantee_confidence:g} by an order statistic of its recorded "
    "durations, calls that never returned counted as never finishing (docs/metrics.md, "
    '"Certified timeouts"); a tool whose calls cannot certify it keeps the base timeout; '
    "the budgets are checked, not searched"
)
"""The rule of :func:`~reviewlab.analysis.recommend` with ``guarantee`` (then the safety rules)."""


class Recommendation(NamedTuple):
    """What :func:`recommend` returns: the policy, the rule, the
    budgets' verdicts and the reasons."""

    policy: Policy
    """The recommended policy: per-tool timeouts (no floor; every tool of the corpus explicit)
    under the narrowing it was tuned with (the base's other parts kept)."""
    explain: pd.DataFrame
    """One row per tool: durations, the choice, what it buys, one step tighter and looser."""
    summary: dict[str, Any]
    """Summary of the corpus under the recommended policy."""
    baseline: dict[str, Any]
    """Summary of the corpus under ``base``."""
    budgets: pd.DataFrame
    """One row per budget: ``budget, limit, estimate,
    upper_<confidence>, predicted_unseen, met``."""
    rule: str
    """The rule applied, in words."""
    objective: str
    """The summary column minimised."""
    assumptions: dict[str, Any]
    """Censoring mode, engine, confidence level and the base policy's name."""

    @property
    def met(self) -> bool:
        """Whether every budget holds at its upper confidence bound."""
        return bool(self.budgets["met"].all())

    def to_toml(self) -> str:
        """The policy file ``-o`` writes, as :meth:`Policy.load` reads it back."""
        return self.policy.to_toml()

    def save(self, path: str | Path) -> Path:
        """Write :meth:`to_toml` to ``path`` whole or not at all; returns the path."""
        return write_text_atomic(path, self.to_toml())

    @property
    def saved(self) -> float:
        """The objective under ``base`` minus under the
        recommendation (the saving; inf − inf is 0)."""
        return difference(self.baseline[self.objective], self.summary[self.objective])

    def _repr_html_(self) -> str | None:
        """The policy, the budgets' verdicts and what it changes, for Jupyter
        (:mod:`reviewlab.core._display`)."""
        return html_of("recommendation", self)
