"""Fitting learned conditional timeouts from recordings, and measuring what they gain.

:func:`fit_learned` fits, per tool with at least ``min_calls`` calls, a Weibull
accelerated-failure-time model with lifelines (the calls that never returned as censored,
never dropped; covariates from :func:`candidate_features`), giving a
:class:`~reviewlab.core._learned.LearnedTimeouts` rule inside a
:class:`~reviewlab.core._policy.Policy`. lifelines is needed to fit, not to use the rule.
:func:`learned_gain` compares the learned policy with the static per-tool one at equal
coverage lost to timeouts on held-out episodes, and says "gain" only where the learned one
abandons fewer calls. The comparison: docs/metrics.md, "Learned timeouts against static ones".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core._errors import ParameterError
from reviewlab.core._learned import LearnedTimeouts, ToolModel, call_features
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._vocab import DEFAULT_CENSORING, CensoringMode
from reviewlab.engines._censoring import KaplanMeier, effective_observation
from reviewlab.engines._corpus import CorpusSource, open_corpus
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Episode

GAIN_QUANTILES = (0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
"""The quantile levels :func:`learned_gain` compares at."""
_MAX_VALUES = 8


def candidate_features(args: Sequence[Mapping[str, Any]], *, min_share: float = 0.5) -> list[str]:
    """The features one tool's calls support: ``span:start_line:end_line`` when both are
    recorded, ``num:KEY`` / ``len:KEY`` for arguments present in at least ``min_share`` of the
    calls, ``is:KEY=VALUE`` for text values seen in at least 5 % of them (at most 8 per key);
    features that do not vary are left out (they cannot be fitted)."""
    n = len(args)
    if not n:
        return []
    counts: dict[str, int] = {}
    for call in args:
        for key in call:
            counts[key] = counts.get(key, 0) + 1
    present = sorted(key for key, count in counts.items() if count >= min_share * n)
    names: list[str] = []
    if "start_line" in present and "end_line" in present:
        names.append("span:start_line:end_line")
    for key in present:
        if key in ("start_line", "end_line"):
            continue
        values = [call.get(key) for call in args]
        numeric = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if len(numeric) >= min_share * n:
            names.append(f"num:{key}")
            continue
        texts = [str(v) for v in values if v is not None]
        names.append(f"len:{key}")
        frequent = pd.Series(texts).value_counts()
        frequent = frequent[frequent >= 0.05 * n].index[:_MAX_VALUES]
        if 1 < len(frequent) < len(set(texts)) + 1:
            names += [f"is:{key}={value}" for value in sorted(frequent)[1:]]  # one is baseline
    matrix = np.array([call_features(names, call) for call in args]) if names else None
    if matrix is None:
        return []
    return [name for name, column in zip(names, matrix.T, strict=True) if np.ptp(column) > 0]


@dataclass(frozen=True)
class LearnedFit:
    """What :func:`fit_learned` made: the policy, a table per tool, the lifelines fitters."""

    policy: Policy
    table: pd.DataFrame
    """Per tool: ``calls``, ``censored``, ``features``, ``rho`` (``< 1``: the hazard falls),
    ``concordance`` (lifelines' concordance index), or why it has no model."""
    fitters: Mapping[str, Any]
    """tool -> the fitted ``lifelines.WeibullAFTFitter``."""


def _calls_by_tool(episodes: Sequence[Episode]) -> dict[str, list[tuple[dict, float, bool]]]:
    by_tool: dict[str, list[tuple[dict, float, bool]]] = {}
    for episode in episodes:
        for call in episode.calls:
            duration, done = effective_observation(call)
            by_tool.setdefault(call.tool, []).append((dict(call.args), duration, done))
    return by_tool


def fit_learned(
    corpus: CorpusSource,
    *,
    quantile: float = 0.99,
    hazard_window_sec: float | None = None,
    hazard_floor: float | None = None,
    min_calls: int = 20,
    base: Policy | TimeoutPolicy | None = None,
    penalizer: float = 0.01,
    name: str = "learned",
) -> LearnedFit:
    """Fit the learned rule on ``corpus`` (see the module docstring). Tools with fewer than
    ``min_calls`` calls, or none that completed, keep ``base``'s timeout (default ouroboros);
    ``quantile``, ``hazard_window_sec`` and ``hazard_floor`` are the rule's."""
    try:
        from lifelines import WeibullAFTFitter
    except ImportError:  # pragma: no cover - the survival extra
        raise ImportError(
            "fit_learned: needs lifelines (pip install 'reviewlab[survival]')"
        ) from None
    if isinstance(min_calls, bool) or not isinstance(min_calls, int) or min_calls < 2:
        raise ParameterError("min_calls", f"expected a whole number >= 2, got {min_calls!r}")
    spine = Policy.of(base)
    episodes = open_corpus(corpus).episodes(reason="learned timeouts: call arguments")
    models: dict[str, ToolModel] = {}
    fixed: dict[str, float] = {}
    fitters: dict[str, Any] = {}
    rows = []
    for tool, calls in sorted(_calls_by_tool(episodes).items()):
        events = sum(done for _, _, done in calls)
        row: dict[str, Any] = {"tool": tool, "calls": len(calls), "censored": len(calls) - events}
        if len(calls) < min_calls or events < 2:
            fixed[tool] = spine.timeout_for(None, tool, remaining_sec=None)
            why = f"{len(calls)} call(s) < min_calls" if len(calls) < min_calls else "< 2 returned"
            rows.append({**row, "features": "", "rho": math.nan, "concordance": math.nan,
                         "model": f"none ({why}): base {fixed[tool]:g} s"})  # fmt: skip
            continue
        features = candidate_features([args for args, _, _ in calls])
        frame = pd.DataFrame(
            [call_features(features, args) for args, _, _ in calls], columns=features
        )
        frame["duration"] = [max(duration, 1e-6) for _, duration, _ in calls]
        frame["event"] = [bool(done) for _, _, done in calls]
        fitter = WeibullAFTFitter(penalizer=penalizer)
        fitter.fit(frame, duration_col="duration", event_col="event")
        params = fitter.params_
        models[tool] = ToolModel(
            tuple(features),
            tuple(float(params.loc[("lambda_", f)]) for f in features),
            float(params.loc[("lambda_", "Intercept")]),
            float(math.exp(params.loc[("rho_", "Intercept")])),
        )
        fitters[tool] = fitter
        rows.append({**row, "features": ", ".join(features) or "(none)",
                     "rho": models[tool].rho, "concordance": float(fitter.concordance_index_),
                     "model": "Weibull AFT"})  # fmt: skip
    rule = LearnedTimeouts(
        models,
        quantile=quantile,
        hazard_window_sec=hazard_window_sec,
        hazard_floor=hazard_floor,
        fixed_sec=fixed,
        default_sec=spine.timeout_for(None, "", remaining_sec=None),
        name=name,
    )
    policy = spine.replace(timeouts=rule, name=name)
    return LearnedFit(policy, pd.DataFrame(rows), fitters)


@dataclass(frozen=True)
class LearnedGain:
    """What :func:`learned_gain` measured on the held-out episodes."""

    curves: pd.DataFrame
    """Per policy family and quantile: held-out ``abandoned_call_rate`` and
    ``timeout_coverage_loss_rate``; learned rows add ``static_at_equal_coverage`` and
    ``gain`` (static minus learned abandoned rate; NaN outside the static curve's range)."""
    verdict: str
    best_gain: float
    assumptions: dict[str, Any]


def _static(episodes: Sequence[Episode], q: float, base: Policy) -> Policy:
    """Each tool's Kaplan–Meier ``q``-quantile (at most its base timeout when it never falls
    that low), as exact per-tool timeouts."""
    table = {}
    for tool, calls in _calls_by_tool(episodes).items():
        estimate = KaplanMeier([d for _, d, _ in calls], [c for _, _, c in calls])
        value = estimate.quantile(q)
        ceiling = base.timeout_for(None, tool, remaining_sec=None)
        table[tool] = min(value, ceiling) if math.isfinite(value) and value > 0 else ceiling
    assert isinstance(base.timeouts, TimeoutPolicy)
    return base.replace(timeouts=base.timeouts.with_tool_timeouts(f"static-p{q:g}", **table))


def learned_gain(
    train: CorpusSource,
    held_out: CorpusSource,
    *,
    quantiles: Sequence[float] = GAIN_QUANTILES,
    censored: CensoringMode = DEFAULT_CENSORING,
    **fit_options: Any,
) -> LearnedGain:
    """Compare the learned and the static per-tool families on ``held_out`` (module
    docstring); ``fit_options`` go to :func:`fit_learned` (its ``base`` is the static
    family's too)."""
    train_episodes = open_corpus(train).episodes(reason="learned timeouts: call arguments")
    held = open_corpus(held_out).episodes(reason="learned timeouts: call arguments")
    base = Policy.of(fit_options.get("base"))
    if not isinstance(base.timeouts, TimeoutPolicy):
        raise ParameterError("base", "the static family needs a TimeoutPolicy base")
    fit = fit_learned(train_episodes, **fit_options)
    rule = fit.policy.timeouts
    assert isinstance(rule, LearnedTimeouts)
    rows = []
    for q in quantiles:
        learned = fit.policy.replace(
            timeouts=LearnedTimeouts(**{**_fields(rule), "quantile": q, "name": f"learned-p{q:g}"})
        )
        for family, policy in (("static", _static(train_episodes, q, base)), ("learned", learned)):
            summary = replay(held, policy, engine="vectorized", censored=censored).summary
            rows.append(
                {
                    "family": family,
                    "quantile": q,
                    "abandoned_call_rate": summary["abandoned_call_rate"],
                    "timeout_coverage_loss_rate": summary["timeout_coverage_loss_rate"],
                    "wall_p95_sec": summary["wall_p95_sec"],
                }
            )
    curves = pd.DataFrame(rows)
    static = curves[curves["family"] == "static"].sort_values("timeout_coverage_loss_rate")
    xs = static["timeout_coverage_loss_rate"].to_numpy(float)
    ys = static["abandoned_call_rate"].to_numpy(float)
    at, gain = [], []
    for row in curves.to_dict("records"):
        x = row["timeout_coverage_loss_rate"]
        if row["family"] == "static" or not xs.size or not xs[0] <= x <= xs[-1]:
            at.append(math.nan)
            gain.append(math.nan)
            continue
        value = float(np.interp(x, xs, ys))
        at.append(value)
        gain.append(value - row["abandoned_call_rate"])
    curves["static_at_equal_coverage"] = at
    curves["gain"] = gain
    gains = curves["gain"].dropna()
    best = float(gains.max()) if len(gains) else math.nan
    if len(gains) and best > 0:
        row = curves.loc[curves["gain"].idxmax()]
        verdict = (
            f"gain: at {row['timeout_coverage_loss_rate']:.4%} coverage lost to timeouts the "
            f"learned policy (q={row['quantile']:g}) abandons {row['abandoned_call_rate']:.4%} "
            f"of calls, the static per-tool curve {row['static_at_equal_coverage']:.4%}"
        )
    else:
        verdict = (
            "no gain found: at equal coverage lost to timeouts the learned policy abandons no "
            "fewer calls than the static per-tool policies"
            + ("" if len(gains) else " (their coverage ranges do not overlap)")
        )
    return LearnedGain(
        curves,
        verdict,
        best,
        {
            "censored": censored,
            "engine": "vectorized",
            "reaction": "as_recorded",
            "train_episodes": len(train_episodes),
            "held_out_episodes": len(held),
        },  # fmt: skip
    )


def _fields(rule: LearnedTimeouts) -> dict[str, Any]:
    return {
        "models": rule.models,
        "quantile": rule.quantile,
        "hazard_window_sec": rule.hazard_window_sec,
        "hazard_floor": rule.hazard_floor,
        "min_sec": rule.min_sec,
        "max_sec": rule.max_sec,
        "fixed_sec": rule.fixed_sec,
        "default_sec": rule.default_sec,
        "name": rule.name,
    }
