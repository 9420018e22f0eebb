"""The demo's report (``out/report.html``): every table of the terminal in full, under the same
labels, each with its assumptions, and the charts the terminal cannot show.

Called once by :func:`reviewlab.ui._demo.run_demo` with what it computed; nothing is replayed
here except what a chart draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reviewlab.core._policy import PRE_FIX_LABEL
from reviewlab.ui._calls import calls_table, per_tool_table, receipts_table
from reviewlab.ui._report import Report, write_table
from reviewlab.ui._sweeps import front_table
from reviewlab.ui._tables import Table, changes_lines, summary_table


@dataclass(frozen=True)
class LiveStep:
    """Step 1: the live episode's result, and the assumptions its tables state."""

    result: Any
    assumptions: str


@dataclass(frozen=True)
class IncidentStep:
    """Step 2: the recorded incident and its replays, by label (pre-fix and ouroboros)."""

    episodes: list[Any]
    runs: Mapping[str, Any]


@dataclass(frozen=True)
class CorpusStep:
    """Step 3: the bundled corpus and its replays by label (pre-fix, ouroboros, and the
    recommended policy once step 5 adds it); ``agree``: the vectorized and the twin engines
    gave the same calls."""

    episodes: list[Any]
    runs: dict[str, Any]
    agree: bool


@dataclass(frozen=True)
class SweepStep:
    """Step 4: the sweep's points (with their ``pareto`` column) and the front's two
    objectives."""

    points: pd.DataFrame
    objectives: tuple[str, str]


@dataclass(frozen=True)
class TuneStep:
    """Step 5: the recommendation, the one-tool-at-a-time curves, its full per-tool table and
    the budget in words."""

    recommendation: Any
    curves: pd.DataFrame
    table: Table
    budget_words: str


def write_report(
    out_dir: Path,
    *,
    live: LiveStep,
    incident: IncidentStep,
    corpus: CorpusStep,
    sweep: SweepStep,
    tune: TuneStep,
) -> Report:
    """Write ``out_dir/report.html`` (and its PNGs, ``sweep.csv``, ``recommended-policy.toml``):
    the summary first, then the demo's five steps in order."""
    report = Report("reviewlab demo: bounding reviewer tool calls", out_dir)
    write_table(sweep.points, report.out_dir / "sweep.csv")
    tune.recommendation.policy.save(report.out_dir / "recommended-policy.toml")
    _summary_section(report, corpus)
    _live_section(report, live)
    _incident_section(report, incident)
    _per_tool_section(report, corpus, tune.curves)
    _sweep_section(report, sweep, corpus.runs)
    _tune_section(report, tune, corpus.episodes)
    report.write()
    return report


def _summary_section(report: Report, corpus: CorpusStep) -> None:
    n = len(corpus.episodes)
    report.heading(f"Summary: {n} episodes under each policy")
    report.paragraph(
        f"The bundled corpus ({n} episodes) replayed under the pre-fix behaviour (no "
        "tool bound), the ouroboros policy and the recommended policy. The vectorized and the "
        f"twin engines {'agree on every call' if corpus.agree else 'DISAGREE'} on this corpus."
    )
    report.table(summary_table(corpus.runs))


def _live_section(report: Report, live: LiveStep) -> None:
    report.heading("1. A live review episode with a wedged tool")
    report.paragraph(
        "A real episode over the bundled demo workspace, ouroboros scaled 1/1000; "
        "search_code blocks until the demo ends."
    )
    report.table(receipts_table(live.result.receipts, assumptions=live.assumptions))
    report.code(
        "\n".join(
            f"{key} = {value!r}"
            for key, value in live.result.usage.items()
            if key != "native_tool_receipts"
        )
    )


def _incident_section(report: Report, incident: IncidentStep) -> None:
    from reviewlab.recording.synth import INCIDENT_EPISODE_ID
    from reviewlab.ui import charts

    runs, episodes = incident.runs, incident.episodes
    report.heading("2. The incident: a wedged query_code, before and after the fix")
    report.paragraph(
        "A recorded day of a reviewer pool. One query_code call never returned while the "
        "recording watched it. Before the fix the episode waited for it and its slot stayed "
        "silent; with the ouroboros policy the call is abandoned at its bound and the episode "
        "goes on. Both replays let the wedged call return when the recording last saw it."
    )
    report.table(summary_table(runs))
    report.table(
        calls_table(runs, episodes=episodes, episode_id=INCIDENT_EPISODE_ID),
        f"The calls of {INCIDENT_EPISODE_ID}",
    )
    report.figure(
        charts.pool_timeline(runs[PRE_FIX_LABEL], episodes=episodes),
        "incident-pool-prefix",
        "Pre-fix: the reviewer pool over the day; one slot is silent on a tool for hours.",
    )
    report.figure(
        charts.pool_timeline(runs["ouroboros"], episodes=episodes),
        "incident-pool-ouroboros",
        "Ouroboros: the same day with every call bounded.",
    )
    report.figure(
        charts.episode_timeline(runs["ouroboros"], INCIDENT_EPISODE_ID, episode=episodes),
        "incident-episode-ouroboros",
        "The incident episode under ouroboros: query_code is abandoned at its bound; its "
        "loose worker runs on.",
    )


def _per_tool_section(report: Report, corpus: CorpusStep, curves: pd.DataFrame) -> None:
    from reviewlab.ui import charts

    report.heading("3. Per tool, under the ouroboros policy")
    report.table(per_tool_table(corpus.runs["ouroboros"]))
    report.figure(
        charts.rates_vs_timeout(curves),
        "rates-vs-timeout",
        "Each tool's timeout varied alone (the others at ouroboros): abandoned calls and "
        "read coverage lost to timeouts.",
    )


def _sweep_section(report: Report, sweep: SweepStep, named: Mapping[str, Any]) -> None:
    from reviewlab.ui import charts

    points, (x, y) = sweep.points, sweep.objectives
    report.heading(f"4. A sweep of {len(points)} policy points")
    report.figure(
        charts.pareto_front(points, named=named, x=x, y=y),
        "pareto",
        "p95 episode wall time against the read coverage lost to timeouts, one dot per policy "
        "point; the Pareto front on these two objectives is the red staircase with filled red "
        "dots; the named policies are coloured rings, their longest silence in the legend.",
    )
    report.table(
        front_table(
            points,
            sweep.objectives,
            top=None,
            collapse=False,
        )
    )
    report.paragraph(
        "Every point, with every column, is in sweep.csv (its pareto column: this front)."
    )


def _tune_section(report: Report, tune: TuneStep, corpus: list[Any]) -> None:
    from reviewlab.ui import charts
    from reviewlab.ui._answers import tune_budget_table

    recommendation = tune.recommendation
    report.heading(f"5. A recommended policy within a budget of {tune.budget_words}")
    report.paragraph(
        "Per-tool timeouts chosen to minimise p95 episode wall time while at most "
        f"{tune.budget_words} (95 % upper bound over episodes); duration quantiles are "
        "Kaplan–Meier estimates that count calls which never returned."
    )
    report.table(tune_budget_table(recommendation))
    report.table(tune.table)
    report.code(
        "\n".join(
            changes_lines(recommendation.baseline, recommendation.summary, against="ouroboros")
        )
    )
    report.figure(
        charts.survival_curves(corpus, recommendation.policy),
        "survival",
        "Share of each tool's calls still running after t seconds, with the recommended bounds.",
    )
    report.code(recommendation.policy.to_toml())
