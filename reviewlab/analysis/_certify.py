"""Certified timeouts: per tool, the shortest timeout ``t`` with ``P(a call finishes within t)
>= guarantee``, stated with a finite-sample confidence, from censored recordings.

A tool's calls are independent draws of its duration; a call that never returned is seen as
``+inf``, so every order statistic seen is at least the true one, and the ``k``-th with a
binomial tail ``P(Bin(n, p) >= k) <= 1 - confidence`` is a distribution-free upper bound of
the ``p``-quantile (the training-conditional split-conformal bound, Vovk 2012, with censored
scores at ``+inf``; exact under Type-I censoring above ``t``). No distribution is assumed and
censored calls are never dropped. :func:`certify` says when a tool cannot support the
guarantee (too few calls: :func:`calls_needed`; too many that never returned). The proof:
docs/metrics.md, "Certified timeouts".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from reviewlab.core._errors import ParameterError

DEFAULT_GUARANTEE_CONFIDENCE = 0.999
"""The confidence a certificate is stated with unless told otherwise. High on purpose: a tuner
certifies several tools per corpus and many corpora over time, and a claim that fails one time
in twenty fails somewhere every day (docs/metrics.md, "Certified timeouts")."""


def check_guarantee(name: str, value: object) -> float:
    """``value`` as a probability strictly between 0 and 1, else a ``ValueError`` naming
    ``name``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 < value < 1.0
    ):
        raise ParameterError(
            name, f"expected a probability strictly between 0 and 1, got {value!r}"
        )
    return float(value)


def binomial_tail(n: int, p: float) -> np.ndarray:
    """``P(Bin(n, p) >= k)`` for ``k = 0 … n`` (an array of ``n + 1``), computed in log space."""
    if n < 0:
        raise ParameterError("n", f"expected a count, got {n!r}")
    if n == 0:
        return np.ones(1)
    j = np.arange(n + 1, dtype=float)
    # log C(n, j) by the product (n - j + 1) / j, accumulated.
    log_choose = np.concatenate(([0.0], np.cumsum(np.log((n - j[1:] + 1.0) / j[1:]))))
    log_pmf = log_choose + j * math.log(p) + (n - j) * math.log1p(-p)
    pmf = np.exp(log_pmf - log_pmf.max())
    tail = np.cumsum(pmf[::-1])[::-1]
    return np.minimum(tail / tail[0], 1.0)


def certify_rank(n: int, guarantee: float, confidence: float) -> int | None:
    """The smallest rank ``k`` (1-based) with ``P(Bin(n, guarantee) >= k) <= 1 - confidence``,
    or ``None`` when no rank up to ``n`` qualifies."""
    check_guarantee("guarantee", guarantee)
    check_guarantee("confidence", confidence)
    tail = binomial_tail(n, guarantee)
    ok = np.flatnonzero(tail[1:] <= 1.0 - confidence)
    return int(ok[0]) + 1 if ok.size else None


def calls_needed(guarantee: float, confidence: float) -> int:
    """The fewest calls that can certify anything: the smallest ``n`` with
    ``guarantee ** n <= 1 - confidence`` (then ``k = n``, every call completed)."""
    check_guarantee("guarantee", guarantee)
    check_guarantee("confidence", confidence)
    return math.ceil(math.log1p(-confidence) / math.log(guarantee) - 1e-12)


class Certificate(NamedTuple):
    """One tool's certified timeout and the evidence it rests on."""

    calls: int
    """Calls of the tool in the corpus (``n``)."""
    censored: int
    """Of them, calls that never returned while watched (seen as ``+inf``)."""
    guarantee: float
    """``p``: the share of calls the timeout lets finish."""
    confidence: float
    """The probability, over corpora like this one, that the claim holds."""
    rank: int | None
    """``k``: the order statistic used (``None``: too few calls)."""
    timeout_sec: float
    """``Y_(k)``: the certified timeout (``inf``: the data cannot support the guarantee)."""
    reason: str
    """Why the guarantee cannot be certified (empty when it is)."""

    @property
    def certified(self) -> bool:
        """Whether the data support the guarantee."""
        return math.isfinite(self.timeout_sec)


def certify(
    durations: Sequence[float] | np.ndarray,
    completed: Sequence[bool] | np.ndarray,
    guarantee: float,
    confidence: float = DEFAULT_GUARANTEE_CONFIDENCE,
) -> Certificate:
    """The certified timeout of one tool's recorded calls (see the module docstring)."""
    guarantee = check_guarantee("guarantee", guarantee)
    confidence = check_guarantee("confidence", confidence)
    seen = np.asarray(durations, dtype=float)
    done = np.asarray(completed, dtype=bool)
    if seen.shape != done.shape or seen.ndim != 1:
        raise ValueError("certify: durations and completed must be 1-D and of equal length")
    n = int(seen.size)
    censored = int(n - done.sum())
    rank = certify_rank(n, guarantee, confidence)
    if rank is None:
        need = calls_needed(guarantee, confidence)
        return Certificate(
            n,
            censored,
            guarantee,
            confidence,
            None,
            math.inf,
            f"{n} call(s); certifying {guarantee:g} at confidence {confidence:g} needs at "
            f"least {need}",
        )
    scores = np.sort(np.where(done, seen, math.inf))
    timeout = float(scores[rank - 1])
    reason = ""
    if math.isinf(timeout):
        reason = (
            f"{censored} of {n} call(s) never returned while watched; the {rank}th shortest "
            "is one of them, so no finite timeout is certified"
        )
    return Certificate(n, censored, guarantee, confidence, rank, timeout, reason)
