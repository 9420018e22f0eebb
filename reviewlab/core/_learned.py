"""Learned conditional timeouts: a ``timeouts`` rule whose bound depends on the call's arguments
and on how the chance of an answer fades with the time already waited.

Per tool, a Weibull accelerated-failure-time model ``S(t | x) = exp(-(t / λ(x)) ** ρ)``,
``log λ(x) = intercept + coef · x``, over the call's features (:func:`call_features`), fitted
from recordings by :mod:`reviewlab.analysis._learned`. A call's bound is its conditional
``quantile``, or sooner the first time a call still running has less than ``hazard_floor``
chance of answering within ``hazard_window_sec``, clipped to ``[min_sec, max_sec]``; tools
without a model get ``fixed_sec`` or ``default_sec``.

Invariants: pure arithmetic on the stored coefficients (no fitting library to replay or run
it), deterministic per arguments, reads no clock; written to and read from a policy file's
``[learned]`` table. The formulas: docs/semantics.md, "Learned timeouts".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from reviewlab.core._narrowing import PolicyError, check_seconds
from reviewlab.core._timeouts import check_tool_name

FEATURE_KINDS = ("span", "num", "len", "is")
"""``span:START:END`` lines from two arguments; ``num:KEY`` log1p of a number's size;
``len:KEY`` log1p of a text's length; ``is:KEY=VALUE`` 1 when the argument has that value."""


def _feature(name: str, args: Mapping[str, Any]) -> float:
    kind, _, rest = name.partition(":")
    if kind == "span":
        start_key, _, end_key = rest.partition(":")
        start, end = args.get(start_key), args.get(end_key)
        if isinstance(start, int | float) and isinstance(end, int | float) and end >= start:
            return math.log1p(float(end) - float(start) + 1.0)
        return 0.0
    if kind == "is":
        key, _, value = rest.partition("=")
        return 1.0 if str(args.get(key, "")) == value else 0.0
    found: Any = args.get(rest)
    if kind == "num":
        if isinstance(found, bool) or not isinstance(found, int | float):
            return 0.0
        return math.log1p(abs(float(found))) if math.isfinite(found) else 0.0
    return math.log1p(len(str(found))) if found is not None else 0.0  # len


def call_features(features: Sequence[str], args: Mapping[str, Any] | None) -> list[float]:
    """The values of ``features`` for a call with ``args`` (a missing argument gives 0)."""
    args = args if isinstance(args, Mapping) else {}
    return [_feature(name, args) for name in features]


