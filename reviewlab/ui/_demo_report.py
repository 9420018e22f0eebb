"""The demo's report (``out/report.html``): every table of the terminal in full, under the same
labels, each with its assumptions, and the charts the terminal cannot show.

Called once by :func:`reviewlab.ui.demo.run_demo` with what it computed; nothing is replayed
here except what a chart draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from reviewlab.core.policy import PRE_FIX_LABEL
from reviewlab.ui.calls import calls_table, per_tool_table, receipts_table
from reviewlab.ui.report import Report, write_table
from reviewlab.ui.sweeps import front_table, sweep_assumptions
from reviewlab.ui.tables import Table, changes_lines, summary_table

__all__ = ["write_report"]


def write_report(
    out_dir: Path,
    *,
    live: Any,
    live_assumptions: str,
    incident: list[Any],
    incident_runs: Mapping[str, Any],
    corpus: list[Any],
    runs: Mapping[str, Any],
    points: pd.DataFrame,
    curves: pd.DataFrame,
    recommendation: Any,
    agree: bool,
    tune_table: Table,
    front_objectives: tuple[str, str],
    budget_words: str,
) -> Report:
    """Write ``out_dir/report.html`` (and its PNGs, ``sweep.csv``, ``recommended-policy.toml``)."""
    from reviewlab.recording.synth import INCIDENT_EPISODE_ID
    from reviewlab.ui import charts
    from reviewlab.ui.answers import tune_budget_table

    report = Report("reviewlab demo: bounding reviewer tool calls", out_dir)
    recommended = recommendation.policy
    write_table(points, report.out_dir / "sweep.csv")
    recommended.save(report.out_dir / "recommended-policy.toml")

    report.heading(f"Summary: {len(corpus)} episodes under each policy")
    report.paragraph(
        f"The bundled corpus ({len(corpus)} episodes) replayed under the pre-fix behaviour (no "
        "tool bound), the ouroboros policy and the recommended policy. The vectorized and the "
        f"twin engines {'agree on every call' if agree else 'DISAGREE'} on this corpus."
    )
    report.table(summary_table(runs))

    report.heading("1. A live review episode with a wedged tool")
    report.paragraph(
        "A real episode over the bundled demo workspace, ouroboros scaled 1/1000; "
        "search_code blocks until the demo ends."
    )
    report.table(receipts_table(live.receipts, assumptions=live_assumptions))
    report.code(
        "\n".join(
            f"{key} = {value!r}"
            for key, value in live.usage.items()
            if key != "native_tool_receipts"
        )
    )

    report.heading("2. The incident: a wedged query_code, before and after the fix")
    report.paragraph(
        "A recorded day of a reviewer pool. One query_code call never returned while the "
        "recording watched it. Before the fix the episode waited for it and its slot stayed "
        "silent; with the ouroboros policy the call is abandoned at its bound and the episode "
        "goes on. Both replays let the wedged call return when the recording last saw it."
    )
    report.table(summary_table(incident_runs))
    report.table(
        calls_table(incident_runs, episodes=incident, episode_id=INCIDENT_EPISODE_ID),
        f"The calls of {INCIDENT_EPISODE_ID}",
    )
    report.figure(
        charts.pool_timeline(incident_runs[PRE_FIX_LABEL], episodes=incident),
        "incident-pool-prefix",
        "Pre-fix: the reviewer pool over the day; one slot is silent on a tool for hours.",
    )
    report.figure(
        charts.pool_timeline(incident_runs["ouroboros"], episodes=incident),
        "incident-pool-ouroboros",
        "Ouroboros: the same day with every call bounded.",
    )
    report.figure(
        charts.episode_timeline(incident_runs["ouroboros"], INCIDENT_EPISODE_ID, episode=incident),
        "incident-episode-ouroboros",
        "The incident episode under ouroboros: query_code is abandoned at its bound; its "
        "loose worker runs on.",
    )

    report.heading("3. Per tool, under the ouroboros policy")
    report.table(per_tool_table(runs["ouroboros"]))
    report.figure(
        charts.rates_vs_timeout(curves),
        "rates-vs-timeout",
        "Each tool's timeout varied alone (the others at ouroboros): abandoned calls and "
        "read coverage lost to timeouts.",
    )

    report.heading(f"4. A sweep of {len(points)} policy points")
    report.figure(
        charts.pareto_front(points, named=runs, x=front_objectives[0], y=front_objectives[1]),
        "pareto",
        "p95 episode wall time against the read coverage lost to timeouts, one dot per policy "
        "point; the Pareto front on these two objectives is the red staircase with filled red "
        "dots; the named policies are coloured rings, their longest silence in the legend.",
    )
    report.table(
        front_table(
            points,
            front_objectives,
            top=None,
            collapse=False,
            assumptions=sweep_assumptions("vectorized"),
        )
    )
    report.paragraph(
        "Every point, with every column, is in sweep.csv (its pareto column: this front)."
    )

    report.heading(f"5. A recommended policy within a budget of {budget_words}")
    report.paragraph(
        "Per-tool timeouts chosen to minimise p95 episode wall time while at most "
        f"{budget_words} (95 % upper bound over episodes); duration quantiles are "
        "Kaplan–Meier estimates that count calls which never returned."
    )
    report.table(tune_budget_table(recommendation))
    report.table(tune_table)
    report.code(
        "\n".join(
            changes_lines(recommendation.baseline, recommendation.summary, against="ouroboros")
        )
    )
    report.figure(
        charts.survival_curves(corpus, recommended),
        "survival",
        "Share of each tool's calls still running after t seconds, with the recommended bounds.",
    )
    report.code(recommended.to_toml())

    report.write()
    return report
