"""The price table: what a model's tokens, a reviewer slot's seconds and a zombie's seconds cost.

A :class:`PriceTable` is frozen and validated; read from TOML (:meth:`PriceTable.from_toml`,
:func:`load_prices`) and written back (:meth:`PriceTable.to_toml`, :func:`save_prices`) so
that a round trip gives the same table. A model is priced by its exact name, else by what
follows one of its ``/`` (longest first), else as ``default_model``, else not at all (its
rounds are *unpriced*, and a cost says how many).

Invariants: every price is a finite number >= 0; unknown keys are errors; errors are
:class:`PriceTableError` naming the file and the dotted key. The file format and the lookup:
docs/metrics.md, "The price table".
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from reviewlab.core._atomic import write_text_atomic

_TOP_KEYS = ("currency", "default_model", "slot", "zombie", "models")
_MODEL_KEYS = ("input_per_mtok", "output_per_mtok")
_TOKENS_PER_MTOK = 1_000_000


class PriceTableError(ValueError):
    """A price table that cannot be used; names the file (or ``<text>``) and the dotted key."""

    def __init__(self, where: str, key: str, message: str) -> None:
        self.where = where
        self.key = key
        self.message = message
        super().__init__(f"{where}: {key}: {message}")


@dataclass(frozen=True)
class ModelPrice:
    """What one model's tokens cost, per million."""

    input_per_mtok: float
    """Price of one million input (prompt) tokens."""
    output_per_mtok: float
    """Price of one million output (generated) tokens."""

    def of(self, input_tokens: float, output_tokens: float) -> float:
        """The price of a send that consumed and generated that many tokens."""
        return (
            input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok
        ) / _TOKENS_PER_MTOK


@dataclass(frozen=True)
class PriceTable:
    """Prices of tokens per model, of slot seconds and of zombie seconds (see the module doc)."""

    models: Mapping[str, ModelPrice] = field(default_factory=dict)
    """Token prices by model name."""
    slot_per_sec: float = 0.0
    """Price of one reviewer slot held for one second of an episode's wall time."""
    zombie_per_sec: float = 0.0
    """Price of one loose worker thread running for one second after its call was abandoned."""
    wedged_zombie_sec: float | None = None
    """Seconds a zombie that never returns is priced for; ``None``: such zombies are unpriced
    (counted, never silently 0)."""
    default_model: str | None = None
    """The model whose prices apply to an episode whose model is unknown or not listed."""
    currency: str = "USD"
    """A label for the unit of every price (the table never converts)."""

    def __post_init__(self) -> None:
        _check_table(self, "<table>")

    def price_of(self, model: str | None) -> tuple[str | None, ModelPrice | None]:
        """``(name priced as, its prices)`` for ``model``, or ``(None, None)`` when unpriced."""
        if model is not None:
            if model in self.models:
                return model, self.models[model]
            # What follows each "/", longest first: a/b/c -> b/c -> c.
            parts = model.split("/")
            for start in range(1, len(parts)):
                tail = "/".join(parts[start:])
                if tail in self.models:
                    return tail, self.models[tail]
        if self.default_model is not None:
            return self.default_model, self.models[self.default_model]
        return None, None

    def to_dict(self) -> dict[str, Any]:
        """The table as the TOML document's dict (the inverse of :meth:`from_dict`)."""
        data: dict[str, Any] = {"currency": self.currency}
        if self.default_model is not None:
            data["default_model"] = self.default_model
        data["slot"] = {"per_sec": self.slot_per_sec}
        zombie: dict[str, Any] = {"per_sec": self.zombie_per_sec}
        if self.wedged_zombie_sec is not None:
            zombie["wedged_sec"] = self.wedged_zombie_sec
        data["zombie"] = zombie
        data["models"] = {
            name: {"input_per_mtok": p.input_per_mtok, "output_per_mtok": p.output_per_mtok}
            for name, p in self.models.items()
        }
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "<table>") -> PriceTable:
        """A table from a decoded TOML document; errors name ``where`` and the key."""
        if not isinstance(data, Mapping):
            raise PriceTableError(where, "<document>", "expected a table of keys")
        _only(data, _TOP_KEYS, "", where)
        currency = data.get("currency", "USD")
        if not isinstance(currency, str) or not currency:
            raise PriceTableError(
                where, "currency", f"expected a non-empty string, got {currency!r}"
            )
        default = data.get("default_model")
        if default is not None and (not isinstance(default, str) or not default):
            raise PriceTableError(where, "default_model", f"expected a model name, got {default!r}")
        slot = _section(data, "slot", where)
        _only(slot, ("per_sec",), "slot.", where)
        zombie = _section(data, "zombie", where)
        _only(zombie, ("per_sec", "wedged_sec"), "zombie.", where)
        raw_models = _section(data, "models", where)
        models = {}
        for name, entry in raw_models.items():
            key = f"models.{name}"
            _check_model_name(name, where)
            if not isinstance(entry, Mapping):
                raise PriceTableError(where, key, f"expected a table, got {entry!r}")
            _only(entry, _MODEL_KEYS, f"{key}.", where)
            for price_key in _MODEL_KEYS:
                if price_key not in entry:
                    raise PriceTableError(where, f"{key}.{price_key}", "missing")
            models[str(name)] = ModelPrice(
                input_per_mtok=_price(entry["input_per_mtok"], f"{key}.input_per_mtok", where),
                output_per_mtok=_price(entry["output_per_mtok"], f"{key}.output_per_mtok", where),
            )
        wedged = zombie.get("wedged_sec")
        if default is not None and default not in models:
            raise PriceTableError(where, "default_model", _not_listed(default, models))
        return cls(
            models=models,
            slot_per_sec=_price(slot.get("per_sec", 0.0), "slot.per_sec", where),
            zombie_per_sec=_price(zombie.get("per_sec", 0.0), "zombie.per_sec", where),
            wedged_zombie_sec=None
            if wedged is None
            else _price(wedged, "zombie.wedged_sec", where),
            default_model=default,
            currency=currency,
        )

    def to_toml(self) -> str:
        """The table as TOML text (:meth:`from_toml` reads it back to an equal table)."""
        return tomli_w.dumps(self.to_dict())

    @classmethod
    def from_toml(cls, text: str, *, where: str = "<text>") -> PriceTable:
        """A table from TOML text; a syntax error names ``where`` and the line."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PriceTableError(where, "<toml>", f"not valid TOML ({exc})") from None
        return cls.from_dict(data, where=where)


def load_prices(path: str | os.PathLike[str]) -> PriceTable:
    """The price table in the TOML file at ``path`` (errors name the file and the key)."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PriceTableError(str(where), "<file>", "no such file") from None
    except UnicodeDecodeError:
        raise PriceTableError(str(where), "<file>", "not UTF-8 text") from None
    return PriceTable.from_toml(text, where=str(where))


