"""Replay engines: the SimPy twin, the vectorized evaluator and the real executor, behind :func:`replay`.

Every engine assembles its answer with :func:`reviewlab.engines.result.assemble`.
"""
