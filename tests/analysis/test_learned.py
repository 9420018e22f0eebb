"""Learned conditional timeouts: the rule against lifelines, recovery of known coefficients from
censored data, the hazard bound by brute force, TOML, engines, synth's argument effect and the
held-out gain verdict (reviewlab/core/_learned.py, reviewlab/analysis/_learned.py)."""

from __future__ import annotations

import math
import warnings
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

from reviewlab.analysis._learned import candidate_features, fit_learned, learned_gain
from reviewlab.core._learned import LearnedTimeouts, ToolModel, call_features
from reviewlab.core._policy import Policy, PolicyError
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.recording.synth import synth_corpus

START = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)
TRUE_INTERCEPT, TRUE_COEF, TRUE_RHO = math.log(0.05), 0.8, 1.3


def weibull_reads(n: int, seed: int, bound: float = 4.0) -> list[Episode]:
    """Reads whose duration is Weibull with scale 0.05 s x (lines + 1) ** 0.8 and shape 1.3,
    cut at ``bound`` (Type-I censoring: ``completed=False`` at the bound)."""
    rng = np.random.default_rng(seed)
    episodes = []
    for i in range(n):
        lines = int(rng.integers(1, 400))
        scale = math.exp(TRUE_INTERCEPT + TRUE_COEF * math.log1p(lines))
        duration = scale * rng.weibull(TRUE_RHO)
        call = Call(
            tool="read_file",
            args={"path": "a.py", "start_line": 1, "end_line": lines},
            duration_sec=min(duration, bound),
            completed=duration <= bound,
            extent=Extent(path="a.py", start_line=1, end_line=lines),
        )
        rounds = [Round(send_sec=0.5, calls=[call]), Round(send_sec=0.5)]
        episodes.append(Episode(id=f"e{i}", source="synthetic", started_at=START, rounds=rounds))
    return episodes


