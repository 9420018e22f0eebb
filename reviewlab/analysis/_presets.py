"""Other frameworks' timeout defaults as policies, scored on the user's own corpus.

The presets are data (``reviewlab/data/presets.toml``, its head documents every field), read
by the one preset registry, :mod:`reviewlab.core._presets` (re-exported here): per framework or
client, its bounds, what it does on expiry, whether the work is cancelled, its retries and
breaker, with the release and the source the values were read at.

Lifecycle: :func:`load_presets` → :func:`preset_policy` (both in
:mod:`reviewlab.core._presets`) → :func:`preset_table` lists them and :func:`score_presets`
replays each (plus any policies the caller adds, such as ouroboros and a recommendation) and
tabulates what each would have cost on this corpus (docs/metrics.md, "Presets scored on a
corpus"). Every replay is the vectorized engine's under one stated censoring assumption; a
preset with a breaker is replayed by :func:`reviewlab.engines._replay.replay`, which loads the
episodes for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy
from reviewlab.core._presets import (
    Preset,
    load_presets,
    preset_parts,
)
from reviewlab.core._vocab import (
    CENSORING_MODES,
    DEFAULT_CENSORING,
    SOURCE_GAP_ABANDONED,
    CensoringMode,
)

if TYPE_CHECKING:
    from reviewlab.engines._corpus import CorpusSource

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


def preset_policy(preset: Preset, tools: Iterable[str]) -> Policy:
    """``preset`` as a :class:`Policy` for a corpus calling ``tools``
    (:func:`~reviewlab.core._presets.preset_parts`)."""
    return Policy(**preset_parts(preset, tools))


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
    censored: CensoringMode = DEFAULT_CENSORING,
    seed: int = 0,
) -> pd.DataFrame:
    """Each preset (and each policy of ``extra``, by its given name) replayed on ``corpus``:
    one row of :data:`SCORE_COLUMNS` per policy, presets first. ``censored`` and ``seed`` as
    :func:`~reviewlab.engines._replay.replay`; the frame's ``attrs["assumptions"]`` states them.
    """
    if censored not in CENSORING_MODES:  # before any replay
        raise ParameterError(
            "censored", f"expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    presets = load_presets() if presets is None else presets
    # The engines load only when presets are scored: listing them needs none (reviewlab presets).
    from reviewlab.engines._corpus import open_corpus
    from reviewlab.engines._replay import replay

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