def save_prices(table: PriceTable, path: str | os.PathLike[str]) -> None:
    """Write ``table`` to ``path`` as TOML, atomically."""
    write_text_atomic(Path(path), table.to_toml())


def _only(data: Mapping[str, Any], allowed: tuple[str, ...], prefix: str, where: str) -> None:
    for key in data:
        if key not in allowed:
            raise PriceTableError(
                where, f"{prefix}{key}", f"unknown key (expected one of {', '.join(allowed)})"
            )


def _section(data: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise PriceTableError(where, name, f"expected a table, got {value!r}")
    return value


def _price(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PriceTableError(where, key, f"expected a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise PriceTableError(where, key, f"must be finite, got {value!r}")
    if number < 0:
        raise PriceTableError(where, key, f"must not be negative, got {value!r}")
    return number


def _check_table(table: PriceTable, where: str) -> None:
    """The invariants a table built in Python must keep too (prices finite and >= 0...)."""
    for key, value in (
        ("slot.per_sec", table.slot_per_sec),
        ("zombie.per_sec", table.zombie_per_sec),
    ):
        _price(value, key, where)
    if table.wedged_zombie_sec is not None:
        _price(table.wedged_zombie_sec, "zombie.wedged_sec", where)
    for name, price in table.models.items():
        _check_model_name(name, where)
        if not isinstance(price, ModelPrice):
            raise PriceTableError(where, f"models.{name}", "expected a ModelPrice")
        _price(price.input_per_mtok, f"models.{name}.input_per_mtok", where)
        _price(price.output_per_mtok, f"models.{name}.output_per_mtok", where)
    if table.default_model is not None and table.default_model not in table.models:
        raise PriceTableError(
            where, "default_model", _not_listed(table.default_model, table.models)
        )


def _check_model_name(name: Any, where: str) -> None:
    """A listed model's name: a non-empty string whose ``/``-separated parts are not empty."""
    if not isinstance(name, str) or not name:
        raise PriceTableError(where, f"models.{name}", "expected a non-empty model name")
    if "" in name.split("/"):
        raise PriceTableError(
            where,
            f"models.{name}",
            "a model name's parts between '/' must not be empty (e.g. provider/model)",
        )


def _not_listed(model: str, models: Mapping[str, Any]) -> str:
    return f"{model!r} is not one of the models listed ({', '.join(models) or 'none'})"
