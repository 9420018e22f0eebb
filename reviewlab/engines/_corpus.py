"""The corpus handle: one value every replay, sweep, tuner and command takes.

:func:`open_corpus` takes a path (``.jsonl``, ``.jsonl.gz``, a ``.parquet`` file, a directory
of partitions, a gateway's folder of sessions, a ``bundled:`` name), a list of episodes, a
compiled corpus, or a :class:`Corpus` (returned as is). The handle is the one place compiled
forms are kept; a list opened again gets its kept handle back (docs/architecture.md, "The
corpus handle: the one cache").

Lifecycle of a :class:`Corpus`: opened → compiled on first ask, once per ``(censored, seed)``
(:meth:`Corpus.compiled`) and once for the twin → loaded on first ask (:meth:`Corpus.episodes`,
the reason kept in :attr:`Corpus.loaded_because`; a gateway's folder when opened).

Invariants: every error names the file (and line, row and field where known); ``on_error=
"skip"`` drops bad lines into :attr:`Corpus.skipped`, never silently.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from reviewlab.core._display import RichDisplay
from reviewlab.core._errors import ParameterError
from reviewlab.core._vocab import CENSORING_MODES, DEFAULT_CENSORING, ON_ERROR_MODES
from reviewlab.engines._censoring import KaplanMeier
from reviewlab.engines.vectorized._compiled import CompiledCorpus
from reviewlab.recording._file_errors import EpisodeFormatError, SkippedLine
from reviewlab.recording._schema import Episode
from reviewlab.resources import resolve

if TYPE_CHECKING:
    from reviewlab.engines.twin._corpus import TwinCorpus

COMPILED_KEPT = 3
"""Compiled corpora one handle keeps (a replay's two censoring ends and one more)."""

HANDLES_KEPT = 2
"""Handles of lists of episodes :func:`open_corpus` keeps (least recently used goes first)."""


class Corpus(RichDisplay, display="corpus"):
    """An open corpus: compiled once per censoring assumption, its episodes loaded once if asked.

    Made by :func:`open_corpus`. ``path`` is where it lives on disk (``None`` for episodes in
    memory); ``name`` is how errors and tables name it; ``skipped`` the lines or rows dropped
    under ``on_error="skip"``; ``loaded_because`` why the ``Episode`` objects were loaded (empty
    while they were not, or when they were given).
    """

    def __init__(
        self,
        *,
        path: Path | None = None,
        episodes: list[Episode] | None = None,
        compiled: CompiledCorpus | None = None,
        name: str = "",
        on_error: str = "raise",
    ) -> None:
        self.path = path
        self.name = name or (str(path) if path is not None else "<episodes>")
        self.on_error = on_error
        self.skipped: list[SkippedLine] = []
        self.loaded_because: list[str] = []
        self._episodes = episodes
        self._fixed = compiled
        self._compiled: OrderedDict[tuple[str, int], CompiledCorpus] = OrderedDict()
        if compiled is not None:
            self._compiled[(compiled.censored, int(compiled.seed))] = compiled
        self._twin: TwinCorpus | None = None
        self._observations: CallObservations | None = None
        self._lock = threading.RLock()  # a sweep's threads may ask at once

    def __repr__(self) -> str:
        state = "loaded" if self._episodes is not None else "not loaded"
        kept = ", ".join(f"{c}/{s}" for c, s in self._compiled) or "none"
        return f"<Corpus {self.name} ({state}; compiled: {kept})>"

    # -- compiled columns -------------------------------------------------
    def compiled(self, censored: str = DEFAULT_CENSORING, seed: int = 0) -> CompiledCorpus:
        """The corpus compiled for the vectorized engine under ``censored`` (and ``seed``,
        which fixes the imputed durations), built on first ask and kept."""
        if censored not in CENSORING_MODES:
            raise ParameterError(
                "censored", f"expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise ParameterError("seed", f"expected a whole number, got {seed!r}")
        key = (censored, int(seed))
        with self._lock:
            found = self._compiled.get(key)
            if found is not None:
                self._compiled.move_to_end(key)
                return found
            if self._fixed is not None:
                raise ParameterError(
                    "censored",
                    "the compiled corpus was built with censored="
                    f"{self._fixed.censored!r}, seed={self._fixed.seed}, not censored="
                    f"{censored!r}, seed={seed}; compile it again or pass its episodes or path",
                )
            built = self._compile(censored, int(seed))
            self._compiled[key] = built
            while len(self._compiled) > COMPILED_KEPT:
                self._compiled.popitem(last=False)
            return built

    def _compile(self, censored: str, seed: int) -> CompiledCorpus:
        if self._episodes is not None:
            return CompiledCorpus(self._episodes, censored=censored, seed=seed)
        assert self.path is not None
        from reviewlab.engines.vectorized._columns import compile_columns

        try:
            return compile_columns(self.path, censored=censored, seed=seed)
        except EpisodeFormatError:
            if self.on_error != "skip":
                raise
            # A defective file under on_error="skip": the episode reader drops and records its
            # bad lines, and the rest is compiled from the objects.
            why = "on_error='skip': the file has defective lines"
        except OverflowError:  # a valid integer past what a columnar integer holds (2**63)
            why = "an integer too large for the columns"
        return CompiledCorpus(self.episodes(reason=why), censored=censored, seed=seed)

    def twin_compiled(self) -> TwinCorpus:
        """The corpus compiled for the twin (policy- and censoring-free tuples and columns),
        built from the episodes on first ask and kept."""
        with self._lock:
            if self._twin is None:
                from reviewlab.engines.twin._corpus import TwinCorpus

                why = "engine='twin' replays Episode objects"
                self._twin = TwinCorpus(self.episodes(reason=why))
            return self._twin

    def any_compiled(self) -> CompiledCorpus:
        """A compiled corpus of this handle, whichever is at hand (``wedge`` if none is): for
        what does not depend on the censoring (ids, tools, counts)."""
        with self._lock:
            if self._compiled:
                return next(reversed(self._compiled.values()))
        return self.compiled()

    # -- episodes -----------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """Whether the ``Episode`` objects are in memory (given, or loaded on an ask)."""
        return self._episodes is not None

    def episodes(self, reason: str = "") -> list[Episode]:
        """The ``Episode`` objects, in corpus order, loaded on first ask and kept.

        ``reason`` says why the caller needs objects rather than the compiled columns (it is
        recorded in :attr:`loaded_because`, and names the refusal of a compiled corpus).
        """
        with self._lock:
            if self._episodes is None:
                if self.path is None:
                    why = f"{reason}: " if reason else ""
                    raise ValueError(
                        f"{why}a compiled corpus holds no Episode objects; pass the episodes "
                        "or the corpus path"
                    )
                from reviewlab.recording._files import load_episodes

                skip = self.on_error == "skip"
                loaded = load_episodes(self.path, on_error="skip" if skip else "raise")
                self.skipped = list(loaded.skipped)
                self._episodes = list(loaded)
            if reason and reason not in self.loaded_because:
                self.loaded_because.append(reason)
            return self._episodes

    def __iter__(self) -> Iterator[Episode]:
        return iter(self.episodes(reason="iteration"))

    def __len__(self) -> int:
        if self._episodes is not None:
            return len(self._episodes)
        if self._compiled or self.path is None:
            return len(self.any_compiled().episode_ids)
        if self.on_error == "raise" and (self.path.suffix == ".parquet" or self.path.is_dir()):
            return _parquet_rows(self.path)  # metadata only
        return len(self.any_compiled().episode_ids)

    @property
    def tools(self) -> list[str]:
        """The tools the corpus calls, sorted."""
        if self._episodes is not None:
            return sorted({call.tool for ep in self._episodes for call in ep.calls})
        compiled = self.any_compiled()
        used = np.unique(np.asarray(compiled.tool_code))
        return sorted(compiled.tools[int(code)] for code in used)

    def observations(self) -> CallObservations:
        """Every call's recorded effective observation, from the ``wedge`` compile (no
        imputation): what duration estimates and tail models are fitted to (made once)."""
        with self._lock:
            if self._observations is None:
                self._observations = CallObservations.of(self.compiled("wedge", 0))
            return self._observations


def _parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    from reviewlab.recording.columnar import partition_paths

    total = 0
    for part in partition_paths(path):
        try:
            total += pq.ParquetFile(part).metadata.num_rows
        except Exception as exc:  # noqa: BLE001 - Arrow raises several types for a bad file
            raise EpisodeFormatError(part, 0, "<parquet>", f"not a Parquet file ({exc})") from None
    return total


@dataclass(frozen=True)
class CallObservations:
    """Per call, in corpus order: its tool, episode, effective ``duration_sec`` and
    ``completed`` (``returned_after_sec`` wins; censored calls stay censored), and its
    requested read lines. ``tools`` is in order of first appearance."""

    tools: tuple[str, ...]
    tool_code: np.ndarray
    episode_index: np.ndarray
    duration_sec: np.ndarray
    completed: np.ndarray
    requested_lines: np.ndarray
    episodes: int

    @classmethod
    def of(cls, compiled: CompiledCorpus) -> CallObservations:
        """The observations of a corpus compiled under ``censored="wedge"``."""
        if compiled.censored != "wedge":
            raise ParameterError(
                "observations",
                "read from a corpus compiled with censored='wedge' (the recorded "
                f"observations), not {compiled.censored!r}",
            )
        codes = np.asarray(compiled.tool_code, dtype=np.intp)
        present, first = np.unique(codes, return_index=True)
        order = present[np.argsort(first, kind="stable")]
        rank = np.zeros(len(compiled.tools) or 1, dtype=np.intp)
        rank[order] = np.arange(order.size)
        return cls(
            tools=tuple(compiled.tools[int(code)] for code in order),
            tool_code=rank[codes] if codes.size else codes,
            episode_index=np.asarray(compiled.episode_index, dtype=np.intp),
            duration_sec=np.asarray(compiled.duration_sec, dtype=float),
            completed=np.asarray(compiled.completed, dtype=bool),
            requested_lines=np.asarray(compiled.requested_lines, dtype=np.int64),
            episodes=len(compiled.episode_ids),
        )

    def of_tool(self, tool: str) -> np.ndarray:
        """The positions of ``tool``'s calls, in corpus order."""
        return np.flatnonzero(self.tool_code == self.tools.index(tool))

    def estimates_by_tool(self) -> tuple[dict[str, KaplanMeier], KaplanMeier]:
        """One :class:`KaplanMeier` per tool and the pooled one, exactly as
        :func:`~reviewlab.engines._censoring.estimates_by_tool` gives them for the episodes
        (estimated once; the tuner and its tail model both read them)."""
        per_tool, pooled = self._estimates
        return dict(per_tool), pooled

    @cached_property
    def _estimates(self) -> tuple[dict[str, KaplanMeier], KaplanMeier]:
        per_tool = {}
        for tool in self.tools:
            mine = self.of_tool(tool)
            per_tool[tool] = KaplanMeier(self.duration_sec[mine], self.completed[mine])
        grouped = np.argsort(self.tool_code, kind="stable")  # tool by tool, corpus order within
        return per_tool, KaplanMeier(self.duration_sec[grouped], self.completed[grouped])

    def longest_completed(self) -> dict[str, float]:
        """Per tool, its longest call that returned (tools none of whose calls returned are
        absent)."""
        longest = {}
        for tool in self.tools:
            mine = self.of_tool(tool)
            done = self.duration_sec[mine][self.completed[mine]]
            if done.size:
                longest[tool] = float(done.max())
        return longest

    def exposure_lines(self) -> np.ndarray:
        """Per call, the lines its abandonment would cost: its own requested lines plus every
        later call's in its episode (crediting stops at the first abandonment:
        docs/semantics.md, "Crediting")."""
        lines = self.requested_lines
        if not lines.size:
            return np.zeros(0, dtype=np.int64)
        through = np.cumsum(lines)  # lines of the corpus's calls up to each call, itself included
        last = np.cumsum(np.bincount(self.episode_index, minlength=self.episodes)) - 1
        return through[last[self.episode_index]] - (through - lines)


CorpusSource: TypeAlias = str | os.PathLike[str] | Iterable[Episode] | Corpus | CompiledCorpus
"""What :func:`open_corpus` (and every function that reads a corpus) takes."""


def open_corpus(source: CorpusSource, *, on_error: str = "raise") -> Corpus:
    """``source`` as a :class:`Corpus` (see the module docstring); a :class:`Corpus` is returned
    as is. ``on_error="skip"``: a defective file's bad lines are dropped and recorded in
    ``.skipped`` instead of raising (files only)."""
    if on_error not in ON_ERROR_MODES:
        raise ParameterError("on_error", f"expected 'raise' or 'skip', got {on_error!r}")
    if isinstance(source, Corpus):
        return source
    if isinstance(source, CompiledCorpus):
        return Corpus(compiled=source, name="<compiled corpus>")
    if isinstance(source, str | os.PathLike):
        path = resolve(source) if isinstance(source, str) else Path(source)  # bundled: names
        if not path.exists():
            raise FileNotFoundError(2, "No such file or directory", str(path))
        from reviewlab.recording.journal import is_session_folder

        if is_session_folder(path):  # a gateway's sessions, read now: one snapshot while it writes
            from reviewlab.recording._files import load_episodes

            loaded = load_episodes(path, on_error="skip" if on_error == "skip" else "raise")
            corpus = Corpus(path=path, episodes=list(loaded), on_error=on_error)
            corpus.skipped = list(loaded.skipped)
            return corpus
        return Corpus(path=path, on_error=on_error)
    if isinstance(source, bytes) or not isinstance(source, Iterable):
        raise TypeError(
            "corpus: expected a path (JSONL, JSONL.gz, Parquet, a partition directory), "
            f"Episode objects or a Corpus, got {type(source).__name__}"
        )
    episodes = source if isinstance(source, list) else list(source)
    if not all(issubclass(kind, Episode) for kind in set(map(type, episodes))):  # one pass in C
        for index, episode in enumerate(episodes):
            if not isinstance(episode, Episode):
                raise TypeError(
                    f"corpus[{index}]: expected an Episode, got {type(episode).__name__}"
                )
    name = str(getattr(source, "path", "") or "")  # a LoadedEpisodes knows its file
    return _kept_handle(episodes, name)


_HANDLES: OrderedDict[tuple[int, int, int], Corpus] = OrderedDict()
_HANDLES_LOCK = threading.Lock()  # a sweep's threads may open at once


def _kept_handle(episodes: list[Episode], name: str) -> Corpus:
    """The kept handle of these episodes in this order, else a new one kept in its place."""
    key = (len(episodes), id(episodes[0]), id(episodes[-1])) if episodes else (0, 0, 0)
    with _HANDLES_LOCK:
        found = _HANDLES.get(key)
        if found is not None and found._episodes == episodes:
            _HANDLES.move_to_end(key)
            return found
        # Its own copy: the ids in the key stay alive, and a change to the caller's list
        # misses the equality check above instead of changing what was compiled.
        corpus = Corpus(episodes=list(episodes), name=name)
        _HANDLES[key] = corpus
        _HANDLES.move_to_end(key)
        while len(_HANDLES) > HANDLES_KEPT:
            _HANDLES.popitem(last=False)
        return corpus


def clear_corpora() -> None:
    """Forget every handle :func:`open_corpus` keeps for lists of episodes, and with them their
    compiled forms: to free memory, or after changing an episode's own lists in place (a
    frozen episode's ``rounds`` list is still a list)."""
    with _HANDLES_LOCK:
        _HANDLES.clear()