@pytest.fixture(scope="module")
def fitted():
    """The learned rule fitted on 3,000 censored Weibull reads."""
    episodes = weibull_reads(3000, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return episodes, fit_learned(episodes, penalizer=0.0)


def test_the_rule_recovers_the_generating_model_with_censored_calls_kept(fitted):
    """Many calls are censored at 4 s (the large reads most); the fit keeps them and recovers
    the true coefficient, intercept and shape."""
    episodes, fit = fitted
    censored = sum(not c.completed for e in episodes for c in e.calls)
    assert 300 < censored < 1800
    model = fit.policy.timeouts.models["read_file"]
    assert model.features == ("span:start_line:end_line",)
    assert model.coef[0] == pytest.approx(TRUE_COEF, abs=0.05)
    assert model.intercept == pytest.approx(TRUE_INTERCEPT, abs=0.25)
    assert model.rho == pytest.approx(TRUE_RHO, abs=0.08)
    row = fit.table.set_index("tool").loc["read_file"]
    assert row["censored"] == censored


def test_the_stored_rule_gives_lifelines_own_percentiles(fitted):
    """For calls of several sizes the rule's bound equals lifelines' predict_percentile of the
    fitted model at the rule's quantile (lifelines' p is the survival left)."""
    _, fit = fitted
    rule = fit.policy.timeouts
    fitter = fit.fitters["read_file"]
    for lines in (1, 10, 100, 399):
        args = {"path": "a.py", "start_line": 1, "end_line": lines}
        row = pd.DataFrame([call_features(rule.models["read_file"].features, args)],
                           columns=list(rule.models["read_file"].features))  # fmt: skip
        expected = float(fitter.predict_percentile(row, p=1 - rule.quantile).iloc[0])
        assert rule.timeout_for(None, "read_file", args) == pytest.approx(
            min(max(expected, rule.min_sec), rule.max_sec), rel=1e-6
        )


def test_the_hazard_bound_is_where_the_chance_of_an_answer_soon_falls_below_the_floor():
    """With a falling hazard (shape 0.5) the bound is the first t at which a running call has
    less than 20 % chance of answering within 5 s, found by a brute-force scan of S(t)."""
    model = ToolModel((), (), math.log(10.0), 0.5)
    rule = LearnedTimeouts({"q": model}, quantile=0.999, hazard_window_sec=5.0, hazard_floor=0.2)
    bound = rule.timeout_for(None, "q", {})

    def chance(t: float) -> float:
        s = lambda u: math.exp(-((u / 10.0) ** 0.5))  # noqa: E731
        return 1 - s(t + 5.0) / s(t)

    grid = np.arange(0.0, 2000.0, 0.01)
    first = next(t for t in grid if chance(t) < 0.2)
    assert bound == pytest.approx(first, abs=0.02)
    assert bound < model.quantile(0.999, {})
    rising = LearnedTimeouts({"q": ToolModel((), (), 0.0, 2.0)}, hazard_window_sec=5.0,
                             hazard_floor=0.2)  # fmt: skip
    assert rising.timeout_for(None, "q", {}) == pytest.approx(
        ToolModel((), (), 0.0, 2.0).quantile(0.99, {})
    )


def test_a_learned_policy_round_trips_through_toml_and_replays_alike(fitted, tmp_path):
    """Saved and loaded, the policy is equal and gives every call the same bound; the twin and
    the vectorized engine replay it call for call."""
    episodes, fit = fitted
    path = tmp_path / "learned.toml"
    fit.policy.save(path)
    loaded = Policy.load(path)
    assert loaded == fit.policy and hash(loaded) == hash(fit.policy)
    assert "[learned.models.read_file]" in path.read_text()
    sample = episodes[:200]
    twin = replay(sample, loaded, engine="twin").calls
    fast = replay(sample, loaded, engine="vectorized").calls
    assert twin["bound_sec"].tolist() == pytest.approx(fast["bound_sec"].tolist())
    assert twin["outcome"].tolist() == fast["outcome"].tolist()
    assert twin["bound_sec"].nunique() > 50  # one bound per size, not per tool


def test_bad_learned_tables_name_the_field(tmp_path):
    """An unknown field, a bad shape and a [policy] table beside [learned] are refused."""
    path = tmp_path / "p.toml"
    path.write_text("[learned]\ncolour = 1\n[learned.models]\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=r"learned: unknown field\(s\) colour"):
        Policy.load(path)
    bad = "[learned.models.q]\nfeatures = []\ncoef = []\nintercept = 0.0\nrho = -1.0\n"
    path.write_text("[learned]\nquantile = 0.9\n" + bad, encoding="utf-8")
    with pytest.raises(PolicyError, match=r"learned\.models\.q\.rho: expected a positive"):
        Policy.load(path)
    path.write_text("[policy]\ndefault_sec = 5.0\n[learned]\nquantile = 0.9\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="give one or the other"):
        Policy.load(path)


def test_features_come_from_the_arguments_calls_share():
    """A read's span, a numeric and a text argument's size, and indicators of frequent values
    are candidates; a constant argument is not."""
    args = [{"start_line": 1, "end_line": 5 * i + 1, "n": i, "mode": "ab"[i % 2], "k": "x"}
            for i in range(40)]  # fmt: skip
    # len:mode and len:k do not vary (every value is one character), so they are left out.
    assert candidate_features(args) == ["span:start_line:end_line", "is:mode=b", "num:n"]


def test_synth_durations_follow_the_arguments_only_when_asked():
    """arg_effect=0 leaves the corpus unchanged; arg_effect=1 makes a read's duration grow with
    its lines (log-log correlation above 0.5); a negative effect is refused."""
    assert synth_corpus(50, seed=4) == synth_corpus(50, seed=4, arg_effect=0.0)
    corpus = synth_corpus(800, seed=4, arg_effect=1.0)
    pairs = np.array(
        [
            (c.extent.end_line - c.extent.start_line + 1, c.duration_sec)
            for e in corpus
            for c in e.calls
            if c.tool == "read_file" and c.completed
        ]  # fmt: skip
    )
    assert np.corrcoef(np.log(pairs[:, 0]), np.log(pairs[:, 1]))[0, 1] > 0.5
    with pytest.raises(ValueError, match="arg_effect must be finite and >= 0"):
        synth_corpus(5, seed=4, arg_effect=-1.0)


def test_the_gain_verdict_matches_its_curves():
    """On argument-dependent synthetic data, each learned point's static value at equal
    coverage is the linear interpolation of the static curve, and the verdict says gain
    exactly when some learned point abandons fewer calls than that."""
    train = synth_corpus(400, seed=5, arg_effect=1.0)
    held = synth_corpus(400, seed=6, arg_effect=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gain = learned_gain(train, held, quantiles=(0.9, 0.95, 0.99))
    curves = gain.curves
    static = curves[curves["family"] == "static"].sort_values("timeout_coverage_loss_rate")
    for row in curves[curves["family"] == "learned"].to_dict("records"):
        x = row["timeout_coverage_loss_rate"]
        xs = static["timeout_coverage_loss_rate"].tolist()
        if xs[0] <= x <= xs[-1]:
            expected = np.interp(x, xs, static["abandoned_call_rate"].tolist())
            assert row["static_at_equal_coverage"] == pytest.approx(expected)
            assert row["gain"] == pytest.approx(expected - row["abandoned_call_rate"])
        else:
            assert math.isnan(row["gain"])
    found = bool((curves["gain"] > 0).any())
    assert gain.verdict.startswith("gain:" if found else "no gain found")


def test_the_learned_rule_never_goes_below_its_min_sec():
    """A model whose quantile is 0.01 s (Weibull scale 0.01, shape 1, at the 1 - 1/e quantile)
    gets the rule's floor, 0.1 s; with a floor of 0.001 s it gets its own 0.01 s."""
    model = ToolModel((), (), math.log(0.01), 1.0)
    q = -math.expm1(-1.0)
    assert LearnedTimeouts({"q": model}, quantile=q).timeout_for(None, "q") == 0.1
    loose = LearnedTimeouts({"q": model}, quantile=q, min_sec=0.001)
    assert loose.timeout_for(None, "q") == pytest.approx(0.01)
