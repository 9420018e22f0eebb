"""The engine-conformance suite: every engine honours every policy part or refuses it by name.

For every policy part (:data:`PART_POLICIES`: the per-tool table, the floor, argument
overrides, the deadline clamp, each narrowing, idle timeouts, hedges, the breaker) × censoring
mode × reaction, an entry point (:data:`ENTRY_POINTS`: the vectorized engine, the real engine,
the CLI's ``replay``; :func:`replay_engine` for any engine object through the dispatch,
:func:`reviewlab.testing._summaries.replay_on_partitions` for ``Cluster(client)``; or a user's
own) replays :func:`conformance_corpus` and must either agree with the twin call for call
(:func:`assert_same_calls`; an engine without frames, summary for summary) or raise a
``ValueError`` that names the part. :func:`check` runs one cell and returns its
:class:`Verdict`; a new engine or a new policy part is done when every cell passes. The corpus
is built so that every call ends at least two recorded seconds from any bound, which keeps the
real engine's clock jitter out of the answers; its closest deadline window is 0.2 s below the
tool timeout (the ``deadline``'s, exactly). Exactly the calls an engine's stated tie tolerance
covers (:func:`tie_calls`) may read ``tool_timeout`` where the twin reads ``deadline``.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from reviewlab.core._policy import Policy
from reviewlab.core._vocab import CENSORING_MODES, REACTIONS
from reviewlab.engines._engine import Engine, Real, engine_of
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode
from reviewlab.testing._conformance_corpus import PART_POLICIES, conformance_corpus
from reviewlab.testing._overlap import side_by_side
from reviewlab.testing._summaries import assert_summary_conforms

EXACT_COLUMNS = (
    "round",
    "tool",
    "outcome",
    "source_gap",
    "bound_by",
    "requested_lines",
    "credited_lines",
)
"""Call-frame columns every entry point must give exactly as the twin does."""
TIMED_COLUMNS = ("bound_sec", "wait_sec")
"""Call-frame columns compared within a tolerance (the real clock is late by its jitter)."""
REAL_TIME_SCALE = 0.1
"""The real engine's ``time_scale`` in the suite: one recorded second is 100 ms of real time, so
every call of the corpus ends at least 200 ms of real time from its bound."""
NEAR_TIE_SEC = 0.2
"""How far the corpus's closest deadline window (``near-tie``) is below its tool timeout: with a
tie tolerance (``assumptions["tie_sec"]``) shorter than this every engine must say ``deadline``."""
REAL_TOLERANCE_SEC = 2.5
"""How far (in recorded seconds, 250 ms of real time) the real engine's times may be from the
twin's: its clock is late by the machine's scheduling jitter, which adds up along an episode
(outcomes, bound terms and credited lines are still compared exactly)."""

def replay_engine(engine: str | Engine) -> Callable[..., Any]:
    """An entry point that calls :func:`reviewlab.replay` with ``engine`` (a name or an engine
    object; the real engine at :data:`REAL_TIME_SCALE` unless the object sets a scale) and
    returns its calls, or the summary of an engine without frames."""

    def run(
        corpus: list[Episode], policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> pd.DataFrame | dict[str, Any]:
        from reviewlab.engines._replay import replay

        chosen = engine_of(engine)
        if isinstance(chosen, Real) and chosen.time_scale is None:
            chosen = chosen.with_options(time_scale=REAL_TIME_SCALE)
        result = replay(
            corpus, policy, engine=chosen, censored=censored, reaction=reaction, seed=seed
        )
        if not isinstance(result, ReplayResult):
            return dict(result.summary)
        calls = result.calls
        calls.attrs["tie_sec"] = float(result.assumptions.get("tie_sec", 0.0))
        return calls

    run.__name__ = f"replay_{engine if isinstance(engine, str) else type(engine).__name__}"
    return run


def replay_cli(
    corpus: list[Episode], policy: Policy, *, censored: str, reaction: str, seed: int
) -> pd.DataFrame:
    """The CLI's ``reviewlab replay`` on the corpus and the policy as files, its call frame read
    back from ``-o``; a non-zero exit is a ``ValueError`` carrying what it printed."""
    from reviewlab.cli import main
    from reviewlab.recording._files import save_episodes

    with tempfile.TemporaryDirectory(prefix="reviewlab-conformance-") as folder:
        where = Path(folder)
        save_episodes(corpus, where / "corpus.jsonl")
        policy.save(where / "policy.toml")
        out = where / "calls.parquet"
        argv = [
            "replay",
            str(where / "corpus.jsonl"),
            "--policy",
            str(where / "policy.toml"),
            "--censored",
            censored,
            "--reaction",
            reaction,
            "-o",
            str(out),
        ]
        if censored == "impute" or policy.hedges:  # the CLI takes --seed only where it draws
            argv += ["--seed", str(seed)]
        printed, errors = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
            try:
                status = main(argv)
            except SystemExit as exit_:
                status = exit_.code if isinstance(exit_.code, int) else 2
        if status:
            raise ValueError(f"reviewlab replay exited {status}: {errors.getvalue().strip()}")
        return pd.read_parquet(out)


ENTRY_POINTS: dict[str, Callable[..., Any]] = {
    "vectorized": replay_engine("vectorized"),
    "real": replay_engine("real"),
    "cli": replay_cli,
}
"""The entry points held to the twin (``replay(engine="twin")``), by name."""


# -- comparing ----------------------------------------------------------------


def _keyed(calls: pd.DataFrame) -> pd.DataFrame:
    return calls.sort_values(["episode_id", "call_index"], kind="stable").reset_index(drop=True)


def assert_same_calls(
    reference: pd.DataFrame,
    other: pd.DataFrame,
    *,
    tolerance_sec: float = 0.0,
    what: str = "",
    ties: Collection[tuple[str, int]] = (),
) -> None:
    """``other`` has the calls of ``reference`` (by episode and call index) with the same
    :data:`EXACT_COLUMNS` and :data:`TIMED_COLUMNS` within ``tolerance_sec`` (``inf`` only with
    ``inf``, NaN only with NaN); the calls in ``ties`` (:func:`tie_calls`) may read
    ``tool_timeout`` where ``reference`` reads ``deadline``. An ``AssertionError`` names the
    first call that differs."""
    left, right = _keyed(reference), _keyed(other)
    keys = ["episode_id", "call_index"]
    left_keys = list(left[keys].itertuples(index=False, name=None))
    right_keys = list(right[keys].itertuples(index=False, name=None))
    if left_keys != right_keys:
        missing = sorted(set(left_keys) - set(right_keys))[:3]
        extra = sorted(set(right_keys) - set(left_keys))[:3]
        raise AssertionError(f"{what}: other calls: missing {missing}, extra {extra}")
    for column in EXACT_COLUMNS:
        a, b = left[column].to_numpy(dtype=object), right[column].to_numpy(dtype=object)
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            tie = column == "bound_by" and (x, y) == ("deadline", "tool_timeout")
            if not _same(x, y) and not (tie and left_keys[index] in ties):
                raise AssertionError(f"{what}: call {left_keys[index]} {column}: {x!r} != {y!r}")
    for column in TIMED_COLUMNS:
        a = left[column].to_numpy(dtype=float)
        b = right[column].to_numpy(dtype=float)
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if not _close(x, y, tolerance_sec):
                raise AssertionError(
                    f"{what}: call {left_keys[index]} {column}: {x!r} != {y!r} "
                    f"(tolerance {tolerance_sec} s)"
                )


def tie_calls(
    corpus: Sequence[Episode], policy: Policy, reference: pd.DataFrame, tie_sec: float
) -> set[tuple[str, int]]:
    """The calls of ``reference`` (the twin's frame) that an engine with tie tolerance
    ``tie_sec`` may call a tie: bound by the deadline at a window no more than ``tie_sec`` below
    the call's tool timeout (read from ``policy`` for that window)."""
    if tie_sec <= 0:
        return set()
    calls = {(e.id, i): c for e in corpus for i, c in enumerate(e.calls)}
    found = set()
    rows = reference[reference["bound_by"] == "deadline"]
    for episode_id, index, window in zip(
        rows["episode_id"], rows["call_index"], rows["bound_sec"], strict=True
    ):
        call = calls.get((episode_id, int(index)))
        if call is None or not math.isfinite(window):
            continue
        tool_sec = policy.timeout_for(None, call.tool, call.args, remaining_sec=float(window))
        if tool_sec - window <= tie_sec:
            found.add((str(episode_id), int(index)))
    return found


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _same(x: Any, y: Any) -> bool:
    if _missing(x) or _missing(y) or x == "" or y == "":
        return (_missing(x) or x == "") and (_missing(y) or y == "")
    if isinstance(x, int | float | np.number) and isinstance(y, int | float | np.number):
        return float(x) == float(y)
    return bool(x == y)


def _close(x: float, y: float, tolerance: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= tolerance


# -- one cell -----------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The answer of one cell: ``agrees``, or ``refused`` with the error that named the part."""

    part: str
    censored: str
    reaction: str
    entry: str
    outcome: str
    detail: str = ""


@functools.cache
def _suite_twin(part: str, censored: str, reaction: str, seed: int) -> ReplayResult:
    """The twin's replay of one cell on :func:`conformance_corpus`: the reference of every entry
    point held to that cell, replayed once per process (the twin is deterministic; the suite
    holds four entry points to each cell). Nothing reads it to change it."""
    from reviewlab.engines._replay import replay

    return replay(
        conformance_corpus(),
        PART_POLICIES[part],
        engine="twin",
        censored=censored,
        reaction=reaction,
        seed=seed,
    )


def check(
    entry: str | Callable[..., Any],
    part: str,
    censored: str,
    reaction: str,
    *,
    seed: int = 3,
    corpus: list[Episode] | None = None,
    tolerance_sec: float | None = None,
) -> Verdict:
    """Replay one cell through ``entry`` and through the twin; the verdict, or an
    ``AssertionError`` when the entry point disagrees or refuses without naming the part."""
    from reviewlab.engines._replay import replay

    if censored not in CENSORING_MODES:
        raise ValueError(f"censored: expected one of {', '.join(CENSORING_MODES)}")
    if reaction not in REACTIONS:
        raise ValueError(f"reaction: expected one of {', '.join(REACTIONS)}")
    run = ENTRY_POINTS[entry] if isinstance(entry, str) else entry
    name = entry if isinstance(entry, str) else getattr(entry, "__name__", "entry")
    policy = PART_POLICIES[part]
    episodes = corpus if corpus is not None else conformance_corpus()
    if tolerance_sec is None:
        tolerance_sec = REAL_TOLERANCE_SEC if name == "real" else 1e-9
    where = f"{name} / {part} / censored={censored} / reaction={reaction}"
    try:
        calls = run(episodes, policy, censored=censored, reaction=reaction, seed=seed)
    except ValueError as error:
        # A refusal names the part, or the censoring mode or reaction the engine does not take.
        names = [*part.replace("+", ".").split("."), f"{censored!r}", f"{reaction!r}"]
        if not any(piece in str(error) for piece in names):
            raise AssertionError(f"{where}: refused without naming the part: {error}") from error
        return Verdict(part, censored, reaction, name, "refused", str(error))
    if corpus is None:
        twin = _suite_twin(part, censored, reaction, seed)
    else:
        twin = replay(
            corpus, policy, engine="twin", censored=censored, reaction=reaction, seed=seed
        )
    if isinstance(calls, Mapping):  # an engine without frames: its summary is held
        assert_summary_conforms(twin.summary, calls, what=where)
        return Verdict(part, censored, reaction, name, "agrees")
    reference = twin.calls
    ties = tie_calls(episodes, policy, reference, float(calls.attrs.get("tie_sec", 0.0)))
    assert_same_calls(reference, calls, tolerance_sec=tolerance_sec, what=where, ties=ties)
    return Verdict(part, censored, reaction, name, "agrees")


def check_all(
    entry: str | Callable[..., Any],
    cells: Sequence[tuple[str, str, str]],
    *,
    workers: int = 1,
    **options: Any,
) -> dict[tuple[str, str, str], Verdict | AssertionError]:
    """:func:`check` for every ``(part, censored, reaction)`` cell, ``workers`` at a time
    (:func:`~reviewlab.testing._overlap.side_by_side`: the real engine mostly waits, so its cells
    overlap well once the heap is frozen); each cell's verdict, or the ``AssertionError`` that
    failed it."""

    def one(cell: tuple[str, str, str]) -> Verdict:
        return check(entry, *cell, **options)

    answers = side_by_side(one, cells, workers=workers, caught=(AssertionError,))
    # Only an AssertionError is caught, so every answer is a verdict or one.
    return dict(zip(cells, cast(list[Verdict | AssertionError], answers), strict=True))
