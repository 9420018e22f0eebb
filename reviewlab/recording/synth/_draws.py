"""The draws of a synthetic corpus: the generator's knobs, and every random number in its order.

:func:`draw` makes every draw of a corpus of ``n`` episodes from one
``numpy.random.default_rng(seed)`` in the fixed order the generative model of
:mod:`reviewlab.recording.synth` states (so the same seed and spec give the
same corpus), and keeps only the arrays the episodes need (about
:data:`DRAW_BYTES_PER_EPISODE` bytes per episode) in a :class:`Draws`. Two
writers read it: :mod:`reviewlab.recording.synth` (episode dicts, validated
one at a time) and :mod:`reviewlab.recording.synth._columns` (Arrow columns).
:func:`check_size` refuses a size that is not a count, or whose draws would not
fit in free memory, with a :class:`SynthSizeError`, before anything is drawn.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np

DRAW_BYTES_PER_EPISODE: Final = 600
"""Upper estimate of the draws' memory per episode (about 6 calls of 70 bytes, 5 rounds)."""
MAX_EPISODES: Final = 100_000_000
"""The most episodes one file may hold (ids have six digits and more, but a file has to end)."""


class SynthSizeError(ValueError):
    """A corpus size that is not a count, or whose draws would not fit in memory."""


@dataclass(frozen=True)
class ToolProfile:
    """The duration model of one tool."""

    weight: float
    """Relative frequency of the tool among calls."""
    median_sec: float
    """Median of the lognormal body."""
    sigma: float
    """Shape of the lognormal body (std of log-duration)."""
    tail_p: float
    """Probability a completed call comes from the Pareto tail."""
    tail_alpha: float
    """Pareto index of the tail (smaller: heavier)."""
    wedge_p: float
    """Probability the call never returns (a right-censored wedge)."""


TOOLS: Mapping[str, ToolProfile] = {
    "read_file": ToolProfile(
        weight=0.50, median_sec=0.04, sigma=0.9, tail_p=0.02, tail_alpha=1.4, wedge_p=0.0005
    ),
    "list_files": ToolProfile(
        weight=0.15, median_sec=0.03, sigma=0.8, tail_p=0.02, tail_alpha=1.5, wedge_p=0.0002
    ),
    "search_code": ToolProfile(
        weight=0.20, median_sec=0.6, sigma=1.0, tail_p=0.03, tail_alpha=1.2, wedge_p=0.001
    ),
    "query_code": ToolProfile(
        weight=0.15, median_sec=2.0, sigma=1.1, tail_p=0.05, tail_alpha=1.1, wedge_p=0.004
    ),
}
"""Default per-tool profiles: reads and listings are fast, ``query_code`` slow and wedge-prone."""


@dataclass(frozen=True)
class SynthSpec:
    """Every knob of the generator (see the module docstring for the model)."""

    start: datetime = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)
    mean_gap_sec: float = 45.0
    slots: int = 8
    deadline_share: float = 0.3
    deadline_choices_sec: tuple[float, ...] = (300.0, 600.0, 900.0, 1800.0)
    mean_tool_rounds: float = 4.0
    max_tool_rounds: int = 30
    calls_per_round_p: tuple[float, float, float] = (0.6, 0.25, 0.15)
    send_median_sec: float = 2.0
    send_sigma: float = 0.5
    tools: Mapping[str, ToolProfile] = field(default_factory=lambda: dict(TOOLS))
    tail_scale: float = 10.0
    max_duration_sec: float = 3000.0
    error_p: float = 0.02
    wedge_observed_sec: tuple[float, float] = (1800.0, 21600.0)
    files: int = 200
    id_prefix: str = "syn"
    source: str = "synthetic"
    arg_effect: float = 0.0
    """How strongly a call's arguments set its duration (0: not at all, the default; the draws
    and bytes are then unchanged). A completed ``read_file`` lasts ``(lines / 120) **
    arg_effect`` times its drawn duration (``lines`` read, 120 the mean); a ``search_code`` or
    ``query_code`` call ``((word + 1) / 4.5) ** arg_effect`` times, ``word`` the index of its
    search word in :data:`SEARCH_WORDS` (later words are costlier patterns). No draw is added."""

    def __post_init__(self) -> None:
        if self.start.tzinfo is None:
            raise ValueError("start must carry a time zone")
        for name in ("mean_gap_sec", "mean_tool_rounds", "send_median_sec", "max_duration_sec"):
            value = getattr(self, name)
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite positive number, got {value!r}")
        if self.slots < 1 or self.files < 1:
            raise ValueError("slots and files must be at least 1")
        if not 0.0 <= self.deadline_share <= 1.0:
            raise ValueError(f"deadline_share must be in [0, 1], got {self.deadline_share!r}")
        if abs(sum(self.calls_per_round_p) - 1.0) > 1e-9:
            raise ValueError("calls_per_round_p must sum to 1")
        if not self.tools:
            raise ValueError("tools must name at least one tool")
        if not np.isfinite(self.arg_effect) or self.arg_effect < 0:
            raise ValueError(f"arg_effect must be finite and >= 0, got {self.arg_effect!r}")


