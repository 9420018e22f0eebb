"""What each engine honours: the one declaration that replaces the scattered "this one cannot".

An :class:`Honours` lists the policy parts (:data:`~reviewlab.core._policy.POLICY_PARTS`), the
censoring modes, the model's reactions and the options an engine takes, and whether it gives
frames. :meth:`Honours.check` is the one refusal: a policy part, mode, reaction or option the
engine does not honour is a ``ValueError`` naming it and why, before any work. The engine
objects (:mod:`reviewlab.engines._engine`) carry one each; the engines' own functions
(``simulate``, ``replay_vectorized``, ``replay_real``) check their single pass against it with
``rewritten`` parts left out: those the dispatch's rewrite fixed point replays around the pass
(:mod:`reviewlab.engines._reaction`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import POLICY_PARTS, Policy, PolicyError
from reviewlab.core._vocab import CENSORING_MODES, DEFAULT_CENSORING, DEFAULT_REACTION, REACTIONS

_WHY = {
    "breaker": "a breaker is replayed around an engine's pass (the rewrite fixed point)",
    "hedges": "hedges need an engine that starts second attempts on Episode objects",
    "idle_sec": "idle timeouts need progress reports",
    "tasks": "tasks run live through an MCP server (MCPServer); no replay engine replays them",
    "cap_rule": "only the twin replays another SDK's cap rule; reviewlab's executors and the "
    "other engines hold the bound as a true total cap",
}


@dataclass(frozen=True)
class Honours:
    """What one engine honours (every list closed: what is not listed is refused by name)."""

    engine: str
    """How the engine is named in a refusal."""
    parts: frozenset[str]
    """The policy parts it honours (the dispatch's rewrite fixed point included)."""
    censoring: tuple[str, ...] = CENSORING_MODES
    """The censoring modes it replays."""
    reactions: tuple[str, ...] = REACTIONS
    """The model's reactions it replays."""
    options: tuple[str, ...] = ()
    """The options it takes (the engine object's fields: ``replay(..., slots=6)`` sets one)."""
    frames: bool = True
    """Whether its answer has call and episode frames (else a summary only)."""
    rewritten: frozenset[str] = frozenset()
    """Parts the dispatch replays around the engine's own pass (the breaker's fixed point)."""
    why: Mapping[str, str] = field(default_factory=dict)
    """A refusal's reason, by part (default: the part's general reason)."""

    def check(
        self,
        policy: Policy,
        censored: str = DEFAULT_CENSORING,
        reaction: str = DEFAULT_REACTION,
        options: Iterable[str] = (),
        *,
        single_pass: bool = False,
    ) -> None:
        """Refuse by name the first policy part, censoring mode, reaction or option this
        engine does not honour (``single_pass``: without the dispatch's fixed point)."""
        honoured = self.parts - self.rewritten if single_pass else self.parts
        for part in policy.parts_in_use:
            if part not in honoured:
                why = self.why.get(part, _WHY.get(part, ""))
                raise PolicyError(
                    f"{self.engine}",
                    f"the policy's {part} cannot be honoured here "
                    f"(policy {policy.label!r}); {why}".rstrip("; "),
                )
        if censored not in self.censoring:
            why = self.why.get(censored, "")
            raise ParameterError(
                "censored",
                f"{self.engine} replays {', '.join(self.censoring)}, not {censored!r}"
                + (f" ({why})" if why else ""),
            )
        if reaction not in self.reactions:
            raise ParameterError(
                "reaction", f"{self.engine} replays {', '.join(self.reactions)}, not {reaction!r}"
            )
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise TypeError(
                f"{self.engine}: unexpected option(s) {', '.join(unknown)}; it takes "
                f"{', '.join(self.options) or 'none'}"
            )

    def describe(self) -> dict[str, Any]:
        """The declaration as plain data (a table of engines in the docs and the CLI)."""
        return {
            "engine": self.engine,
            "parts": sorted(self.parts),
            "censoring": list(self.censoring),
            "reactions": list(self.reactions),
            "options": list(self.options),
            "frames": self.frames,
        }


_ALL = frozenset(POLICY_PARTS)

TWIN = Honours(
    "the twin",
    _ALL - {"tasks"},
    options=("arrival_rate", "arrivals", "slots", "workers"),
    rewritten=frozenset({"breaker"}),
)
"""The SimPy reference: every replayed part, the other SDKs' cap rule too."""
VECTORIZED = Honours(
    "the vectorized engine",
    _ALL - {"tasks", "cap_rule"},
    rewritten=frozenset({"breaker"}),
)
"""NumPy over every call: the twin's answers without a pool or another SDK's cap rule."""
COMPILED = Honours(
    "a compiled corpus (replay the episodes: reviewlab.replay(..., engine='vectorized'))",
    _ALL - {"tasks", "cap_rule", "hedges", "breaker"},
    reactions=("as_recorded",),
    why={
        "hedges": "second attempts are planned on the episodes",
        "breaker": "a breaker's withheld calls are replayed on the episodes",
    },
)
"""The vectorized engine's columns alone (a sweep's or a tuner's unit of work): calls only."""
REAL = Honours(
    "the real engine",
    _ALL - {"tasks", "cap_rule"},
    options=("concurrency", "settle_sec", "time_scale"),
    why={"cap_rule": "reviewlab's executors hold a true total cap"},
)
"""Every episode through the real executor on threads; it replays the breaker itself."""
CLUSTER = Honours(
    "a replay on a cluster",
    frozenset({"timeouts", "narrowing", "idle_sec"}),
    censoring=("wedge", "observed"),
    reactions=("as_recorded",),
    options=("client",),
    frames=False,
    why={
        "impute": "imputation draws from the whole corpus's Kaplan-Meier estimates",
        "hedges": "hedges are replayed on Episode objects, in-process",
        "breaker": "a breaker is replayed on Episode objects, in-process",
    },
)
"""The vectorized engine on a Dask cluster's partitions: a summary, merged exactly."""
