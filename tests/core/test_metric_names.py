"""The summary's figures are declared once (:mod:`reviewlab.core._metric_names`)."""

from __future__ import annotations

import subprocess
import sys

from reviewlab.core import _metric_names as metric_names
from reviewlab.core import _metrics as metrics
from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.ui import _numbers as numbers
from reviewlab.ui import _tables as tables


def test_the_declarations_load_no_numpy_or_pandas() -> None:
    """Importing the declarations in a fresh interpreter loads neither NumPy nor pandas."""
    probe = (
        "import sys\n"
        "from reviewlab.core import _metric_names\n"
        "print('numpy' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_keys_and_labels_name_one_figure_each() -> None:
    """No key and no label is declared twice, so a label reads back to one key."""
    keys = [metric.key for metric in metric_names.METRICS]
    labels = [metric.label for metric in metric_names.METRICS]
    assert len(set(keys)) == len(keys) and len(set(labels)) == len(labels)


def test_the_summary_computes_exactly_the_declared_keys_in_order() -> None:
    """An empty replay's summary has the declared summary keys, in their order, and the number
    style writes each under its declared label and unit."""
    summary = metrics.summary_from_totals(
        metrics.SummaryTotals(
            episodes=0,
            calls=0,
            dispatched=0,
            abandoned=0,
            bounded=0,
            by_deadline=0,
            requested_lines=0,
            credited_lines=0,
            timeout_lost_lines=0,
            wall_quantiles=(0.0, 0.0, 0.0),
            wall_max_sec=0.0,
            max_silence_sec=0.0,
            zombie_finite_sec=0.0,
            wedged_zombies=0,
            peak_loose_workers=0,
            hedges=0,
        )
    )
    assert tuple(summary) == metric_names.SUMMARY_KEYS == SUMMARY_KEYS
    for metric in metric_names.METRICS:
        assert numbers.label_of(metric.key) == metric.label
        assert numbers.column_kind(metric.key) == metric.unit
        assert numbers.column_kind(metric.label) == metric.unit


def test_the_objectives_are_the_figures_saved_and_paid_name() -> None:
    """``changes`` names, by default, exactly the figures declared as objectives: wall p95 going
    down is saved, the deadline-bound share (not an objective) is not named."""
    before = {"wall_p95_sec": 60.0, "deadline_bound_share": 0.1, "wedged_zombies": 0}
    after = {"wall_p95_sec": 30.0, "deadline_bound_share": 0.5, "wedged_zombies": 1}
    saved, paid = tables.changes(before, after)
    assert saved == ["wall p95 60 s → 30 s"]
    assert paid == ["wedged zombies 0 → 1"]
