"""Other frameworks' timeout defaults as policies, scored on the user's own corpus.

The presets are data (``reviewlab/data/presets.toml``, its head documents every field): per
framework or client, its bounds (per tool call, per shell command, on silence, total caps),
what it does on expiry, whether the work is cancelled, its retries and breaker, with the
release and the source the values were read at, unverified values marked as such.

Lifecycle: :func:`load_presets` reads and validates the file (every error names the file and
the field) → :func:`preset_policy` turns one preset into a :class:`~reviewlab.core.policy.Policy`
for the tools of a corpus → :func:`score_presets` replays each (plus any policies the caller
adds, such as ouroboros and a recommendation) and tabulates what each would have cost on this
corpus (docs/metrics.md, "Presets scored on a corpus"). Every replay is the vectorized engine's
under one stated censoring assumption; a preset with a breaker is replayed by
:func:`reviewlab.engines.replay.replay`, which loads the episodes for it.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from reviewlab.core.policy import Policy, TimeoutPolicy
from reviewlab.core.vocab import CENSORING_MODES, SOURCE_GAP_ABANDONED, CensoringMode
from reviewlab.engines.corpus import CorpusSource, open_corpus
from reviewlab.engines.replay import replay
from reviewlab.resources import data_path

__all__ = [
    "PRESETS_FILE",
    "SCORE_COLUMNS",
    "SERVER_OUTCOMES",
    "SHELL_TOOLS",
    "Preset",
    "find_preset",
    "load_presets",
    "preset_policy",
    "preset_table",
    "score_presets",
]

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
SCORE_COLUMNS: Final = (
    "preset",
    "framework",
    "version",
    "verified",
    "abandoned_call_rate",
    "timeout_coverage_loss_rate",
    "completed_abandoned",
    "wasted_slot_sec",
    "zombie_sec",
    "zombie_finite_sec",
    "max_silence_sec",
    "policy",
)
"""The columns of :func:`score_presets` (docs/metrics.md, "Presets scored on a corpus")."""


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
        raise ValueError(f"{at}: expected a table, got {table!r}")
    known = {f.name for f in fields(Preset)} - {"name"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ValueError(f"{at}: unknown field(s) {', '.join(unknown)}")
    for key in (*_TEXT, "verified", "retries"):
        if key not in table:
            raise ValueError(f"{at}: missing field {key}")
    for key in (*_TEXT, "notes"):
        if key in table and not isinstance(table[key], str):
            raise ValueError(f"{at}.{key}: expected text, got {table[key]!r}")
    if not isinstance(table["verified"], bool):
        raise ValueError(f"{at}.verified: expected true or false, got {table['verified']!r}")
    for key in _SECONDS:
        value = table.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ValueError(f"{at}.{key}: expected positive, finite seconds, got {value!r}")
    for key in ("retries", "breaker_consecutive"):
        value = table.get(key)
        minimum = 0 if key == "retries" else 1
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < minimum
        ):
            raise ValueError(f"{at}.{key}: expected a whole number >= {minimum}, got {value!r}")
    if table["server_cancelled"] not in SERVER_OUTCOMES:
        raise ValueError(
            f"{at}.server_cancelled: expected one of {', '.join(SERVER_OUTCOMES)}, "
            f"got {table['server_cancelled']!r}"
        )
    applies = table.get("idle_applies_to", "all")
    if applies not in ("all", "shell"):
        raise ValueError(f"{at}.idle_applies_to: expected 'all' or 'shell', got {applies!r}")
    values: dict[str, Any] = {
        key: float(value) if key in _SECONDS else value for key, value in table.items()
    }
    preset = Preset(name=name, **values)
    if preset.bounded and (
        _bound(preset, shell=False) is None or _bound(preset, shell=True) is None
    ):
        raise ValueError(
            f"{at}: some calls are bounded and others not, which a replay cannot mix; give "
            "tool_sec (or an idle_sec that applies to all tools)"
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
    raise ValueError(f"preset: no preset named {name!r}{hint} (known: {', '.join(presets)})")


def preset_policy(preset: Preset, tools: Iterable[str]) -> Policy:
    """``preset`` as a :class:`Policy` for a corpus calling ``tools``, by the replay rules of the
    presets file's head: every call is taken as silent (recordings rarely hold progress times),
    so an idle bound acts from the call's start; no bound at all is the pre-fix policy."""
    if not preset.bounded:
        return Policy.unbounded().replace(name=preset.name)
    default = _bound(preset, shell=False)
    shell_bound = _bound(preset, shell=True)
    assert default is not None and shell_bound is not None  # load_presets refuses a mix
    table = {tool: shell_bound for tool in set(tools) if tool in SHELL_TOOLS}
    policy = Policy(
        timeouts=TimeoutPolicy(default_sec=default, tools_sec=table, name=preset.name),
        name=preset.name,
    )
    if preset.breaker_consecutive is not None:
        # Open for the rest of the episode: the framework stops using its tools.
        policy = policy.with_breaker(preset.breaker_consecutive, cooldown_rounds=1_000_000)
    return policy


