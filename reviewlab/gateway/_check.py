"""``reviewlab gateway check``: what each upstream's tools would get, before a host connects.

Starts every upstream of the servers file, lists its tools, and tells for each the name the
host sees, its server, its bound under the policy (and which term sets it), its kind and
idempotence (annotations under the policy's ``[kinds]``), and its idle timeout; then names each
tool the policy mentions that no upstream offers, with the nearest real name.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from reviewlab.core._policy import Policy, resolve_bound
from reviewlab.gateway._gateway import Gateway


@dataclass(frozen=True)
class ToolCheck:
    """One tool as the gateway would serve it."""

    tool: str
    server: str
    bound_sec: float | None
    bound_by: str
    kind: str
    idempotent: bool
    idle_sec: float | None


@dataclass(frozen=True)
class CheckReport:
    """The tools, and the policy's names that match none of them (each with a suggestion)."""

    tools: tuple[ToolCheck, ...]
    unknown: tuple[tuple[str, str | None], ...]

    @property
    def ok(self) -> bool:
        """Whether every tool the policy names is served."""
        return not self.unknown


def policy_tool_names(policy: Policy) -> set[str]:
    """Every tool name a policy's parts mention (its defaults left out)."""
    from reviewlab.core._kinds import kinds_overrides

    names: set[str] = set()
    timeouts = policy.timeouts
    for attribute in ("tool_timeouts", "override_tools", "clamp_tools"):
        value = getattr(timeouts, attribute, None)
        if value:
            names.update(value)
    names.update(policy.idle_sec)
    names.update(policy.hedges)
    names.update(policy.tasks)
    names.update(kinds_overrides(policy.tool_kinds))
    return names


async def check_gateway(gateway: Gateway, *, defaults: set[str] | None = None) -> CheckReport:
    """Open ``gateway``'s upstreams, list their tools and judge them against its policy."""
    async with gateway:
        policy = gateway.policy
        rows = []
        for shown, route in gateway.tools.items():
            bound = resolve_bound(policy, gateway.tools, shown, {}, remaining_sec=None)
            rows.append(
                ToolCheck(
                    tool=shown,
                    server=route.upstream,
                    bound_sec=bound.sec,
                    bound_by=bound.by,
                    kind=policy.kind_of(shown),
                    idempotent=shown in policy.idempotent_tools,
                    idle_sec=policy.idle_for(shown),
                )
            )
        served = set(gateway.tools)
        named = policy_tool_names(gateway.policy_file.current) - (defaults or set())
        unknown = []
        for name in sorted(named - served):
            near = difflib.get_close_matches(name, sorted(served), n=1)
            unknown.append((name, near[0] if near else None))
    return CheckReport(tuple(rows), tuple(unknown))


def default_names() -> set[str]:
    """The names a default policy mentions (they are no typo of the user's)."""
    return policy_tool_names(Policy())


def render(report: CheckReport) -> list[str]:
    """The report as lines of text."""
    width = max([len(row.tool) for row in report.tools] + [4])
    lines = [f"{'tool':<{width}}  server  bound  set by  kind  idempotent  idle"]
    for row in report.tools:
        bound = "none" if row.bound_sec is None else f"{row.bound_sec:g}s"
        idle = "-" if row.idle_sec is None else f"{row.idle_sec:g}s"
        lines.append(
            f"{row.tool:<{width}}  {row.server}  {bound}  {row.bound_by}  {row.kind}  "
            f"{'yes' if row.idempotent else 'no'}  {idle}"
        )
    for name, near in report.unknown:
        hint = f" (did you mean {near}?)" if near else ""
        lines.append(f"policy names {name!r}, which no upstream serves{hint}")
    return lines
