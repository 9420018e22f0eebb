"""Seeded synthetic corpora of reviewer episodes (``source="synthetic"``).

The generative model, one draw per quantity, all from one
``numpy.random.default_rng(seed)`` in a fixed order (so the same seed and spec
give the same episodes, and :func:`write_synthetic` the same bytes):

* **Arrivals.** Review requests arrive as a Poisson process: gaps between
  consecutive ``started_at`` are exponential with mean ``mean_gap_sec``,
  starting at ``start``. Each episode is served by a slot drawn uniformly from
  ``slot-1 … slot-<slots>``.
* **Inherited deadlines.** A share ``deadline_share`` of episodes inherits a
  deadline, drawn uniformly from ``deadline_choices_sec``; the rest have none.
* **Rounds.** An episode has ``G`` tool rounds with ``G`` geometric (mean
  ``mean_tool_rounds``, at most ``max_tool_rounds``) and then a final-answer
  round without calls. A tool round asks for 1, 2 or 3 calls with
  probabilities ``calls_per_round_p``. Every round's model send takes a
  lognormal time (median ``send_median_sec``, shape ``send_sigma``).
* **Calls.** The tool is drawn with the weights of :data:`TOOLS`. A completed
  call's duration is heavy-tailed: with probability ``tail_p`` a Pareto draw
  (scale ``tail_scale × median``, index ``tail_alpha``), else the lognormal
  body (``median_sec``, ``sigma``); capped at ``max_duration_sec``. With
  probability ``error_p`` the tool raised (``status="error"``).
* **Wedges.** With the tool's ``wedge_p`` the call never returns: it is
  recorded right-censored (``completed=False``) with an observed duration
  uniform in ``wedge_observed_sec``, the episode ends there
  (``end_reason="wedged"``) and the rest of its draws are unused.
* **Read extents.** ``read_file`` reads a file of a synthetic tree of
  ``files`` paths whose lengths are lognormal (median 240 lines); the extent
  starts uniformly in the file and spans a geometric number of lines (mean 120),
  clipped to the file. ``result_chars`` ≈ 38 characters per line read.

Durations are rounded to microseconds. :func:`synth_corpus` builds the
episodes as plain dicts and validates each with the schema, so a generated
corpus is always loadable.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from reviewlab.recording.files import paused_gc, save_episodes
from reviewlab.recording.schema import SCHEMA_VERSION, Episode

__all__ = ["TOOLS", "SynthSpec", "ToolProfile", "file_tree", "synth_corpus", "write_synthetic"]


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


_SEARCH_WORDS = ("timeout", "deadline", "retry", "lock", "cache", "price", "stock", "token")


def synth_corpus(
    n: int, *, seed: int = 0, spec: SynthSpec | None = None, **overrides: Any
) -> list[Episode]:
    """``n`` synthetic episodes drawn with ``seed`` (``overrides`` replace fields of ``spec``)."""
    with paused_gc():
        return [
            Episode.model_validate(row) for row in synth_rows(n, seed=seed, spec=spec, **overrides)
        ]


def synth_rows(
    n: int, *, seed: int = 0, spec: SynthSpec | None = None, **overrides: Any
) -> list[dict[str, Any]]:
    """The episodes of :func:`synth_corpus` as plain JSON-ready dicts (not yet validated)."""
    if n < 0:
        raise ValueError(f"n must not be negative, got {n!r}")
    spec = dataclasses.replace(spec or SynthSpec(), **overrides)
    rng = np.random.default_rng(seed)
    tree = file_tree(spec.files, seed)

    # Episode-level draws.
    gaps = rng.exponential(spec.mean_gap_sec, n)
    offsets = np.cumsum(gaps) - (gaps[0] if n else 0.0)
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

    # Call-level draws.
    total_calls = int(calls_per_round.sum())
    names = list(spec.tools)
    profiles = [spec.tools[name] for name in names]
    weights = np.array([p.weight for p in profiles], dtype=float)
    tool_index = rng.choice(len(names), total_calls, p=weights / weights.sum())
    median = np.array([p.median_sec for p in profiles])[tool_index]
    sigma = np.array([p.sigma for p in profiles])[tool_index]
    body = rng.lognormal(np.log(median), sigma)
    alpha = np.array([p.tail_alpha for p in profiles])[tool_index]
    tail = spec.tail_scale * median * (1.0 + rng.pareto(alpha))
    in_tail = rng.random(total_calls) < np.array([p.tail_p for p in profiles])[tool_index]
    durations = np.round(np.minimum(np.where(in_tail, tail, body), spec.max_duration_sec), 6)
    durations = np.maximum(durations, 1e-6)
    wedged = rng.random(total_calls) < np.array([p.wedge_p for p in profiles])[tool_index]
    low, high = spec.wedge_observed_sec
    wedge_sec = np.round(rng.uniform(low, high, total_calls), 3)
    failed = rng.random(total_calls) < spec.error_p
    file_pick = rng.integers(0, len(tree), total_calls)
    start_u = rng.random(total_calls)
    span = rng.geometric(1.0 / 120.0, total_calls)
    chars_u = rng.lognormal(np.log(1500.0), 0.9, total_calls)
    word_pick = rng.integers(0, len(_SEARCH_WORDS), total_calls)

    with paused_gc():
        return _assemble(
            n,
            seed,
            spec,
            tree,
            names,
            offsets,
            slots,
            has_deadline,
            deadlines,
            tool_rounds,
            calls_per_round,
            sends,
            tool_index,
            durations,
            wedged,
            wedge_sec,
            failed,
            file_pick,
            start_u,
            span,
            chars_u,
            word_pick,
        )


def _assemble(
    n: int,
    seed: int,
    spec: SynthSpec,
    tree: list[tuple[str, int]],
    names: list[str],
    offsets: np.ndarray,
    slots: np.ndarray,
    has_deadline: np.ndarray,
    deadlines: np.ndarray,
    tool_rounds: np.ndarray,
    calls_per_round: np.ndarray,
    sends: np.ndarray,
    tool_index: np.ndarray,
    durations: np.ndarray,
    wedged: np.ndarray,
    wedge_sec: np.ndarray,
    failed: np.ndarray,
    file_pick: np.ndarray,
    start_u: np.ndarray,
    span: np.ndarray,
    chars_u: np.ndarray,
    word_pick: np.ndarray,
) -> list[dict[str, Any]]:
    """Walk the draws in order and build one dict per episode (a wedge ends its episode)."""
    rows: list[dict[str, Any]] = []
    round_cursor = 0
    call_cursor = 0
    send_cursor = 0
    for i in range(n):
        rounds: list[dict[str, Any]] = []
        end_reason = "final_answer"
        wedge_seen = False
        for _ in range(int(tool_rounds[i])):
            k = int(calls_per_round[round_cursor])
            round_cursor += 1
            send = float(sends[send_cursor])
            send_cursor += 1
            if wedge_seen:
                call_cursor += k  # draws stay aligned whatever happened earlier
                continue
            calls = []
            for c in range(call_cursor, call_cursor + k):
                if wedge_seen:
                    continue
                calls.append(
                    _call(
                        c,
                        names[int(tool_index[c])],
                        durations,
                        wedged,
                        wedge_sec,
                        failed,
                        tree,
                        file_pick,
                        start_u,
                        span,
                        chars_u,
                        word_pick,
                    )
                )
                wedge_seen = bool(wedged[c])
            call_cursor += k
            rounds.append({"send_sec": send, "calls": calls})
        final_send = float(sends[send_cursor])
        send_cursor += 1
        if wedge_seen:
            end_reason = "wedged"
        else:
            rounds.append({"send_sec": final_send, "calls": []})
        started = spec.start + timedelta(microseconds=round(float(offsets[i]) * 1e6))
        rows.append(
            {
                "schema": SCHEMA_VERSION,
                "id": f"{spec.id_prefix}-{seed}-{i:06d}",
                "source": spec.source,
                "slot": f"slot-{int(slots[i])}",
                "started_at": started,
                "deadline_sec": float(deadlines[i]) if has_deadline[i] else None,
                "rounds": rounds,
                "end_reason": end_reason,
                "task": "",
                "meta": {"generator": "reviewlab.synth", "seed": str(seed)},
            }
        )
    return rows


def _call(
    c: int,
    tool: str,
    durations: np.ndarray,
    wedged: np.ndarray,
    wedge_sec: np.ndarray,
    failed: np.ndarray,
    tree: list[tuple[str, int]],
    file_pick: np.ndarray,
    start_u: np.ndarray,
    span: np.ndarray,
    chars_u: np.ndarray,
    word_pick: np.ndarray,
) -> dict[str, Any]:
    """One call dict from the c-th call draws."""
    call: dict[str, Any] = {
        "tool": tool,
        "args": {},
        "duration_sec": float(durations[c]),
        "completed": True,
        "status": "ok",
        "result_chars": 0,
        "extent": None,
        "returned_after_sec": None,
    }
    path, length = tree[int(file_pick[c])]
    if tool == "read_file":
        first = 1 + int(start_u[c] * length)
        last = min(length, first + int(span[c]) - 1)
        call["args"] = {"path": path, "start_line": first, "end_line": last}
        call["extent"] = {"path": path, "start_line": first, "end_line": last}
        call["result_chars"] = 38 * (last - first + 1)
    elif tool == "list_files":
        call["args"] = {"path": path.rsplit("/", 1)[0]}
        call["result_chars"] = int(chars_u[c] / 2)
    elif tool == "search_code":
        call["args"] = {"pattern": _SEARCH_WORDS[int(word_pick[c])], "path": "src"}
        call["result_chars"] = int(chars_u[c])
    else:
        call["args"] = {"query": f"callers of {_SEARCH_WORDS[int(word_pick[c])]}"}
        call["result_chars"] = int(chars_u[c] * 2)
    if wedged[c]:
        call.update(duration_sec=float(wedge_sec[c]), completed=False, result_chars=0)
    elif failed[c]:
        call.update(status="error", result_chars=120)
    return call


def write_synthetic(path: str | os.PathLike[str], n: int, seed: int = 0, **overrides: Any) -> int:
    """Generate ``n`` episodes with ``seed`` and save them atomically to ``path``; return ``n``."""
    return save_episodes(synth_corpus(n, seed=seed, **overrides), path)
