"""A policy as a TOML document and back: the tables ``[policy]``, ``[narrowing]``, ``[idle]``,
``[hedges.TOOL]``, ``[breaker]``, ``[kinds]``, ``[learned]``, ``[caps]`` and ``[tasks]`` of a
policy file.

:func:`document_of` writes a policy's parts, each at its "off" value left out; :func:`parts_of`
reads a document into the keyword parts :class:`~reviewlab.core._policy.Policy` is built from,
every error naming the document (``where``) and the field. A document written before the parts
were separate (hedges and breaker inside ``[policy]``, or no tables at all) still reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from reviewlab.core._kinds import kinds_overrides, kinds_table
from reviewlab.core._learned import LearnedTimeouts
from reviewlab.core._narrowing import Narrowing, PolicyError
from reviewlab.core._timeouts import TimeoutPolicy
from reviewlab.core._vocab import ToolKind

IDEMPOTENT_TOOLS = ("list_files", "query_code", "read_file", "search_code")
"""The tools a policy may hedge unless told otherwise: the read-only inspection tools."""

TABLES = ("policy", "narrowing", "idle", "hedges", "breaker", "kinds", "learned", "caps", "tasks")
"""The tables of a policy document, in the order they are written."""


class PolicyParts(Protocol):
    """What a document is written from: a policy's parts, read by name (read-only)."""

    @property
    def timeouts(self) -> Any: ...

    @property
    def narrowing(self) -> Narrowing: ...

    @property
    def idle_sec(self) -> Mapping[str, float]: ...

    @property
    def hedges(self) -> Mapping[str, Any]: ...

    @property
    def breaker(self) -> Any: ...

    @property
    def idempotent_tools(self) -> tuple[str, ...]: ...

    @property
    def name(self) -> str: ...

    @property
    def tool_kinds(self) -> Mapping[str, ToolKind]: ...

    @property
    def cap_rule(self) -> str: ...

    @property
    def tasks(self) -> Mapping[str, str]: ...


def document_of(policy: PolicyParts) -> dict[str, Any]:
    """The TOML document of ``policy`` (a custom timeout rule cannot be written: refused)."""
    learned = policy.timeouts if isinstance(policy.timeouts, LearnedTimeouts) else None
    if learned is None and not isinstance(policy.timeouts, TimeoutPolicy):
        raise PolicyError(
            "timeouts",
            f"a custom rule ({type(policy.timeouts).__name__}) cannot be written "
            "to a policy file; only a TimeoutPolicy or a learned rule can",
        )
    table = {} if learned is not None else policy.timeouts.to_dict()
    if policy.name:
        table["label"] = policy.name
    if policy.idempotent_tools != IDEMPOTENT_TOOLS:
        table["idempotent_tools"] = list(policy.idempotent_tools)
    document: dict[str, Any] = {"policy": table, "narrowing": policy.narrowing.to_dict()}
    if policy.idle_sec:
        document["idle"] = dict(policy.idle_sec)
    if policy.hedges:
        document["hedges"] = {tool: rule.to_dict() for tool, rule in policy.hedges.items()}
    if policy.breaker is not None:
        document["breaker"] = policy.breaker.to_dict()
    kinds = kinds_overrides(policy.tool_kinds)
    if kinds:
        document["kinds"] = kinds
    if learned is not None:
        document["learned"] = learned.to_dict()
    if policy.cap_rule != "hard":
        document["caps"] = {"rule": policy.cap_rule}
    if policy.tasks:
        document["tasks"] = dict(policy.tasks)
    return document


def parts_of(data: Mapping[str, Any], *, where: str = "policy file") -> dict[str, Any]:
    """The keyword parts of the policy ``data`` describes; errors name ``where`` and the field."""
    if not isinstance(data, Mapping):
        raise PolicyError(where, f"expected a table, got {data!r}")
    if not data:  # an empty document must not silently mean the default policy
        raise PolicyError(
            where,
            "empty policy; expected a [policy] table with at least one field "
            "(e.g. default_sec = 60), or use a preset: ouroboros, unbounded, uniform:SEC",
        )
    bare_tables = {"tools_sec", "hedges", "breaker"}  # tables a bare [policy] may hold
    if not set(data) & set(TABLES) and not any(
        isinstance(value, Mapping) and key not in bare_tables for key, value in data.items()
    ):
        data = {"policy": data}  # a bare policy table, as files without tables were
    unknown = sorted(set(data) - set(TABLES))
    if unknown:
        raise PolicyError(
            where,
            f"unknown table(s) {', '.join(unknown)}; "
            "expected [policy], [narrowing], [idle], [hedges.TOOL], [breaker], [kinds], "
            "[learned], [caps], [tasks]",
        )
    table = dict(data.get("policy", {}))
    if not table and "policy" in data and "learned" not in data:
        return parts_of({}, where=where)
    # Files written before the parts were separate kept hedges and breaker in [policy].
    hedge_tables = (table.pop("hedges", {}), data.get("hedges", {}))
    for value in hedge_tables:
        if not isinstance(value, Mapping):
            raise PolicyError(
                where,
                "hedges: expected a table of tool name -> hedge rule "
                f"([hedges.TOOL] with after_sec, max_share), got {value!r}",
            )
    hedges = {**hedge_tables[0], **hedge_tables[1]}
    breaker = data.get("breaker", table.pop("breaker", None))
    idempotent = table.pop("idempotent_tools", IDEMPOTENT_TOOLS)
    name = table.pop("label", "")
    try:
        if "learned" in data:
            if table:
                raise PolicyError(
                    "policy",
                    f"{', '.join(sorted(table))} with a [learned] table; the "
                    "learned rule is the timeouts, give one or the other",
                )
            timeouts: Any = LearnedTimeouts.from_dict(data["learned"])
        else:
            timeouts = TimeoutPolicy.from_dict(table, where="policy") if table else TimeoutPolicy()
        narrowing = Narrowing.from_dict(data.get("narrowing", {}), where="narrowing")
        idle = data.get("idle", {})
        kinds = kinds_table(data.get("kinds", {}), where="kinds")
        caps = data.get("caps", {})
        if not isinstance(caps, Mapping) or set(caps) - {"rule"}:
            raise PolicyError("caps", f"expected a table with one key, rule; got {caps!r}")
        return dict(
            timeouts=timeouts,
            narrowing=narrowing,
            idle_sec=idle,
            hedges=hedges,
            breaker=breaker,
            idempotent_tools=idempotent,
            name=name,
            tool_kinds=kinds,
            cap_rule=caps.get("rule", "hard"),
            tasks=data.get("tasks", {}),
        )
    except PolicyError as exc:
        raise PolicyError(where, str(exc)) from None
