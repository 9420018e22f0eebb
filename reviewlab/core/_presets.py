"""The one preset registry: every policy a name stands for, and :meth:`Policy.parse`'s reading.

A preset is ``ouroboros`` (the reference system), ``unbounded`` (the pre-fix behaviour; also
``pre-fix``), ``uniform:SEC`` (every tool the same bound), or another framework's defaults
as ``reviewlab/data/presets.toml`` states them (its head documents every field).

Lifecycle of a framework preset: :func:`load_presets` reads and validates the file (every error
names the file and the field) -> :func:`preset_policy` turns one into a
:class:`~reviewlab.core._policy.Policy`'s parts (:func:`preset_parts`). :func:`named_parts` is
the registry's one lookup, which :meth:`Policy.parse` builds on, and :func:`preset_names` lists
what it knows. Nothing here imports the policy module, which imports this one.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from reviewlab.core._breaker import BreakerRule
from reviewlab.core._errors import ParameterError
from reviewlab.core._narrowing import Narrowing, PolicyError
from reviewlab.core._timeouts import TimeoutPolicy
from reviewlab.resources import data_path

BUILTIN_PRESETS: Final = ("ouroboros", "unbounded", "uniform:SEC")
"""The presets that are reviewlab's own, as :meth:`Policy.parse` spells them."""
_UNBOUNDED_ALIASES: Final = ("unbounded", "pre-fix", "prefix")

PRESETS_FILE: Final = "presets.toml"
"""The presets' file, relative to :func:`reviewlab.resources.data_path`."""
SHELL_TOOLS: Final = (
    "bash",
    "exec_command",
    "execute_bash",
    "execute_ipython_cell",
    "python",
    "run_command",
    "run_script",
    "shell",
)
"""The tools a preset's ``shell_sec`` (and a shell-only idle bound) applies to."""
SERVER_OUTCOMES: Final = ("cancel request sent", "process killed", "keeps running", "unknown")
"""What a preset says happens to the work when its bound passes."""


@dataclass(frozen=True)
class Preset:
    """One framework's defaults, as ``reviewlab/data/presets.toml`` states them."""

    name: str
    framework: str
    component: str
    version: str
    source: str
    verified: bool
    on_expiry: str
    server_cancelled: str
    retries: int
    tool_sec: float | None = None
    shell_sec: float | None = None
    idle_sec: float | None = None
    idle_applies_to: str = "all"
    total_cap_sec: float | None = None
    episode_cap_sec: float | None = None
    breaker_consecutive: int | None = None
    notes: str = ""

    @property
    def bounded(self) -> bool:
        """Whether any bound applies to some call (else the preset replays as the pre-fix
        policy)."""
        return any(v is not None for v in (self.tool_sec, self.shell_sec, self.idle_sec))


_TEXT = ("framework", "component", "version", "source", "on_expiry", "server_cancelled")
_SECONDS = ("tool_sec", "shell_sec", "idle_sec", "total_cap_sec", "episode_cap_sec")


def _preset(name: str, table: Any, where: str) -> Preset:
    """One validated preset; errors name ``where``, the preset and the field."""
    at = f"{where}: presets.{name}"
    if not isinstance(table, Mapping):
        raise ParameterError(at, f"expected a table, got {table!r}")
    known = {f.name for f in fields(Preset)} - {"name"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ParameterError(at, f"unknown field(s) {', '.join(unknown)}")
    for key in (*_TEXT, "verified", "retries"):
        if key not in table:
            raise ParameterError(at, f"missing field {key}")
    for key in (*_TEXT, "notes"):
        if key in table and not isinstance(table[key], str):
            raise ParameterError(f"{at}.{key}", f"expected text, got {table[key]!r}")
    if not isinstance(table["verified"], bool):
        raise ParameterError(f"{at}.verified", f"expected true or false, got {table['verified']!r}")
    for key in _SECONDS:
        value = table.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ParameterError(f"{at}.{key}", f"expected positive, finite seconds, got {value!r}")
    for key in ("retries", "breaker_consecutive"):
        value = table.get(key)
        minimum = 0 if key == "retries" else 1
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < minimum
        ):
            raise ParameterError(
                f"{at}.{key}", f"expected a whole number >= {minimum}, got {value!r}"
            )
    if table["server_cancelled"] not in SERVER_OUTCOMES:
        raise ParameterError(
            f"{at}.server_cancelled",
            f"expected one of {', '.join(SERVER_OUTCOMES)}, got {table['server_cancelled']!r}",
        )
    applies = table.get("idle_applies_to", "all")
    if applies not in ("all", "shell"):
        raise ParameterError(f"{at}.idle_applies_to", f"expected 'all' or 'shell', got {applies!r}")
    values: dict[str, Any] = {
        key: float(value) if key in _SECONDS else value for key, value in table.items()
    }
    preset = Preset(name=name, **values)
    if preset.bounded and (
        _bound(preset, shell=False) is None or _bound(preset, shell=True) is None
    ):
        raise ParameterError(
            at,
            "some calls are bounded and others not, which a replay cannot mix; give "
            "tool_sec (or an idle_sec that applies to all tools)",
        )
    return preset


