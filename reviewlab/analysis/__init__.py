"""Sweeps of policies over a corpus (in-process or on Dask) and timeout recommendation."""
