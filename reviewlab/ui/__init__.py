"""What people look at: charts, policy widgets, the dashboard, the HTML report, the demo.

Import from the modules (:mod:`reviewlab.ui.charts`, :mod:`reviewlab.ui.report`, ...): importing
this package loads neither matplotlib nor ipywidgets.
"""

__all__: list[str] = []