def _bound_text(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds:g}"


def preset_table(presets: Mapping[str, Preset] | None = None) -> pd.DataFrame:
    """One row per preset: its bounds (``none``: no bound), expiry behaviour, retries,
    breaker, version and source; ``verified`` is ``unverified`` where the values were not read
    in the code."""
    presets = load_presets() if presets is None else presets
    rows = []
    for p in presets.values():
        rows.append(
            {
                "preset": p.name,
                "framework": p.framework,
                "tool_sec": _bound_text(p.tool_sec),
                "shell_sec": _bound_text(p.shell_sec if p.shell_sec is not None else p.tool_sec),
                "idle_sec": _bound_text(p.idle_sec)
                + (" (shell)" if p.idle_sec is not None and p.idle_applies_to == "shell" else ""),
                "total_cap_sec": _bound_text(p.total_cap_sec),
                "episode_cap_sec": _bound_text(p.episode_cap_sec),
                "on_expiry": p.on_expiry,
                "server": p.server_cancelled,
                "retries": p.retries,
                "breaker": (
                    f"{p.breaker_consecutive} in a row" if p.breaker_consecutive else "none"
                ),
                "version": p.version,
                "verified": "verified" if p.verified else "unverified",
                "source": p.source,
            }
        )
    return pd.DataFrame(rows)


def score_presets(
    corpus: CorpusSource,
    *,
    presets: Mapping[str, Preset] | None = None,
    extra: Mapping[str, Policy] | None = None,
    censored: CensoringMode = "wedge",
    seed: int = 0,
) -> pd.DataFrame:
    """Each preset (and each policy of ``extra``, by its given name) replayed on ``corpus``:
    one row of :data:`SCORE_COLUMNS` per policy, presets first. ``censored`` and ``seed`` as
    :func:`~reviewlab.engines.replay.replay`; the frame's ``attrs["assumptions"]`` states them.
    """
    if censored not in CENSORING_MODES:  # before any replay
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    presets = load_presets() if presets is None else presets
    source = open_corpus(corpus)
    tools = source.tools
    recorded = source.observations().completed
    candidates: list[tuple[str, Policy, Preset | None]] = [
        (name, preset_policy(p, tools), p) for name, p in presets.items()
    ]
    candidates += [(name, Policy.of(policy), None) for name, policy in (extra or {}).items()]
    rows = []
    for name, policy, preset in candidates:
        result = replay(source, policy, engine="vectorized", censored=censored, seed=seed)
        calls = result.calls
        abandoned = (calls["source_gap"] == SOURCE_GAP_ABANDONED).to_numpy()
        completed = recorded if recorded.size == len(calls) else calls["completed"].to_numpy(bool)
        waited = calls["wait_sec"].to_numpy(float)
        summary = result.summary
        rows.append(
            {
                "preset": name,
                "framework": preset.framework if preset else "reviewlab",
                "version": preset.version if preset else "",
                "verified": ("verified" if preset.verified else "unverified") if preset else "",
                "abandoned_call_rate": summary["abandoned_call_rate"],
                "timeout_coverage_loss_rate": summary["timeout_coverage_loss_rate"],
                "completed_abandoned": int(np.count_nonzero(abandoned & completed)),
                "wasted_slot_sec": float(waited[abandoned].sum()),
                "zombie_sec": summary["zombie_sec"],
                "zombie_finite_sec": summary["zombie_finite_sec"],
                "max_silence_sec": summary["max_silence_sec"],
                "policy": policy.label,
            }
        )
    frame = pd.DataFrame(rows, columns=list(SCORE_COLUMNS))
    frame.attrs["assumptions"] = {
        "silent_calls": "an idle bound acts from the call's start (no progress recorded)",
        "censored": censored,
        "reaction": "as_recorded",
        "engine": "vectorized",
        "seed": seed,
        "corpus": source.name,
    }
    return frame
