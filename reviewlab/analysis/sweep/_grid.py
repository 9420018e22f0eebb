"""Grids of policy points: what a sweep replays, and the parameter columns that name each point.

A :class:`Grid` is an ordered, immutable tuple of :class:`PolicyPoint` objects (a policy and
its parameters). :func:`make_grid` builds the usual product (base policies × scales × per-tool
timeouts × hedges × breakers × narrowings), :func:`points_grid` a grid of explicit policies.
A point that hedges or has a breaker is replayed on episodes, not on a compiled corpus
(:func:`replays_episodes`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reviewlab.core._breaker import BreakerRule
from reviewlab.core._errors import ParameterError
from reviewlab.core._hedge import HedgeRule
from reviewlab.core._narrowing import check_seconds
from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor, TimeoutPolicy


@dataclass(frozen=True)
class PolicyPoint:
    """One point of a grid: what to replay and the parameter columns that name it."""

    policy: Policy
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Grid:
    """An ordered, immutable list of policy points; ``grid_a + grid_b`` concatenates."""

    points: tuple[PolicyPoint, ...]

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[PolicyPoint]:
        return iter(self.points)

    def __add__(self, other: Grid) -> Grid:
        return Grid(self.points + other.points)

    def frame(self) -> pd.DataFrame:
        """The parameter columns of every point (the left part of a sweep frame)."""
        return pd.DataFrame([dict(p.params) for p in self.points])


def _narrowing_params(narrowing: Narrowing) -> dict[str, Any]:
    return {
        "narrowing.mode": narrowing.mode,
        "narrowing.reserve_sec": narrowing.reserve_sec,
        "narrowing.fraction": narrowing.fraction,
    }


def make_grid(
    base: Policy | TimeoutPolicy | Sequence[Policy | TimeoutPolicy] | None = None,
    *,
    tools: Mapping[str, Sequence[float]] | None = None,
    scales: Sequence[float] | None = None,
    narrowings: Sequence[Narrowing] | None = None,
    hedges: Mapping[str, Sequence[float]] | None = None,
    hedge_share: float = 0.05,
    breakers: Sequence[BreakerRule | None] | None = None,
) -> Grid:
    """The product base policies × ``scales`` × per-tool timeouts × hedges × breakers ×
    ``narrowings``.

    ``base``: one policy or several (default :meth:`Policy.ouroboros`), each a
    :class:`Policy` whose ``timeouts`` is a :class:`TimeoutPolicy` (or a bare TimeoutPolicy).
    ``scales``: multipliers of each base's timeouts (:meth:`TimeoutPolicy.scaled`).
    ``tools``: per tool, the timeouts to try, set EXACTLY (not raised by the
    base's floor: :meth:`TimeoutPolicy.with_tool_timeouts`), after scaling.
    ``narrowings``: default: each base's own narrowing. ``hedges``: per tool, the
    delays after which to hedge it (the tool is marked idempotent), each point
    hedging at most ``hedge_share`` of its calls. ``breakers``: the breakers to
    try (``None``: none). Every point carries the columns ``policy_name, scale,
    timeout.<tool>…, narrowing.mode, narrowing.reserve_sec, narrowing.fraction``,
    plus ``hedge.<tool>.after_sec``, ``hedge.max_share`` and ``breaker.*`` when
    those axes are given.
    """
    bases = [_tunable(i, Policy.of(policy)) for i, policy in enumerate(_given(base))]
    tool_axes = _float_axes(tools, "tools", "timeout")
    scale_axis: list[float | None] = [float(s) for s in scales] if scales else [None]
    narrowing_axis = _narrowing_axis(narrowings)
    hedge_axes = _float_axes(hedges, "hedges", "delay")
    if hedge_axes:
        try:  # the one rule of a hedge's share, before any point is built
            HedgeRule(1.0, hedge_share)
        except ParameterError as exc:
            raise ParameterError("hedge_share", exc.reason) from None
    breaker_axis = _breaker_axis(breakers)
    points = [
        _point(
            spine,
            scale,
            dict(zip(tool_axes, combo, strict=True)),
            dict(zip(hedge_axes, delays, strict=True)),
            hedge_share,
            rule,
            narrowing,
        )
        for spine, scale, combo, delays, rule, narrowing in itertools.product(
            bases,
            scale_axis,
            itertools.product(*tool_axes.values()),
            itertools.product(*hedge_axes.values()),
            breaker_axis or [_NO_AXIS],
            narrowing_axis,
        )
    ]
    return Grid(tuple(points))


def _given(
    base: Policy | TimeoutPolicy | Sequence[Policy | TimeoutPolicy] | None,
) -> list[Policy | TimeoutPolicy | None]:
    """The base policies as given: one, several, or ``None`` (ouroboros)."""
    return [base] if isinstance(base, Policy | TimeoutPolicy) else [*base] if base else [None]


def _tunable(index: int, spine: Policy) -> Policy:
    """A base policy, refused by position unless its timeouts is a TimeoutPolicy (the grid scales
    and replaces its per-tool table)."""
    if not isinstance(spine.timeouts, TimeoutPolicy):
        raise TypeError(
            f"base[{index}]: expected a Policy whose timeouts is a TimeoutPolicy, "
            f"got {type(spine.timeouts).__name__}"
        )
    return spine


def _float_axes(
    axes: Mapping[str, Sequence[float]] | None, field: str, what: str
) -> dict[str, list[float]]:
    """Per tool, the values to try as seconds; an empty list or a value that is not positive,
    finite seconds is refused, naming ``field.tool``."""
    floats = {
        tool: [check_seconds(f"{field}.{tool}", value) for value in values]
        for tool, values in (axes or {}).items()
    }
    for tool, values in floats.items():
        if not values:
            raise ParameterError(f"{field}.{tool}", f"expected at least one {what}")
    return floats


def _narrowing_axis(narrowings: Sequence[Narrowing] | None) -> list[Narrowing | None]:
    """The narrowings to try (``[None]``: each base keeps its own)."""
    axis: list[Narrowing | None] = list(narrowings) if narrowings else [None]
    for index, narrowing in enumerate(axis):
        if narrowing is not None and not isinstance(narrowing, Narrowing):
            raise TypeError(
                f"narrowings[{index}]: expected a Narrowing, got {type(narrowing).__name__}"
            )
    return axis


def _breaker_axis(breakers: Sequence[BreakerRule | None] | None) -> list[BreakerRule | None]:
    """The breakers to try (``[]``: no breaker axis)."""
    axis: list[BreakerRule | None] = list(breakers) if breakers else []
    for index, rule in enumerate(axis):
        if rule is not None and not isinstance(rule, BreakerRule):
            raise TypeError(
                f"breakers[{index}]: expected a BreakerRule or None, got {type(rule).__name__}"
            )
    return axis


def _point(
    spine: Policy,
    scale: float | None,
    chosen: dict[str, float],
    hedged: dict[str, float],
    hedge_share: float,
    rule: Any,
    narrowing: Narrowing | None,
) -> PolicyPoint:
    """One combination of the axes applied to a base policy, with the columns that name it."""
    timeouts = _point_timeouts(spine.timeouts, scale, chosen)
    point = spine.replace(timeouts=timeouts, name="")
    if narrowing is not None:
        point = point.replace(narrowing=narrowing)
    params: dict[str, Any] = {
        # The base's own name, or its label with the scaled/tuned timeouts (so two bases that
        # differ only in a hedge or a breaker keep two names).
        "policy_name": (
            spine.name
            if timeouts is spine.timeouts and spine.name
            else spine.replace(timeouts=timeouts, name="").label
        ),
        "scale": 1.0 if scale is None else scale,
    }
    params.update({f"timeout.{tool}": sec for tool, sec in chosen.items()})
    for tool, after in hedged.items():
        if tool not in point.idempotent_tools:
            point = point.with_idempotent(tool)
        point = point.with_hedge(tool, after_sec=after, max_share=hedge_share)
        params[f"hedge.{tool}.after_sec"] = after
    if hedged:
        params["hedge.max_share"] = hedge_share
    if rule is not _NO_AXIS:
        point = point.replace(breaker=rule)
        params.update(_breaker_params(rule))
    params.update(_narrowing_params(point.narrowing))
    return PolicyPoint(point.replace(name=_point_name(point, spine)), params)


def _point_timeouts(timeouts: Any, scale: float | None, chosen: dict[str, float]) -> TimeoutPolicy:
    """A base's timeouts scaled, then with the chosen per-tool timeouts set exactly."""
    if scale is not None:
        try:
            timeouts = timeouts.scaled(scale)
        except ParameterError as exc:  # the factor is a value of the scales axis
            raise ParameterError("scales", exc.reason) from None
    if chosen:
        suffix = ",".join(f"{tool}={sec:g}" for tool, sec in chosen.items())
        timeouts = timeouts.with_tool_timeouts(name=f"{timeouts.name}[{suffix}]", **chosen)
    return timeouts


def _point_name(point: Policy, base: Policy) -> str:
    """A point's label: the base's name when it named itself, else the derived label."""
    return base.name if base.name and point == base.replace(name="") else ""


_NO_AXIS: Any = object()  # no breaker axis: the base policies keep their own breakers


def _breaker_params(rule: BreakerRule | None) -> dict[str, Any]:
    if rule is None:
        return {
            "breaker.consecutive": 0,
            "breaker.window": math.nan,
            "breaker.cooldown": "",
            "breaker.scope": "",
        }
    return {
        "breaker.consecutive": rule.consecutive,
        "breaker.window": math.nan if rule.window is None else rule.window,
        "breaker.cooldown": (
            f"{rule.cooldown_rounds} rounds"
            if rule.cooldown_rounds is not None
            else f"{rule.cooldown_sec:g} s"
        ),
        "breaker.scope": rule.scope,
    }


def replays_episodes(policy: Policy) -> bool:
    """Whether a policy must be replayed on episodes (it hedges or has a breaker), not on a
    compiled corpus."""
    return policy.breaker is not None or bool(policy.hedges)


def points_grid(policies: Iterable[Policy | SupportsTimeoutFor | tuple[Any, Narrowing]]) -> Grid:
    """A grid of explicit policies (a ``(rule, narrowing)`` pair is read by :meth:`Policy.of`),
    each named by its label."""
    points = []
    for item in policies:
        spine = Policy.of(*(item if isinstance(item, tuple) else (item,)))
        params = {"policy_name": spine.label, "scale": 1.0, **_narrowing_params(spine.narrowing)}
        points.append(PolicyPoint(spine, params))
    return Grid(tuple(points))
