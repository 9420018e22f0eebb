"""The main job (``reviewlab demo``, ``make demo``): reviewlab end to end in under two minutes.

Steps, each printed as it finishes: a live episode over the bundled workspace with one tool
wedged on purpose (abandoned at its bound, the model told, the episode carrying on:
:mod:`reviewlab.ui._demo_live`); the
recorded incident replayed before and after the fix; the bundled corpus under both policies;
a default sweep and its Pareto front; a recommendation within a budget, replayed; and
``OUT/report.html`` with its charts (:mod:`reviewlab.ui._demo_report`). The terminal gets the
short form (at most :data:`MAX_LINES` lines), ``verbose`` the full tables; every table states
its assumptions.

Invariants: the wedged worker of the live step is released whatever happens, so the demo
never leaves a thread behind; every figure is computed by the library, this module only
chooses inputs and arranges outputs. The steps in full: docs/architecture.md, "The demo".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("MPLBACKEND", "Agg")  # the demo draws files, never windows

import pandas as pd  # noqa: E402

from reviewlab.core._policy import PRE_FIX_LABEL, Narrowing, Policy, TimeoutPolicy  # noqa: E402
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED  # noqa: E402
from reviewlab.resources import BUNDLED_CORPUS, INCIDENT_DAY, data_path  # noqa: E402
from reviewlab.ui._calls import calls_table  # noqa: E402
from reviewlab.ui._demo_live import LIVE_ASSUMPTIONS, live_episode  # noqa: E402
from reviewlab.ui._demo_report import (  # noqa: E402
    CorpusStep,
    IncidentStep,
    LiveStep,
    SweepStep,
    TuneStep,
    write_report,
)
from reviewlab.ui._numbers import rate_text, seconds_text  # noqa: E402
from reviewlab.ui._sweeps import front_table  # noqa: E402
from reviewlab.ui._tables import Table, as_table, changes_lines, summary_table  # noqa: E402

CORPUS_PATH = data_path(BUNDLED_CORPUS)
INCIDENT_PATH = data_path(INCIDENT_DAY)

QUICK_EPISODES = 200
"""``--quick`` replays and sweeps only the first episodes of the corpus."""
BUDGET = 0.01
"""The recommendation's budget: the share of requested read lines lost to timeouts."""
FRONT_OBJECTIVES = ("timeout_coverage_loss_rate", "wall_p95_sec")
"""The objectives of the demo's Pareto front: the two its chart draws."""
DEFAULT_TOP = 8
"""Rows of the front the short form prints."""
MAX_LINES = 80
"""The most lines the short form prints on stdout."""
PREFIX = PRE_FIX_LABEL

Echo = Callable[[str], None]


@dataclass
class DemoResult:
    """What the demo computed, for callers and tests."""

    out_dir: Path
    report_path: Path | None = None
    images: list[Path] = field(default_factory=list)
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    incident_silence_sec: dict[str, float] = field(default_factory=dict)
    recommended: Policy | None = None
    elapsed_sec: float = 0.0
    steps_sec: dict[str, float] = field(default_factory=dict)


# -- steps 2–5: replay, sweep, recommend -----------------------------------------------------
def _load(path: Path, what: str, make: str) -> list[Any]:
    from reviewlab.recording._files import load_episodes

    if not path.exists():
        raise FileNotFoundError(f"{path}: the bundled {what} is missing; recreate it with `{make}`")
    return list(load_episodes(path))


def _default_grid(quick: bool) -> Any:
    """The grid the demo sweeps: per-tool timeouts of the inspection tools × narrowing modes."""
    from reviewlab.analysis.sweep import make_grid

    if quick:
        return make_grid(
            TimeoutPolicy.ouroboros(),
            tools={"read_file": [30.0, 120.0, 600.0], "query_code": [60.0, 120.0]},
            narrowings=[Narrowing(), Narrowing(mode="reserve", reserve_sec=30.0)],
        )
    return make_grid(
        TimeoutPolicy.ouroboros(),
        tools={
            "read_file": [5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0],
            "search_code": [10.0, 30.0, 60.0, 120.0, 300.0],
            "query_code": [30.0, 60.0, 120.0, 300.0],
        },
        narrowings=[
            Narrowing(),
            Narrowing(mode="reserve", reserve_sec=30.0),
            Narrowing(mode="none"),
        ],
    )


CURVE_TIMEOUTS = {
    tool: [1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0]
    for tool in ("read_file", "list_files", "search_code", "query_code")
}
"""Per-tool timeouts of the one-at-a-time curves drawn in the report."""

