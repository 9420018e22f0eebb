"""Analyses over a corpus: timeout recommendation and its guarantee, baselines, cost, learned
timeouts, incidents and silences, held-out splits, presets, profiles, clocks and cancels.

Sweeps live in :mod:`reviewlab.analysis.sweep` and exports in :mod:`reviewlab.analysis.export`.
The modules here are private; what users need is exported here and imported on first use.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.analysis._attribution import explain_table
    from reviewlab.analysis._baselines import BaselineComparison, compare_baselines
    from reviewlab.analysis._bets import (
        completed_only_spiral,
        optimal_cutoff,
        redundancy_latency,
        restart_expectation,
    )
    from reviewlab.analysis._cancels import cancel_faithfulness
    from reviewlab.analysis._certify import DEFAULT_GUARANTEE_CONFIDENCE, Certificate, certify
    from reviewlab.analysis._clocks import clock_summary, clock_table
    from reviewlab.analysis._cost import COST_KEYS, PricedCorpus, ReplayCost, replay_cost
    from reviewlab.analysis._hedging import sweep_hedge_delays
    from reviewlab.analysis._holdout import split_episodes
    from reviewlab.analysis._incident import PRE_FIX, describe_silence, longest_silences
    from reviewlab.analysis._learned import LearnedFit, LearnedGain, fit_learned, learned_gain
    from reviewlab.analysis._presets import preset_policy, score_presets
    from reviewlab.analysis._profiles import DurationProfile, km_quantile, profile_tool
    from reviewlab.analysis._recommendation import Recommendation
    from reviewlab.analysis._tune import recommend

_HOMES = {
    "BaselineComparison": "reviewlab.analysis._baselines",
    "COST_KEYS": "reviewlab.analysis._cost",
    "Certificate": "reviewlab.analysis._certify",
    "DEFAULT_GUARANTEE_CONFIDENCE": "reviewlab.analysis._certify",
    "DurationProfile": "reviewlab.analysis._profiles",
    "LearnedFit": "reviewlab.analysis._learned",
    "LearnedGain": "reviewlab.analysis._learned",
    "PRE_FIX": "reviewlab.analysis._incident",
    "PricedCorpus": "reviewlab.analysis._cost",
    "Recommendation": "reviewlab.analysis._recommendation",
    "ReplayCost": "reviewlab.analysis._cost",
    "cancel_faithfulness": "reviewlab.analysis._cancels",
    "certify": "reviewlab.analysis._certify",
    "clock_summary": "reviewlab.analysis._clocks",
    "clock_table": "reviewlab.analysis._clocks",
    "compare_baselines": "reviewlab.analysis._baselines",
    "completed_only_spiral": "reviewlab.analysis._bets",
    "describe_silence": "reviewlab.analysis._incident",
    "explain_table": "reviewlab.analysis._attribution",
    "fit_learned": "reviewlab.analysis._learned",
    "km_quantile": "reviewlab.analysis._profiles",
    "learned_gain": "reviewlab.analysis._learned",
    "longest_silences": "reviewlab.analysis._incident",
    "optimal_cutoff": "reviewlab.analysis._bets",
    "preset_policy": "reviewlab.analysis._presets",
    "profile_tool": "reviewlab.analysis._profiles",
    "recommend": "reviewlab.analysis._tune",
    "redundancy_latency": "reviewlab.analysis._bets",
    "replay_cost": "reviewlab.analysis._cost",
    "restart_expectation": "reviewlab.analysis._bets",
    "score_presets": "reviewlab.analysis._presets",
    "split_episodes": "reviewlab.analysis._holdout",
    "sweep_hedge_delays": "reviewlab.analysis._hedging",
}
"""Where each public name lives: imported on first use, so importing ``reviewlab.analysis`` loads
only what is asked for."""

__all__ = [
    "COST_KEYS",
    "DEFAULT_GUARANTEE_CONFIDENCE",
    "PRE_FIX",
    "BaselineComparison",
    "Certificate",
    "DurationProfile",
    "LearnedFit",
    "LearnedGain",
    "PricedCorpus",
    "Recommendation",
    "ReplayCost",
    "cancel_faithfulness",
    "certify",
    "clock_summary",
    "clock_table",
    "compare_baselines",
    "completed_only_spiral",
    "describe_silence",
    "explain_table",
    "fit_learned",
    "km_quantile",
    "learned_gain",
    "longest_silences",
    "optimal_cutoff",
    "preset_policy",
    "profile_tool",
    "recommend",
    "redundancy_latency",
    "replay_cost",
    "restart_expectation",
    "score_presets",
    "split_episodes",
    "sweep_hedge_delays",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
