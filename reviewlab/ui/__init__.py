"""What people look at: charts, policy widgets, the dashboard, the HTML report, the demo and
the lesson.

Charts live in :mod:`reviewlab.ui.charts` and the teaching scenes in :mod:`reviewlab.ui.scenes`.
The modules here are private; what users need is exported here and imported on first use, so
importing this package loads neither matplotlib nor ipywidgets.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.ui._answers import incident_table, incident_text, slot_table, tune_text
    from reviewlab.ui._calls import calls_table, receipts_table
    from reviewlab.ui._dashboard import dashboard_explorer, default_corpus, serve
    from reviewlab.ui._demo import DemoResult, run_demo
    from reviewlab.ui._editor import PolicyEditor, default_presets
    from reviewlab.ui._lesson import lesson_page, run_lesson
    from reviewlab.ui._report import Report
    from reviewlab.ui._sweeps import front_table, sweep_assumptions, sweep_view
    from reviewlab.ui._tables import as_table, common_assumptions, summary_table, text_table
    from reviewlab.ui._widgets import Explorer, explore, figure_png

_HOMES = {
    "DemoResult": "reviewlab.ui._demo",
    "Explorer": "reviewlab.ui._widgets",
    "PolicyEditor": "reviewlab.ui._editor",
    "Report": "reviewlab.ui._report",
    "as_table": "reviewlab.ui._tables",
    "calls_table": "reviewlab.ui._calls",
    "common_assumptions": "reviewlab.ui._tables",
    "dashboard_explorer": "reviewlab.ui._dashboard",
    "default_corpus": "reviewlab.ui._dashboard",
    "default_presets": "reviewlab.ui._editor",
    "explore": "reviewlab.ui._widgets",
    "figure_png": "reviewlab.ui._widgets",
    "front_table": "reviewlab.ui._sweeps",
    "incident_table": "reviewlab.ui._answers",
    "incident_text": "reviewlab.ui._answers",
    "lesson_page": "reviewlab.ui._lesson",
    "receipts_table": "reviewlab.ui._calls",
    "run_demo": "reviewlab.ui._demo",
    "run_lesson": "reviewlab.ui._lesson",
    "serve": "reviewlab.ui._dashboard",
    "slot_table": "reviewlab.ui._answers",
    "summary_table": "reviewlab.ui._tables",
    "sweep_assumptions": "reviewlab.ui._sweeps",
    "sweep_view": "reviewlab.ui._sweeps",
    "text_table": "reviewlab.ui._tables",
    "tune_text": "reviewlab.ui._answers",
}
"""Where each public name lives: imported on first use, so importing ``reviewlab.ui`` loads
only what is asked for."""

__all__ = [
    "DemoResult",
    "Explorer",
    "PolicyEditor",
    "Report",
    "as_table",
    "calls_table",
    "common_assumptions",
    "dashboard_explorer",
    "default_corpus",
    "default_presets",
    "explore",
    "figure_png",
    "front_table",
    "incident_table",
    "incident_text",
    "lesson_page",
    "receipts_table",
    "run_demo",
    "run_lesson",
    "serve",
    "slot_table",
    "summary_table",
    "sweep_assumptions",
    "sweep_view",
    "text_table",
    "tune_text",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
