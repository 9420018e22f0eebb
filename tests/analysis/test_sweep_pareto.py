"""Sweeps trade the objectives a user names, and refuse a grid over
a tool the corpus never calls."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reviewlab.analysis._known_tools import UnknownTools, check_tools, corpus_tools
from reviewlab.analysis.sweep import (
    PARETO_OBJECTIVES,
    make_grid,
    objective_column,
    pareto,
    sweep,
)
from reviewlab.engines.vectorized import compile_corpus
from reviewlab.recording._files import load_episodes
from reviewlab.resources import corpus_path


@pytest.fixture(scope="module")
def corpus():
    return list(load_episodes(corpus_path()))[:200]


def brute_force_front(values: np.ndarray) -> list[bool]:
    """Non-dominated rows by the textbook definition, pair by pair (NaN read as +inf)."""
    values = np.where(np.isnan(values), math.inf, values)
    out = []
    for i, a in enumerate(values):
        dominated = any(np.all(b <= a) and np.any(b < a) for j, b in enumerate(values) if j != i)
        out.append(not dominated)
    return out


def test_pareto_in_three_objectives_matches_the_definition():
    """On random frames with ties, infinities and NaN, the front is
    exactly the non-dominated rows."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(1, 25))
        values = rng.integers(0, 5, size=(n, 3)).astype(float)
        values[rng.random((n, 3)) < 0.1] = math.inf
        values[rng.random((n, 3)) < 0.05] = math.nan
        frame = pd.DataFrame(values, columns=list(PARETO_OBJECTIVES))
        assert pareto(frame).tolist() == brute_force_front(values), f"trial {trial}"


def test_silence_is_a_default_axis():
    """A point with the least loss and wall time but a far longer silence is not dominated by
    default, yet one that ties on loss and wall time with a huge silence is."""
    frame = pd.DataFrame(
        {
            "timeout_coverage_loss_rate": [0.0, 0.0, 0.01],
            "wall_p95_sec": [50.0, 50.0, 40.0],
            "max_silence_sec": [20745.0, 600.0, 600.0],
        }
    )
    assert pareto(frame).tolist() == [False, True, True]
    # With only two axes the long silence is invisible and the first two points tie.
    assert pareto(frame, ["timeout_coverage_loss_rate", "wall_p95_sec"]).tolist() == [
        True,
        True,
        True,
    ]


def test_pareto_objectives_by_alias_and_errors():
    """Objective names may be aliases (wall_p95, max_silence); an unknown one names itself."""
    frame = pd.DataFrame({"wall_p95_sec": [1.0, 2.0], "max_silence_sec": [2.0, 1.0]})
    assert pareto(frame, ["wall_p95", "max_silence"]).tolist() == [True, True]
    assert pareto(frame, "wall_p95").tolist() == [True, False]
    assert objective_column("wall_p99") == "wall_p99_sec"
    with pytest.raises(ValueError, match="fastest"):
        pareto(frame, ["fastest"])
    with pytest.raises(ValueError, match="abandoned_call_rate"):
        pareto(frame, ["abandoned_call_rate"])


def test_pareto_default_falls_back_to_total_loss_on_old_frames():
    """A frame without the timeout share trades total coverage loss against p95 wall time."""
    frame = pd.DataFrame(
        {"coverage_loss_rate": [0.0, 0.1, 0.05, 0.2], "wall_p95_sec": [10.0, 5.0, 12.0, 6.0]}
    )
    assert pareto(frame).tolist() == [True, True, False, False]


def test_a_tool_the_corpus_never_calls_is_refused_with_the_nearest_names(corpus):
    """sweep refuses a typo'd tool, naming it and suggesting the closest known tool."""
    with pytest.raises(ValueError) as caught:
        sweep(corpus, make_grid(tools={"raed_file": [5.0]}))
    message = str(caught.value)
    assert "raed_file" in message and "read_file" in message and "\n" not in message
    compiled = compile_corpus(corpus)
    with pytest.raises(ValueError, match="raed_file"):
        sweep(compiled, make_grid(tools={"raed_file": [5.0]}))


def test_allow_unknown_tools_sweeps_the_point_anyway(corpus):
    """With allow_unknown_tools the unknown tool's timeout is swept and changes nothing."""
    grid = make_grid(tools={"raed_file": [5.0, 50.0]})
    frame = sweep(corpus, grid, allow_unknown_tools=True)
    assert frame["timeout.raed_file"].tolist() == [5.0, 50.0]
    metric_columns = [c for c in frame.columns if not c.startswith(("timeout.", "policy_name"))]
    first, second = frame[metric_columns].to_dict("records")
    assert first == second


def test_check_tools_lists_every_unknown_name():
    """Several unknown names are all named, each with its own suggestion when one is close."""
    with pytest.raises(ValueError) as caught:
        check_tools(["raed_file", "zzz", "read_file"], ["read_file", "list_files"], what="--tool")
    message = str(caught.value)
    assert message.startswith("--tool:")
    assert "raed_file (did you mean read_file?)" in message and "zzz" in message
    check_tools(["read_file"], ["read_file"])  # known names pass


def test_an_unknown_tool_carries_what_a_caller_says_it_with():
    """The refusal carries the parameter, the unknown and known tools and the override, so a
    caller words it with its own names (the CLI's --tool) without reading the text."""
    with pytest.raises(UnknownTools) as caught:
        check_tools(["raed_file"], ["read_file", "list_files"], what="grid")
    error = caught.value
    assert (error.parameter, error.unknown, error.known) == (
        "grid",
        ["raed_file"],
        ["list_files", "read_file"],
    )
    assert error.override == "allow_unknown_tools=True"
    assert str(error).startswith("grid: the corpus never calls raed_file (did you mean read_file?)")
    assert error.message("--tool", "--allow-unknown-tools") == (
        "--tool: the corpus never calls raed_file (did you mean read_file?); it calls "
        "list_files, read_file (--allow-unknown-tools sweeps it anyway)"
    )


def test_corpus_tools_agree_for_episodes_and_compiled(corpus):
    """The tools of a corpus are the same whether read from episodes or a compiled corpus."""
    expected = sorted({c.tool for e in corpus for c in e.calls})
    assert corpus_tools(corpus) == expected == corpus_tools(compile_corpus(corpus))
