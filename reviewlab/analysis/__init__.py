"""Sweeps of policies over a corpus (in-process or on Dask), timeout recommendation, incidents.

Import from the modules: :mod:`reviewlab.analysis.sweep` (with
:mod:`~reviewlab.analysis.known_tools`), :mod:`reviewlab.analysis.tune` (with
:mod:`~reviewlab.analysis.budgets` and :mod:`~reviewlab.analysis.tails`),
:mod:`reviewlab.analysis.incident`.
"""

__all__: list[str] = []
