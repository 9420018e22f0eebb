"""The tables a :class:`~reviewlab.core._policy.Policy` validates its per-tool parts into.

Each takes what a caller or a policy file gave (a mapping or a list) and returns it checked and
sorted, read-only; a bad entry is a :class:`~reviewlab.core._narrowing.PolicyError` naming its
field (``idle_sec.read_file``, ``hedges.search_code``, ``tasks.edit``). A hedge names only a
tool marked idempotent, since a hedge runs the call twice.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from reviewlab.core._hedge import HedgeRule
from reviewlab.core._narrowing import PolicyError, check_seconds
from reviewlab.core._timeouts import check_tool_name
from reviewlab.core._vocab import TASK_ACTIONS, TaskAction


def idle_table(value: Any) -> Mapping[str, float]:
    """``idle_sec``: tool name -> positive seconds."""
    if not isinstance(value, Mapping):
        raise PolicyError("idle_sec", f"expected a table of tool name -> seconds, got {value!r}")
    table = {
        check_tool_name("idle_sec", tool): check_seconds(f"idle_sec.{tool}", seconds)
        for tool, seconds in value.items()
    }
    return MappingProxyType(dict(sorted(table.items())))


def hedge_table(value: Any, idempotent: tuple[str, ...]) -> Mapping[str, HedgeRule]:
    """``hedges``: tool name -> :class:`HedgeRule` (or its table), idempotent tools only."""
    if not isinstance(value, Mapping):
        raise PolicyError("hedges", f"expected a table of tool name -> hedge rule, got {value!r}")
    table = {}
    for tool, rule in value.items():
        check_tool_name("hedges", tool)
        if isinstance(rule, Mapping):
            rule = HedgeRule.from_dict(rule, where=f"hedges.{tool}")
        elif not isinstance(rule, HedgeRule):
            raise PolicyError(f"hedges.{tool}", f"expected a hedge rule, got {rule!r}")
        if tool not in idempotent:
            close = difflib.get_close_matches(tool, idempotent, n=3, cutoff=0.6)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise PolicyError(
                f"hedges.{tool}",
                f"{tool} is not marked idempotent (a hedge runs it twice){hint}; "
                f"idempotent: {', '.join(idempotent) or 'none'} (with_idempotent marks more)",
            )
        table[tool] = rule
    return MappingProxyType(dict(sorted(table.items())))


def task_table(value: Any) -> Mapping[str, TaskAction]:
    """``tasks``: tool name -> ``cancel`` | ``detach``."""
    if not isinstance(value, Mapping):
        raise PolicyError(
            "tasks", f"expected a table of tool name -> cancel | detach, got {value!r}"
        )
    for tool, action in value.items():
        check_tool_name("tasks", tool)
        if action not in TASK_ACTIONS:
            raise PolicyError(
                f"tasks.{tool}", f"expected one of {', '.join(TASK_ACTIONS)}, got {action!r}"
            )
    return MappingProxyType(dict(sorted(value.items())))


def tool_list(field_name: str, value: Any) -> tuple[str, ...]:
    """A list of tool names, sorted and without repeats."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise PolicyError(field_name, f"expected a list of tool names, got {value!r}")
    return tuple(sorted({check_tool_name(field_name, tool) for tool in value}))