def _bound(preset: Preset, *, shell: bool) -> float | None:
    """The replayed bound of a shell command (``shell``) or another tool call: its hard bound,
    or its idle bound if that is shorter (the call is taken as silent: no progress recorded)."""
    hard = preset.shell_sec if shell and preset.shell_sec is not None else preset.tool_sec
    idle = preset.idle_sec if (shell or preset.idle_applies_to == "all") else None
    bounds = [b for b in (hard, idle) if b is not None]
    return min(bounds) if bounds else None


def load_presets(path: str | Path | None = None) -> dict[str, Preset]:
    """The presets of ``path`` (default: the shipped file), by name, in file order."""
    where = Path(path) if path is not None else data_path(PRESETS_FILE)
    try:
        document = tomllib.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{where}: no such presets file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not valid TOML: {exc}") from None
    unknown = sorted(set(document) - {"presets"})
    if unknown:
        raise ValueError(f"{where}: unknown table(s) {', '.join(unknown)}; expected [presets.NAME]")
    tables = document.get("presets", {})
    if not isinstance(tables, Mapping) or not tables:
        raise ValueError(f"{where}: expected at least one [presets.NAME] table")
    return {name: _preset(name, table, str(where)) for name, table in tables.items()}


def find_preset(name: str, presets: Mapping[str, Preset] | None = None) -> Preset:
    """The preset called ``name``; an unknown name is a ``ValueError`` naming the closest
    ones."""
    presets = load_presets() if presets is None else presets
    if name in presets:
        return presets[name]
    close = difflib.get_close_matches(name, list(presets), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ParameterError("preset", f"no preset named {name!r}{hint} (known: {', '.join(presets)})")


def preset_parts(preset: Preset, tools: Iterable[str] = SHELL_TOOLS) -> dict[str, Any]:
    """``preset``'s parts of a :class:`~reviewlab.core._policy.Policy` (its keyword arguments)
    for a corpus calling ``tools``, by the replay rules of the presets file's head: every call
    is taken as silent (recordings rarely hold progress times), so an idle bound acts from the
    call's start; no bound at all is the pre-fix policy. With the default ``tools`` every shell
    tool gets the shell bound, which suits any corpus (a tool never called changes nothing)."""
    if not preset.bounded:
        return {"narrowing": Narrowing.unbounded(), "name": preset.name}
    default = _bound(preset, shell=False)
    shell_bound = _bound(preset, shell=True)
    assert default is not None and shell_bound is not None  # load_presets refuses a mix
    table = {tool: shell_bound for tool in set(tools) if tool in SHELL_TOOLS}
    parts: dict[str, Any] = {
        "timeouts": TimeoutPolicy(default_sec=default, tools_sec=table, name=preset.name),
        "name": preset.name,
    }
    if preset.breaker_consecutive is not None:
        # Open for the rest of the episode: the framework stops using its tools.
        parts["breaker"] = BreakerRule(preset.breaker_consecutive, cooldown_rounds=1_000_000)
    return parts


@lru_cache(maxsize=1)
def _shipped() -> Mapping[str, Preset]:
    return load_presets()


def preset_names() -> tuple[str, ...]:
    """Every name the registry knows: reviewlab's own, then the shipped frameworks'."""
    return (*BUILTIN_PRESETS, *_shipped())


def named_parts(spec: str) -> dict[str, Any] | None:
    """The parts of the policy a preset name stands for (:meth:`Policy.parse` builds it), or
    ``None`` when ``spec`` names no preset; ``uniform:SEC`` with a bad number is a
    :class:`PolicyError` naming the spec."""
    if spec == "ouroboros":
        return {}
    if spec in _UNBOUNDED_ALIASES:
        return {"narrowing": Narrowing.unbounded()}
    if spec.startswith("uniform:"):
        text = spec.partition(":")[2]
        try:
            seconds = float(text)
        except ValueError:
            raise PolicyError(f"policy {spec!r}", "uniform:SEC expected a number") from None
        try:
            return {"timeouts": TimeoutPolicy.uniform(seconds)}
        except ValueError as exc:
            raise PolicyError(f"policy {spec!r}", str(exc)) from None
    shipped = _shipped()
    return preset_parts(shipped[spec]) if spec in shipped else None


def unknown_spec(spec: str) -> PolicyError:
    """The error for a spec that is neither a preset nor a policy file: the closest names."""
    names = preset_names()
    close = difflib.get_close_matches(spec, list(names), n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return PolicyError(
        f"policy {spec!r}",
        f"no such policy file or preset; {hint}(a FILE.toml, or a preset: {', '.join(names)})",
    )