INCIDENT_KEYS = (
    "calls",
    "abandoned_call_rate",
    "max_silence_sec",
    "wall_max_sec",
    "zombie_sec",
    "wedged_zombies",
    "peak_loose_workers",
)
SHORT_SUMMARY_KEYS = (
    "calls",
    "abandoned_call_rate",
    "timeout_coverage_loss_rate",
    "coverage_loss_rate",
    "wall_p50_sec",
    "wall_p95_sec",
    "wall_p99_sec",
    "wall_max_sec",
    "max_silence_sec",
    "zombie_sec",
    "wedged_zombies",
)
"""The corpus summary rows of the short form (``verbose`` and the report: every row)."""
SHORT_TUNE_COLUMNS = (
    "tool",
    "calls",
    "censored",
    "base_timeout_sec",
    "timeout_sec",
    "survival_quantile",
    "completed_abandoned",
    "timeout_coverage_loss_rate",
)
"""The per-tool columns of the short form (``verbose`` and the report: every column)."""


def budget_words(budget: float = BUDGET) -> str:
    """The budget as a heading names it: ``1 % of read lines lost to timeouts``."""
    return f"{rate_text(budget)} of read lines lost to timeouts"


def tune_table(recommendation: Any, *, verbose: bool) -> Table:
    """The recommendation's per-tool table: each figure that tool's own effect."""
    explain = recommendation.explain
    if not verbose:
        explain = explain[[c for c in SHORT_TUNE_COLUMNS if c in explain.columns]]
    return as_table(
        explain,
        title="per tool (each figure is that tool's own effect: the base with only this tool "
        "changed)",
        assumptions=recommendation.assumptions,
    )


def run_demo(
    out_dir: str | Path = "out",
    *,
    quick: bool = False,
    echo: Echo = print,
    verbose: bool = False,
    top: int = DEFAULT_TOP,
) -> DemoResult:
    """Run the whole demo, print its progress through ``echo`` and write ``out_dir/report.html``.

    The short form by default (at most :data:`MAX_LINES` lines); ``verbose`` prints the full
    tables; ``top`` rows of the Pareto front are printed (the report holds all of them).
    """

    if top < 1:
        raise ValueError(f"top: expected a positive number of rows, got {top}")
    result = DemoResult(out_dir=Path(out_dir))
    watch = _Stopwatch(result, echo)
    release = threading.Event()
    try:
        echo(
            "== 1. A live review episode; search_code is wedged (ouroboros policy scaled 1/1000) =="
        )
        live = LiveStep(live_episode(release, echo), LIVE_ASSUMPTIONS)
        watch.step("live episode")
        incident = _incident_step(result, echo, verbose=verbose)
        watch.step("incident replay")
        corpus = _corpus_step(echo, quick=quick)
        watch.step("corpus replay")
        swept = _sweep_step(corpus.episodes, echo, quick=quick, verbose=verbose, top=top)
        watch.step("sweep")
        tuned = _tune_step(result, corpus, echo, verbose=verbose)
        watch.step("tune")
        result.summaries = {label: run.summary for label, run in corpus.runs.items()}
        echo(f"== Summary: {len(corpus.episodes)} episodes under each policy ==")
        echo(summary_table(corpus.runs, None if verbose else SHORT_SUMMARY_KEYS).text())
        report = write_report(
            result.out_dir, live=live, incident=incident, corpus=corpus, sweep=swept, tune=tuned
        )
        watch.step("report")
    finally:
        release.set()  # the wedged worker returns now; its late value is credited to nothing

    result.elapsed_sec = time.perf_counter() - watch.started
    result.report_path = report.out_dir / "report.html"
    result.images = list(report.images)
    echo(
        f"report: {result.report_path} ({len(result.images)} charts, every table in full); "
        "also sweep.csv and recommended-policy.toml"
    )
    steps = ", ".join(f"{name} {sec:.1f} s" for name, sec in result.steps_sec.items())
    echo(f"demo finished in {result.elapsed_sec:.1f} s ({steps})")
    return result


class _Stopwatch:
    """Times the demo's steps into ``result.steps_sec``; a blank line ends each step's output."""

    def __init__(self, result: DemoResult, echo: Echo) -> None:
        self.result = result
        self.echo = echo
        self.started = self.last = time.perf_counter()

    def step(self, name: str) -> None:
        """The step ``name`` has just finished."""
        now = time.perf_counter()
        self.result.steps_sec[name] = now - self.last
        self.last = now
        self.echo("")


