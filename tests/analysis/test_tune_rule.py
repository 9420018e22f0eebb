"""tune: per tool the shortest timeout within the timeout-loss and abandonment budgets, checked on
the twin (not the vectorized engine tune searches with), and reproduced by ``replay --policy``."""

from __future__ import annotations

import math
import re
from statistics import NormalDist

import numpy as np
import pytest

from reviewlab.analysis._tune import recommend
from reviewlab.cli import main
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.recording._files import load_episodes
from reviewlab.resources import corpus_path


@pytest.fixture(scope="module")
def corpus():
    return list(load_episodes(corpus_path()))


@pytest.fixture(scope="module")
def tuned(corpus):
    """The acceptance run: the bundled corpus, a 0.5 % timeout coverage-loss budget."""
    return recommend(corpus, max_timeout_coverage_loss=0.005)


def twin(episodes, policy, narrowing=None):
    """The reference replay: the SimPy twin, the default censoring assumption."""
    return replay(episodes, policy, narrowing, engine="twin")


def upper_bound(numerator, denominator, confidence=0.95):
    """One-sided upper confidence limit of a ratio of per-episode sums, by the delta method."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    ratio = numerator.sum() / denominator.sum()
    residual = numerator - ratio * denominator
    n = len(residual)
    variance = n / (n - 1) * (residual**2).sum() / denominator.sum() ** 2
    return ratio + NormalDist().inv_cdf(confidence) * math.sqrt(variance)


def test_the_recommendation_meets_its_budget_and_beats_nothing_it_should_not(corpus, tuned):
    """Acceptance: on the twin the recommended policy loses ≤ 0.5 % of coverage to timeouts and
    its p95 wall time is no worse than ouroboros's."""
    ours = twin(corpus, tuned.policy)
    theirs = twin(corpus, TimeoutPolicy.ouroboros())
    assert tuned.met
    assert ours.summary["timeout_coverage_loss_rate"] <= 0.005
    assert ours.summary["wall_p95_sec"] <= theirs.summary["wall_p95_sec"]
    assert ours.summary["max_silence_sec"] < theirs.summary["max_silence_sec"]


def test_the_budget_table_is_what_the_twin_says(corpus, tuned):
    """Each budget's estimate is the twin's rate, and its upper bound the delta-method bound over
    the twin's episodes."""
    run = twin(corpus, tuned.policy)
    budgets = tuned.budgets.set_index("budget")
    episodes = run.episodes
    coverage = budgets.loc["timeout_coverage_loss_rate"]
    assert coverage["estimate"] == pytest.approx(run.summary["timeout_coverage_loss_rate"])
    expected = upper_bound(episodes["timeout_lost_lines"], episodes["requested_lines"])
    if episodes["timeout_lost_lines"].sum() == 0:
        expected = 0.0
    assert coverage["upper_95%"] == pytest.approx(expected, abs=1e-12)
    abandoned = budgets.loc["abandoned_call_rate"]
    assert abandoned["estimate"] == pytest.approx(run.summary["abandoned_call_rate"])
    assert abandoned["upper_95%"] == pytest.approx(
        upper_bound(episodes["abandoned_calls"], episodes["calls"])
    )
    assert math.isinf(abandoned["limit"]) and bool(abandoned["met"])
    assert coverage["limit"] == 0.005 and bool(coverage["met"])
    assert max(coverage["upper_95%"], coverage["predicted_unseen"]) <= 0.005


def test_each_tool_sits_on_the_shortest_step_the_budgets_allow(corpus):
    """One step tighter breaks a budget (or worsens the objective), one step looser keeps it."""
    rec = recommend(corpus[:400], max_timeout_coverage_loss=0.01, max_abandoned_rate=0.01)
    for row in rec.explain.to_dict("records"):
        if not math.isnan(row["tighter_sec"]):
            assert row["tighter_sec"] < row["timeout_sec"]
            worse = row["tighter_wall_p95_sec_change"] > 0
            assert worse or row["tighter_within_budget"] is False, row["tool"]
        if not math.isnan(row["looser_sec"]):
            assert row["looser_sec"] > row["timeout_sec"] and row["looser_within_budget"] is True
        assert rec.policy.timeout_for(None, row["tool"]) == row["timeout_sec"]


@pytest.mark.parametrize("objective", ["wall_p95", "wall_p99", "max_silence"])
def test_each_objective_reports_its_own_saving(corpus, objective):
    """The saving printed for an objective is base minus recommended of that very metric, and a
    tool's share is its own effect: the base minus the base with only that tool at its
    recommended timeout (on the twin; docs/metrics.md, "tune's per-tool table")."""
    rec = recommend(corpus, max_timeout_coverage_loss=0.01, objective=objective)
    key = rec.objective
    assert key == {"wall_p95": "wall_p95_sec", "wall_p99": "wall_p99_sec"}.get(
        objective, "max_silence_sec"
    )
    base = twin(corpus, TimeoutPolicy.ouroboros()).summary[key]
    ours = twin(corpus, rec.policy).summary[key]
    assert rec.saved == pytest.approx(base - ours)
    assert rec.saved >= 0
    if objective == "max_silence":
        assert rec.saved > 1.0  # the 600 s floor on query_code is where silence comes from
    for row in rec.explain.to_dict("records"):
        alone = TimeoutPolicy.ouroboros().with_tool_timeouts(
            None, **{row["tool"]: row["timeout_sec"]}
        )
        assert row[f"saved_{key}"] == pytest.approx(
            base - twin(corpus, alone).summary[key], abs=1e-9
        )