def _finite(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PolicyError(where, f"expected a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class ToolModel:
    """One tool's Weibull AFT model: ``log λ(x) = intercept + coef · x``, shape ``rho``."""

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    rho: float

    def __post_init__(self) -> None:
        if len(self.features) != len(self.coef):
            raise PolicyError("features and coef", "expected one coefficient per feature")
        for name in self.features:
            if name.partition(":")[0] not in FEATURE_KINDS:
                raise PolicyError("features", f"{name!r} is not one of {', '.join(FEATURE_KINDS)}")
        object.__setattr__(self, "intercept", _finite("intercept", self.intercept))
        if _finite("rho", self.rho) <= 0:
            raise PolicyError("rho", f"expected a positive shape, got {self.rho!r}")
        object.__setattr__(self, "coef", tuple(_finite("coef", c) for c in self.coef))

    def scale(self, args: Mapping[str, Any] | None) -> float:
        """``λ(x)`` for a call with ``args``."""
        x = call_features(self.features, args)
        return math.exp(self.intercept + sum(c * v for c, v in zip(self.coef, x, strict=True)))

    def survival(self, t: float, args: Mapping[str, Any] | None) -> float:
        """``S(t | x)``: the chance such a call is still running after ``t`` seconds."""
        return math.exp(-((max(t, 0.0) / self.scale(args)) ** self.rho))

    def quantile(self, q: float, args: Mapping[str, Any] | None) -> float:
        """The time by which such a call has answered with probability ``q``."""
        return self.scale(args) * (-math.log1p(-q)) ** (1.0 / self.rho)

    def fading_sec(self, window: float, floor: float, until: float, args: Any) -> float | None:
        """The first ``t <= until`` at which ``P(answer within window | running at t) < floor``
        (bisection on a decreasing function), or ``None`` if it never drops that low."""
        lam = self.scale(args)

        def chance(t: float) -> float:
            return -math.expm1((t / lam) ** self.rho - ((t + window) / lam) ** self.rho)

        if self.rho >= 1.0 or chance(until) >= floor:
            return None
        low, high = 0.0, until
        if chance(low) < floor:
            return 0.0
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if chance(mid) >= floor else (low, mid)
        return high

    def to_dict(self) -> dict[str, Any]:
        """The model as a TOML table."""
        return {
            "features": list(self.features),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "rho": self.rho,
        }


@dataclass(frozen=True)
class LearnedTimeouts:
    """The learned rule (see the module docstring); a ``timeouts`` part of a Policy."""

    models: Mapping[str, ToolModel]
    quantile: float = 0.99
    hazard_window_sec: float | None = None
    hazard_floor: float | None = None
    min_sec: float = 0.1
    max_sec: float = 3600.0
    fixed_sec: Mapping[str, float] = field(default_factory=dict)
    default_sec: float = 360.0
    name: str = "learned"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not 0.0 < self.quantile < 1.0:
            raise PolicyError(
                "quantile", f"expected a probability in (0, 1), got {self.quantile!r}"
            )
        if (self.hazard_window_sec is None) != (self.hazard_floor is None):
            raise PolicyError("hazard_window_sec and hazard_floor", "give both or neither")
        if self.hazard_window_sec is not None:
            check_seconds("hazard_window_sec", self.hazard_window_sec)
            floor = self.hazard_floor
            if floor is None or not 0.0 < floor < 1.0:
                raise PolicyError(
                    "hazard_floor", f"expected a probability in (0, 1), got {floor!r}"
                )
        for name in ("min_sec", "max_sec", "default_sec"):
            set_(self, name, check_seconds(name, getattr(self, name)))
        if self.min_sec > self.max_sec:
            raise PolicyError("min_sec", f"{self.min_sec} is above max_sec {self.max_sec}")
        models = {}
        for tool, model in self.models.items():
            check_tool_name("models", tool)
            if isinstance(model, Mapping):
                try:
                    model = ToolModel(
                        tuple(model.get("features", ())),
                        tuple(model.get("coef", ())),
                        model.get("intercept"),  # type: ignore[arg-type]  # checked there
                        model.get("rho"),  # type: ignore[arg-type]
                    )
                except PolicyError as exc:
                    raise exc.within(f"models.{tool}") from None
            elif not isinstance(model, ToolModel):
                raise PolicyError(f"models.{tool}", f"expected a model table, got {model!r}")
            models[tool] = model
        set_(self, "models", MappingProxyType(dict(sorted(models.items()))))
        fixed = {
            check_tool_name("fixed_sec", t): check_seconds(f"fixed_sec.{t}", s)
            for t, s in self.fixed_sec.items()
        }
        set_(self, "fixed_sec", MappingProxyType(dict(sorted(fixed.items()))))

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))

    # -- the rule ----------------------------------------------------------
    def timeout_for(
        self,
        tools: Any,
        tool_name: str,
        tool_args: Mapping[str, Any] | None = None,
        *,
        remaining_sec: float | None = None,
    ) -> float:
        """This call's bound (the module docstring); no clock is read."""
        model = self.models.get(tool_name)
        if model is None:
            return self.fixed_sec.get(tool_name, self.default_sec)
        bound = model.quantile(self.quantile, tool_args)
        if self.hazard_window_sec is not None and self.hazard_floor is not None:
            fading = model.fading_sec(self.hazard_window_sec, self.hazard_floor, bound, tool_args)
            if fading is not None:
                bound = fading
        return min(max(bound, self.min_sec), self.max_sec)

    def reads_clock(self, tools: Any, tool_name: str, tool_args: Any = None) -> bool:
        """Never: the bound depends on the arguments only."""
        return False

    def reads_args(self, tool_name: str) -> bool:
        """Whether ``tool_name`` has a model (then its arguments set its bound)."""
        return tool_name in self.models

    def args_key(self, tool_args: Mapping[str, Any] | None) -> tuple[Any, ...]:
        """The arguments as a hashable key (every feature of every model reads them)."""
        items = (tool_args or {}).items()
        return tuple(sorted((str(k), repr(v)) for k, v in items))

    # -- serialisation -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The ``[learned]`` table of a policy file."""
        table: dict[str, Any] = {
            "name": self.name,
            "quantile": self.quantile,
            "min_sec": self.min_sec,
            "max_sec": self.max_sec,
            "default_sec": self.default_sec,
        }
        if self.hazard_window_sec is not None:
            table["hazard_window_sec"] = self.hazard_window_sec
            table["hazard_floor"] = self.hazard_floor
        if self.fixed_sec:
            table["fixed_sec"] = dict(self.fixed_sec)
        table["models"] = {tool: model.to_dict() for tool, model in self.models.items()}
        return table

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "learned") -> LearnedTimeouts:
        """The rule from its ``[learned]`` table; errors name ``where`` and the field."""
        if not isinstance(data, Mapping):
            raise PolicyError(where, f"expected a table, got {data!r}")
        known = {
            "name", "quantile", "min_sec", "max_sec", "default_sec", "hazard_window_sec",
            "hazard_floor", "fixed_sec", "models",
        }  # fmt: skip
        unknown = sorted(set(data) - known)
        if unknown:
            raise PolicyError(where, f"unknown field(s) {', '.join(unknown)}")
        try:
            return cls(**dict(data))
        except PolicyError as exc:
            raise exc.within(where) from None
        except TypeError as exc:
            raise PolicyError(where, str(exc)) from None