def file_tree(files: int, seed: int) -> list[tuple[str, int]]:
    """The synthetic workspace: ``files`` (path, line count) pairs, seeded."""
    rng = np.random.default_rng([seed, 0x7EE])
    packages = ("core", "api", "storage", "billing", "inventory", "auth", "cli", "util")
    lengths = np.maximum(5, np.round(rng.lognormal(np.log(240.0), 0.8, files))).astype(int)
    tree = []
    for index in range(files):
        package = packages[index % len(packages)]
        tree.append((f"src/{package}/module_{index:03d}.py", int(lengths[index])))
    return tree


SEARCH_WORDS = ("timeout", "deadline", "retry", "lock", "cache", "price", "stock", "token")


def check_size(n: int) -> None:
    """Refuse (:class:`SynthSizeError`) an ``n`` that is not a count or whose draws cannot fit."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise SynthSizeError(f"n must be a whole number of episodes, got {n!r}")
    if n < 0:
        raise SynthSizeError(f"n must not be negative, got {n!r}")
    need = int(n) * DRAW_BYTES_PER_EPISODE
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not Linux: only the hard cap applies
        available = None
    if n > MAX_EPISODES or (available is not None and need > available):
        room = "" if available is None else f" ({available / 2**30:.1f} GiB free)"
        raise SynthSizeError(
            f"n={n:,} episodes needs about {need / 2**30:.1f} GiB of draws in memory{room}; "
            f"write at most {min(MAX_EPISODES, (available or need) // DRAW_BYTES_PER_EPISODE):,} "
            "per file (use several seeds for more)"
        )


def draw(n: int, *, seed: int = 0, spec: SynthSpec | None = None, **overrides: Any) -> Draws:
    """Every random draw of a corpus of ``n`` episodes, in the generator's fixed order."""
    check_size(n)
    spec = dataclasses.replace(spec or SynthSpec(), **overrides)
    rng = np.random.default_rng(seed)
    tree = file_tree(spec.files, seed)

    # Episode-level draws.
    gaps = rng.exponential(spec.mean_gap_sec, n)
    offsets = np.cumsum(gaps) - (gaps[0] if n else 0.0)
    del gaps
    slots = rng.integers(1, spec.slots + 1, n)
    has_deadline = rng.random(n) < spec.deadline_share
    deadlines = rng.choice(np.asarray(spec.deadline_choices_sec, dtype=float), n)
    tool_rounds = np.minimum(rng.geometric(1.0 / spec.mean_tool_rounds, n), spec.max_tool_rounds)

    # Round-level draws (tool rounds, then one final round per episode).
    total_rounds = int(tool_rounds.sum())
    calls_per_round = rng.choice(np.array([1, 2, 3]), total_rounds, p=spec.calls_per_round_p)
    sends = np.round(
        rng.lognormal(np.log(spec.send_median_sec), spec.send_sigma, total_rounds + n), 6
    )

    # Call-level draws (intermediates dropped as soon as used: they dominate the memory).
    total_calls = int(calls_per_round.sum())
    names = list(spec.tools)
    profiles = [spec.tools[name] for name in names]
    weights = np.array([p.weight for p in profiles], dtype=float)
    tool_index = rng.choice(len(names), total_calls, p=weights / weights.sum())
    median = np.array([p.median_sec for p in profiles])[tool_index]
    body = rng.lognormal(np.log(median), np.array([p.sigma for p in profiles])[tool_index])
    alpha = np.array([p.tail_alpha for p in profiles])[tool_index]
    tail = spec.tail_scale * median * (1.0 + rng.pareto(alpha))
    del alpha, median
    in_tail = rng.random(total_calls) < np.array([p.tail_p for p in profiles])[tool_index]
    durations = np.where(in_tail, tail, body)
    del tail, body, in_tail
    durations = np.maximum(np.round(np.minimum(durations, spec.max_duration_sec), 6), 1e-6)
    wedged = rng.random(total_calls) < np.array([p.wedge_p for p in profiles])[tool_index]
    low, high = spec.wedge_observed_sec
    wedge_sec = np.round(rng.uniform(low, high, total_calls), 3)
    failed = rng.random(total_calls) < spec.error_p
    file_pick = rng.integers(0, len(tree), total_calls).astype(np.int32)
    start_u = rng.random(total_calls)
    span = rng.geometric(1.0 / 120.0, total_calls).astype(np.int32)
    chars_u = rng.lognormal(np.log(1500.0), 0.9, total_calls)
    word_pick = rng.integers(0, len(SEARCH_WORDS), total_calls).astype(np.int8)

    round_first = np.cumsum(tool_rounds) - tool_rounds
    call_first = np.concatenate([[0], np.cumsum(calls_per_round)]).astype(np.int64)
    draws = Draws(
        n=n,
        seed=seed,
        spec=spec,
        tree=tree,
        names=names,
        offsets=offsets,
        slots=slots,
        has_deadline=has_deadline,
        deadlines=deadlines,
        tool_rounds=tool_rounds,
        round_first=round_first,
        send_first=round_first + np.arange(n),
        call_first=call_first,
        sends=sends,
        tool_index=tool_index.astype(np.int16),
        durations=durations,
        wedged=wedged,
        wedge_sec=wedge_sec,
        failed=failed,
        file_pick=file_pick,
        start_u=start_u,
        span=span,
        chars_u=chars_u,
        word_pick=word_pick,
    )
    return _with_arg_effect(draws) if spec.arg_effect else draws