def _incident_step(result: DemoResult, echo: Echo, *, verbose: bool) -> IncidentStep:
    """Step 2: the recorded incident replayed on its reviewer slots before and after the fix."""
    from reviewlab.engines._replay import replay
    from reviewlab.recording.synth import INCIDENT_EPISODE_ID, INCIDENT_SLOT

    echo("== 2. The incident: a wedged query_code, before and after the fix ==")
    incident = _load(INCIDENT_PATH, "incident", f"reviewlab synth --incident -o {INCIDENT_PATH}")
    slots = len({episode.slot for episode in incident})
    # The recording watched the wedged call for 26,160 s: replay what happened (observed);
    # under censored="wedge" the pre-fix silence would be infinite.
    runs = {
        label: replay(incident, policy, engine="twin", slots=slots, censored="observed")
        for label, policy in ((PREFIX, Policy.unbounded()), ("ouroboros", Policy.ouroboros()))
    }
    result.incident_silence_sec = {
        label: run.summary["max_silence_sec"] for label, run in runs.items()
    }
    wedged = calls_table(runs, episodes=incident, episode_id=INCIDENT_EPISODE_ID, tool="query_code")
    watched = _watched_sec(incident, INCIDENT_EPISODE_ID)
    echo(
        f"{len(incident)} episodes on {slots} reviewer slots; in {INCIDENT_EPISODE_ID} "
        f"({INCIDENT_SLOT}) a query_code call never returned while the recording watched it "
        f"({seconds_text(watched)}):"
    )
    echo(
        (
            calls_table(runs, episodes=incident, episode_id=INCIDENT_EPISODE_ID)
            if verbose
            else wedged
        ).text()
    )
    echo(summary_table(runs, None if verbose else INCIDENT_KEYS).text())
    calls = runs["ouroboros"].calls
    bounds = calls[
        (calls["episode_id"] == INCIDENT_EPISODE_ID) & (calls["source_gap"] == SOURCE_GAP_ABANDONED)
    ]
    echo(
        f"longest silence: {seconds_text(result.incident_silence_sec[PREFIX])} before the "
        f"fix, {seconds_text(result.incident_silence_sec['ouroboros'])} after (query_code "
        "abandoned at its "
        f"{', '.join(seconds_text(b) for b in bounds['bound_sec'])} bound)"
    )
    return IncidentStep(incident, runs)


def _corpus_step(echo: Echo, *, quick: bool) -> CorpusStep:
    """Step 3: the bundled corpus under the pre-fix and the ouroboros policy, and the check that
    the vectorized engine gives exactly the twin's answers on it."""
    from reviewlab.engines._replay import replay

    corpus = _load(CORPUS_PATH, "corpus", f"reviewlab synth -n 1000 -o {CORPUS_PATH}")
    if quick:
        corpus = corpus[:QUICK_EPISODES]
    echo(
        f"== 3. {len(corpus)} recorded episodes replayed under the pre-fix and the ouroboros "
        "policy =="
    )
    runs = {
        PREFIX: replay(corpus, Policy.unbounded(), engine="vectorized"),
        "ouroboros": replay(corpus, Policy.ouroboros(), engine="vectorized"),
    }
    # The vectorized engine must give exactly the twin's answers; show it on this corpus.
    agree = all(
        replay(corpus, run.policy, engine="twin").calls.equals(run.calls) for run in runs.values()
    )
    echo(f"vectorized and twin engines agree on every call: {'yes' if agree else 'NO'}")
    return CorpusStep(corpus, runs, agree)


def _sweep_step(
    corpus: list[Any], echo: Echo, *, quick: bool, verbose: bool, top: int
) -> SweepStep:
    """Step 4: the default grid swept, and its Pareto front on :data:`FRONT_OBJECTIVES`."""
    from reviewlab.analysis.sweep import pareto, sweep

    points = sweep(corpus, _default_grid(quick), engine="vectorized", progress=False)
    points["pareto"] = pareto(points, FRONT_OBJECTIVES)
    echo(f"== 4. A sweep of {len(points)} policy points ==")
    echo(
        front_table(
            points,
            FRONT_OBJECTIVES,
            top=None if verbose else top,
            collapse=not verbose,
        ).text()
    )
    return SweepStep(points, FRONT_OBJECTIVES)


def _tune_step(result: DemoResult, corpus: CorpusStep, echo: Echo, *, verbose: bool) -> TuneStep:
    """Step 5: a policy recommended within :data:`BUDGET`, replayed beside the others (added to
    ``corpus.runs`` as ``"recommended"``)."""
    from reviewlab.analysis._tune import recommend
    from reviewlab.analysis.sweep import tool_curves
    from reviewlab.engines._replay import replay

    echo(f"== 5. A recommended policy within a budget of {budget_words()} (objective: wall p95) ==")
    episodes = corpus.episodes
    curves = tool_curves(episodes, CURVE_TIMEOUTS, base=Policy.ouroboros(), progress=False)
    recommendation = recommend(episodes, max_timeout_coverage_loss=BUDGET, objective="wall_p95")
    result.recommended = recommendation.policy
    corpus.runs["recommended"] = replay(episodes, recommendation.policy, engine="vectorized")
    echo(tune_table(recommendation, verbose=verbose).text())
    for line in changes_lines(recommendation.baseline, recommendation.summary, against="ouroboros"):
        echo(line)
    return TuneStep(
        recommendation, curves, tune_table(recommendation, verbose=True), budget_words()
    )


def _watched_sec(episodes: list[Any], episode_id: str) -> float:
    """How long the recording watched the episode's call that never returned."""
    for episode in episodes:
        if episode.id == episode_id:
            return max(
                (c.duration_sec for c in episode.calls if not c.completed), default=float("nan")
            )
    return float("nan")


def summaries_frame(runs: Mapping[str, Any]) -> pd.DataFrame:
    """Every run's summary as one frame (a row per run), for callers that keep working on it."""
    return pd.DataFrame({label: run.summary for label, run in runs.items()}).T
