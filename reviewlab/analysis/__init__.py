"""Sweeps of policies over a corpus (in-process or on Dask) and timeout recommendation.

Import from the modules: :mod:`reviewlab.analysis.sweep`, :mod:`reviewlab.analysis.tune`.
"""

__all__: list[str] = []
