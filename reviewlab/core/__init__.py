"""The decision core every engine shares: deadlines, policies,
narrowing, receipts, crediting, metrics.

Nothing here imports another layer of reviewlab. The real executor and the SimPy
twin differ only in how they wait; every decision (the bound, a call's fate,
what is credited, what a metric means) is made by the functions of this package.
Import from the modules (:mod:`reviewlab.core.policy`, :mod:`reviewlab.core.deadline`, ...).
"""

__all__: list[str] = []