def test_held_out_episodes_stay_within_the_budgets(corpus):
    """Tuned on one part of the corpus, the policy keeps both budgets on the rest (twin)."""
    for train, test in (
        (corpus[::2], corpus[1::2]),
        (corpus[1::2], corpus[::2]),
        (corpus[:700], corpus[700:]),
    ):
        rec = recommend(train, max_timeout_coverage_loss=0.01, max_abandoned_rate=0.005)
        held_out = twin(test, rec.policy).summary
        assert held_out["timeout_coverage_loss_rate"] <= 0.01
        assert held_out["abandoned_call_rate"] <= 0.005


def test_the_policy_file_holds_policy_and_narrowing(corpus, tmp_path):
    """The saved TOML has [policy] and [narrowing] and loads back to exactly what was tuned."""
    narrowing = Narrowing("reserve", reserve_sec=30.0)
    rec = recommend(corpus[:200], max_timeout_coverage_loss=0.02, narrowing=narrowing)
    text = rec.to_toml()
    assert "[policy]" in text and "[narrowing]" in text
    path = rec.save(tmp_path / "rec.toml")
    loaded = Policy.load(path)
    assert loaded == rec.policy and loaded.narrowing == narrowing


def test_unmeetable_budgets_say_so(corpus):
    """Calls that never return are abandoned under every bound: a zero abandonment budget cannot
    be met, and the answer says so instead of pretending."""
    rec = recommend(corpus, max_abandoned_rate=0.0)
    assert any(not call.completed for episode in corpus for call in episode.calls)
    assert not rec.met
    assert not bool(rec.budgets.set_index("budget").loc["abandoned_call_rate", "met"])
    # A zero timeout-loss budget alone is met by the loosest timeouts, which abandon only those.
    assert recommend(corpus[:200], max_timeout_coverage_loss=0.0).met


def test_the_former_budget_name_still_works_and_warns(corpus):
    """max_coverage_loss is read as max_timeout_coverage_loss, with a DeprecationWarning."""
    with pytest.warns(DeprecationWarning, match="max_timeout_coverage_loss"):
        old = recommend(corpus[:200], max_coverage_loss=0.02)
    new = recommend(corpus[:200], max_timeout_coverage_loss=0.02)
    assert old.policy == new.policy
    with pytest.raises(ValueError, match="max_coverage_loss"):
        recommend(corpus[:200], max_coverage_loss=0.02, max_timeout_coverage_loss=0.02)
    with pytest.raises(ValueError, match="max_timeout_coverage_loss"):
        recommend(corpus[:200], max_timeout_coverage_loss=1.5)


# -- through the command line -------------------------------------------------------------


def _column(text: str, header_word: str) -> dict[str, str]:
    """``metric → value`` of the last column of the summary table whose header has the word."""
    lines = text.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("metric") and header_word in line
    )
    out = {}
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith(("∞: ", "assumes: ")):  # the table's footnotes
            break
        cells = re.split(r"\s{2,}", line.strip())
        out[cells[0]] = cells[-1]
    return out


def _number(cell: str) -> float:
    """A printed figure as a number: ``54.85 s`` → 54.85, ``0.324 %`` → 0.00324."""
    if cell.endswith(" %"):
        return float(cell.removesuffix(" %").replace(",", "")) / 100
    return float(cell.removesuffix(" s").replace(",", ""))


def test_replay_of_the_saved_policy_reproduces_the_printed_figures(tmp_path, capsys):
    """``tune -o rec.toml`` then ``replay --policy rec.toml``: every figure of the recommended
    column is printed again by replay, the budget holds and p95 wall is no worse."""
    corpus = str(corpus_path())
    rec = tmp_path / "rec.toml"
    assert main(["tune", corpus, "--max-timeout-coverage-loss", "0.005", "-o", str(rec)]) == 0
    tuned = capsys.readouterr().out
    assert "rule:" in tuned and "coverage lost to timeouts" in tuned and "yes" in tuned
    assert main(["replay", corpus, "--policy", str(rec)]) == 0
    replayed = capsys.readouterr().out
    printed = _column(tuned, "recommended")
    again = _column(replayed, "recommended")
    assert printed == again
    base = _column(tuned, "base")
    assert _number(printed["coverage lost to timeouts"]) <= 0.005
    assert _number(printed["wall p95"]) <= _number(base["wall p95"])


def test_an_unmeetable_budget_exits_non_zero_and_writes_nothing(tmp_path, capsys):
    """tune with a budget no policy meets exits 1, says so on stderr and leaves -o unwritten."""
    rec = tmp_path / "rec.toml"
    status = main(["tune", str(corpus_path()), "--max-abandoned-rate", "0", "-o", str(rec)])
    captured = capsys.readouterr()
    assert status == 1 and not rec.exists()
    assert "NOT MET" in captured.out and "keeps every budget" in captured.err


def test_sweep_refuses_a_typo_in_one_line(capsys):
    """``sweep --tool raed_file=5`` exits non-zero with one line naming raed_file and read_file."""
    assert main(["sweep", str(corpus_path()), "--tool", "raed_file=5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "raed_file" in err and "read_file" in err


def test_sweep_pareto_default_drops_the_unbounded_policy(capsys, tmp_path):
    """With silence an axis, the unbounded point is not on the front; --pareto picks the axes."""
    out = tmp_path / "sweep.csv"
    args = ["sweep", str(corpus_path()), "--narrowing", "inherit,unbounded", "-o", str(out)]
    assert main(args) == 0
    import pandas as pd

    frame = pd.read_csv(out)
    unbounded = frame[frame["narrowing.mode"] == "unbounded"]
    assert len(unbounded) == 1 and not bool(unbounded["pareto"].iloc[0])
    assert bool(frame.loc[frame["narrowing.mode"] == "inherit", "pareto"].iloc[0])
    capsys.readouterr()
    assert main([*args, "--pareto", "fastest"]) == 2
    assert "fastest" in capsys.readouterr().err
