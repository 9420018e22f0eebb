"""Seeded synthetic corpora of reviewer episodes (``source="synthetic"``).

The generative model draws every quantity from one ``numpy.random.default_rng(seed)`` in a
fixed order: Poisson arrivals over ``slots`` slots, inherited deadlines for a share of
episodes, geometric tool rounds of 1–3 calls then a final answer, lognormal sends, per-tool
heavy-tailed durations (a lognormal body and a Pareto tail), errors, wedges (a right-censored
call that ends its episode ``wedged``) and read extents over a synthetic tree.
:func:`synth_corpus` validates each episode with the schema.

Invariants: the same seed and spec give the same episodes, and :func:`write_synthetic` the
same bytes; :func:`draw` makes every draw first and keeps about :data:`DRAW_BYTES_PER_EPISODE`
bytes per episode, then episodes (or column batches) are built and written one at a time; a
size whose draws would not fit in free memory is refused with :class:`SynthSizeError` before
anything is drawn. The model in full: docs/recording-format.md, "The synthetic corpus".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from reviewlab.recording._files import paused_gc, save_episodes
from reviewlab.recording._schema import SCHEMA_VERSION, Episode
from reviewlab.recording.synth._draws import (
    SEARCH_WORDS,
    Draws,
    SynthSpec,
    check_size,
    draw,
)


def synth_corpus(
    n: int, *, seed: int = 0, spec: SynthSpec | None = None, **overrides: Any
) -> list[Episode]:
    """``n`` synthetic episodes drawn with ``seed`` (``overrides`` replace fields of ``spec``)."""
    with paused_gc():
        return list(iter_synth(n, seed=seed, spec=spec, **overrides))


def iter_synth(
    n: int, *, seed: int = 0, spec: SynthSpec | None = None, **overrides: Any
) -> Iterator[Episode]:
    """The episodes of :func:`synth_corpus`, validated and yielded
    one at a time (bounded memory)."""
    for row in iter_synth_rows(n, seed=seed, spec=spec, **overrides):
        yield Episode.model_validate(row)


def synth_rows(
    n: int, *, seed: int = 0, spec: SynthSpec | None = None, **overrides: Any
) -> list[dict[str, Any]]:
    """The episodes of :func:`synth_corpus` as plain JSON-ready dicts (not yet validated)."""
    with paused_gc():
        return list(iter_synth_rows(n, seed=seed, spec=spec, **overrides))


def iter_synth_rows(
    n: int, *, seed: int = 0, spec: SynthSpec | None = None, **overrides: Any
) -> Iterator[dict[str, Any]]:
    """The rows of :func:`synth_rows`, one at a time: only the draws are held whole."""
    draws = draw(n, seed=seed, spec=spec, **overrides)
    for i in range(n):
        yield _episode_row(draws, i)


def _episode_row(d: Draws, i: int) -> dict[str, Any]:
    """Episode ``i`` as a dict: its tool rounds in order, a wedge ending it, else a final round."""
    spec = d.spec
    rounds: list[dict[str, Any]] = []
    wedge_seen = False
    first_round = int(d.round_first[i])
    first_send = int(d.send_first[i])
    for j in range(int(d.tool_rounds[i])):
        if wedge_seen:
            break  # a wedge ends the episode; the rest of its draws stay unused
        r = first_round + j
        calls = []
        for c in range(int(d.call_first[r]), int(d.call_first[r + 1])):
            calls.append(_call(d, c))
            if d.wedged[c]:
                wedge_seen = True
                break
        rounds.append({"send_sec": float(d.sends[first_send + j]), "calls": calls})
    if not wedge_seen:
        final_send = float(d.sends[first_send + int(d.tool_rounds[i])])
        rounds.append({"send_sec": final_send, "calls": []})
    started = spec.start + timedelta(microseconds=round(float(d.offsets[i]) * 1e6))
    return {
        "schema": SCHEMA_VERSION,
        "id": d.episode_id(i),
        "source": spec.source,
        "slot": f"slot-{int(d.slots[i])}",
        "started_at": started,
        "deadline_sec": float(d.deadlines[i]) if d.has_deadline[i] else None,
        "rounds": rounds,
        "end_reason": "wedged" if wedge_seen else "final_answer",
        "task": "",
        "meta": {"generator": "reviewlab.synth", "seed": str(d.seed)},
    }


def _call(d: Draws, c: int) -> dict[str, Any]:
    """One call dict from the c-th call draws."""
    tool = d.names[int(d.tool_index[c])]
    call: dict[str, Any] = {
        "tool": tool,
        "args": {},
        "duration_sec": float(d.durations[c]),
        "completed": True,
        "status": "ok",
        "result_chars": 0,
        "extent": None,
        "returned_after_sec": None,
    }
    path, length = d.tree[int(d.file_pick[c])]
    chars_u = float(d.chars_u[c])
    word = SEARCH_WORDS[int(d.word_pick[c])]
    if tool == "read_file":
        first = 1 + int(float(d.start_u[c]) * length)
        last = min(length, first + int(d.span[c]) - 1)
        call["args"] = {"path": path, "start_line": first, "end_line": last}
        call["extent"] = {"path": path, "start_line": first, "end_line": last}
        call["result_chars"] = 38 * (last - first + 1)
    elif tool == "list_files":
        call["args"] = {"path": path.rsplit("/", 1)[0]}
        call["result_chars"] = int(chars_u / 2)
    elif tool == "search_code":
        call["args"] = {"pattern": word, "path": "src"}
        call["result_chars"] = int(chars_u)
    else:
        call["args"] = {"query": f"callers of {word}"}
        call["result_chars"] = int(chars_u * 2)
    if d.wedged[c]:
        call.update(duration_sec=float(d.wedge_sec[c]), completed=False, result_chars=0)
    elif d.failed[c]:
        call.update(status="error", result_chars=120)
    return call


def write_synthetic(
    path: str | os.PathLike[str],
    n: int,
    seed: int = 0,
    *,
    progress: bool | None = None,
    **overrides: Any,
) -> int:
    """Generate ``n`` episodes with ``seed`` and save them atomically to ``path``; return ``n``.

    Streams: only the draws are held whole (about :data:`DRAW_BYTES_PER_EPISODE`
    bytes per episode); episodes are generated, encoded and written a batch at
    a time. A ``.parquet`` path or a directory is written straight from the
    draws as columns (:func:`reviewlab.recording.synth.synth_tables`).
    ``progress``: a tqdm bar on stderr (default: for 10,000 episodes or more
    when stderr is a terminal). An impossible ``n`` raises :class:`SynthSizeError`.
    """
    check_size(n)
    target = Path(path)
    show = (n >= 10_000 and sys.stderr.isatty()) if progress is None else bool(progress)
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=n, desc="synth", unit="episode", file=sys.stderr)
    try:
        if target.suffix == ".parquet" or target.is_dir():
            from reviewlab.recording.columnar import write_tables
            from reviewlab.recording.synth._columns import synth_tables

            tables = synth_tables(draw(n, seed=seed, **overrides))
            return write_tables(_counted(tables, bar, len), target)
        episodes = iter_synth(n, seed=seed, **overrides)
        with paused_gc():
            return save_episodes(_counted(episodes, bar, lambda _: 1), target)
    finally:
        if bar is not None:
            bar.close()


def _counted(items: Iterable[Any], bar: Any, size: Any) -> Iterator[Any]:
    for item in items:
        yield item
        if bar is not None:
            bar.update(size(item))
