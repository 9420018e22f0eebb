"""A one-thread sweep evaluates its points on the caller's own thread (no pool thread), in every
engine: the timeout rule of each point is asked from the thread that called ``sweep``."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from reviewlab.analysis.sweep import points_grid, sweep
from reviewlab.core._policy import Narrowing
from reviewlab.recording._files import load_episodes
from reviewlab.resources import corpus_path


class ThreadRecordingRule:
    """A custom timeout rule (not a TimeoutPolicy): ``seconds`` for every tool; it notes the
    thread of every question it is asked."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.name = f"recording-{seconds:g}"
        self.threads: set[threading.Thread] = set()
        self.lock = threading.Lock()

    def timeout_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float:
        """``seconds``, whatever the call; the asking thread is recorded."""
        with self.lock:
            self.threads.add(threading.current_thread())
        return self.seconds


@pytest.fixture(scope="module")
def episodes():
    return list(load_episodes(corpus_path()))[:40]


@pytest.mark.parametrize("engine", ["vectorized", "twin"])
def test_a_one_thread_sweep_asks_every_rule_on_the_callers_thread(episodes, engine):
    """threads=1: each point's rule is asked, and only from the thread that called sweep."""
    rules = [ThreadRecordingRule(seconds) for seconds in (0.5, 2.0, 10.0, 60.0)]
    grid = points_grid((rule, Narrowing()) for rule in rules)
    frame = sweep(episodes, grid, engine=engine, threads=1, allow_unknown_tools=True)
    assert len(frame) == len(rules)
    caller = threading.current_thread()
    for rule in rules:
        assert rule.threads == {caller}, rule.name


def test_more_threads_do_leave_the_callers_thread(episodes):
    """The contrast: with threads=2 the vectorized engine asks the rules on pool threads."""
    rules = [ThreadRecordingRule(seconds) for seconds in (0.5, 2.0, 10.0, 60.0)]
    grid = points_grid((rule, Narrowing()) for rule in rules)
    sweep(episodes, grid, threads=2, allow_unknown_tools=True)
    asked = set().union(*(rule.threads for rule in rules))
    assert asked and threading.current_thread() not in asked