def _with_arg_effect(draws: Draws) -> Draws:
    """``draws`` with the durations scaled by the calls' arguments (:attr:`SynthSpec.arg_effect`),
    from the draws the call dicts are built from (so a read's lines are the lines its extent
    holds)."""
    spec, durations = draws.spec, draws.durations
    tool = np.asarray(draws.names, dtype=object)[draws.tool_index]
    lengths = np.array([length for _, length in draws.tree], dtype=np.int64)[draws.file_pick]
    first = 1 + (draws.start_u * lengths).astype(np.int64)
    lines = np.minimum(lengths, first + draws.span - 1) - first + 1
    factor = np.ones(durations.size)
    reads = tool == "read_file"
    factor[reads] = (lines[reads] / 120.0) ** spec.arg_effect
    searches = (tool == "search_code") | (tool == "query_code")
    factor[searches] = ((draws.word_pick[searches] + 1.0) / 4.5) ** spec.arg_effect
    scaled = np.minimum(durations * factor, spec.max_duration_sec)
    return replace(draws, durations=np.maximum(np.round(scaled, 6), 1e-6))


@dataclass(frozen=True)
class Draws:
    """The draws of one corpus, aligned per episode, round and call (see the module docstring).

    ``round_first[i]``: episode ``i``'s first tool round; ``send_first[i]``: its
    first send (its final round's send follows its tool rounds');
    ``call_first[r]``: round ``r``'s first call (``call_first[-1]`` is the total).
    """

    n: int
    seed: int
    spec: SynthSpec
    tree: list[tuple[str, int]]
    names: list[str]
    offsets: np.ndarray
    slots: np.ndarray
    has_deadline: np.ndarray
    deadlines: np.ndarray
    tool_rounds: np.ndarray
    round_first: np.ndarray
    send_first: np.ndarray
    call_first: np.ndarray
    sends: np.ndarray
    tool_index: np.ndarray
    durations: np.ndarray
    wedged: np.ndarray
    wedge_sec: np.ndarray
    failed: np.ndarray
    file_pick: np.ndarray
    start_u: np.ndarray
    span: np.ndarray
    chars_u: np.ndarray
    word_pick: np.ndarray

    def episode_id(self, i: int) -> str:
        """The id of episode ``i``."""
        return f"{self.spec.id_prefix}-{self.seed}-{i:06d}"
