"""A partitioned corpus on a Dask cluster: compiled once on the workers, asked for summaries.

Lifecycle of a :class:`ClusterCorpus`: **open** (the client lists the partitions; survey
tasks read ids and arrivals; compile tasks build each partition's compiled corpus, kept on its
worker as a future; ids checked unique across partitions) → **summaries** (a chunk of points
at a time; passes of small answer tasks narrow the order statistics and the loose-worker peak
until every point is exact, :mod:`._partials`) → **close** (the futures are released).

Invariants: what reaches the client per pass is bounded by the grid, not the corpus; an error
about a partition is the readers' own, the first in partition order; a partition that kills
every worker is :class:`~._errors.PartitionFailed`, a lost scheduler
:class:`~._errors.SchedulerLost`; nothing is returned after a failure. In full:
docs/cluster.md, "A cluster session".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from reviewlab.core._vocab import DEFAULT_CENSORING
from reviewlab.engines.cluster import _ids
from reviewlab.engines.cluster._connect import partitions_of, register_sizes
from reviewlab.engines.cluster._errors import PartitionFailed, SchedulerLost
from reviewlab.engines.cluster._partials import PointMerge, answer_points, evaluate_points

CHUNK_POINTS = 16
"""Points evaluated per task (each keeps its wall keys and loose workers on the worker)."""
ID_BUCKETS = 16
"""Buckets the id-uniqueness check splits the ids into (at most one per partition)."""
_PASS_PRIORITY = 10  # a pass's answers before the next chunk's evaluations
_KEY = re.compile(r"^reviewlab-[a-z]+-p(\d+)-")


def _compile(part: str, censored: str, seed: int, origin_us: int) -> Any:
    """One partition compiled on a worker, on the corpus's clock (a worker task)."""
    import pyarrow as pa

    from reviewlab.engines.vectorized import CompiledCorpus

    register_sizes(CompiledCorpus)

    from reviewlab.engines.vectorized._columns import compile_columns
    from reviewlab.recording._file_errors import EpisodeFormatError
    from reviewlab.recording._locations import location_of

    try:
        return compile_columns(location_of(part), censored=censored, seed=seed, origin_us=origin_us)
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise EpisodeFormatError(part, 0, "<parquet>", f"unreadable ({exc})") from None


def _shape(c: Any) -> tuple[int, int, list[str]]:
    """A compiled partition's episodes, calls and tools (a worker task)."""
    return len(c.episode_ids), int(c.calls), sorted(c.tools)


class ClusterCorpus:
    """A partitioned corpus compiled on a cluster (see the module docstring)."""

    def __init__(self, client: Any, partitions: Sequence[str], *, censored: str, seed: int) -> None:
        self.client = client
        self.partitions = list(partitions)
        self.censored = censored
        self.seed = seed
        self.address = str(getattr(getattr(client, "scheduler", None), "address", "") or "")
        self._token = uuid.uuid4().hex[:12]
        self.episodes = 0
        self.calls = 0
        self.tools: list[str] = []
        self.origin_us = 0
        self._compiled: list[Any] = []
        self._offsets: list[int] = []
        self.passes: list[int] = []
        self._round = 0
        """Per chunk of points summarised, the answer passes it took (for the benchmark)."""

    # -- opening ------------------------------------------------------------------
    @classmethod
    def open(
        cls, source: Any, client: Any, *, censored: str = DEFAULT_CENSORING, seed: int = 0
    ) -> ClusterCorpus:
        """List, survey and compile the partitions of ``source`` on ``client``'s cluster."""
        if censored == "impute":
            raise ValueError(
                "censored='impute' draws from the whole corpus's Kaplan-Meier estimates, which a "
                "partition alone cannot reproduce; sweep it in-process or use 'wedge' or 'observed'"
            )
        corpus = cls(client, partitions_of(source), censored=censored, seed=seed)
        with corpus.watching():
            corpus._open()
        return corpus

    def _key(self, stage: str, partition: int, extra: str = "") -> str:
        return f"reviewlab-{stage}-p{partition}-{self._token}{extra}"

    def _open(self) -> None:
        c, parts = self.client, self.partitions
        buckets = max(1, min(ID_BUCKETS, len(parts)))
        surveys = [
            c.submit(_ids.survey, part, buckets, key=self._key("survey", p))
            for p, part in enumerate(parts)
        ]
        heads = self._in_order(
            [c.submit(_ids.survey_head, s, key=self._key("head", p)) for p, s in enumerate(surveys)]
        )
        firsts = [first for _, first in heads if first is not None]
        self.origin_us = min(firsts) if firsts else 0
        self._compiled = [
            c.submit(
                _compile,
                part,
                self.censored,
                self.seed,
                self.origin_us,
                key=self._key("compile", p),
            )
            for p, part in enumerate(parts)
        ]
        shapes = self._in_order(
            [c.submit(_shape, f, key=self._key("shape", p)) for p, f in enumerate(self._compiled)]
        )
        self._check_ids(surveys, buckets)
        del surveys
        self._offsets = []
        for episodes, calls, tools in shapes:
            self._offsets.append(self.calls)
            self.episodes += episodes
            self.calls += calls
            self.tools = sorted(set(self.tools) | set(tools))

    def _in_order(self, futures: list[Any]) -> list[Any]:
        """Every future's result; the first failure in partition order is raised."""
        from distributed import wait

        wait(futures)
        return [future.result() for future in futures]

    def _check_ids(self, surveys: list[Any], buckets: int) -> None:
        c = self.client
        checks = []
        for b in range(buckets):
            pieces = [
                c.submit(_ids.survey_bucket, s, b, key=self._key("bucket", p, f"-{b}"))
                for p, s in enumerate(surveys)
            ]
            checks.append(c.submit(_ids.check_bucket, *pieces, key=self._key("ids", 0, f"-{b}")))
        repeats = [group for found in self._in_order(checks) for group in found]
        if not repeats:
            return
        wanted: dict[int, set[int]] = {}
        for _, places in repeats:
            for part, row in places:
                wanted.setdefault(part, set()).add(row)
        asked = {part: sorted(rows) for part, rows in wanted.items()}
        found = self._in_order(
            [c.submit(_ids.ids_at, self.partitions[part], rows) for part, rows in asked.items()]
        )
        id_at = {
            (part, row): value
            for (part, rows), values in zip(asked.items(), found, strict=True)
            for row, value in zip(rows, values, strict=True)
        }
        first_repeat = None
        for _, places in repeats:
            seen: dict[str, tuple[int, int]] = {}
            for place in places:  # in corpus order
                episode_id = id_at[place]
                if episode_id in seen:
                    if first_repeat is None or place < first_repeat[0]:
                        first_repeat = (place, seen[episode_id], episode_id)
                    break
                seen[episode_id] = place
        if first_repeat is None:
            return  # hash collisions only
        from reviewlab.recording.columnar import repeated_id_error

        (part, row), (first_part, first_row), episode_id = first_repeat
        raise repeated_id_error(
            self.partitions[part], row, episode_id, self.partitions[first_part], first_row
        )

    # -- failures -----------------------------------------------------------------
    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Dask's failures as one error naming the partition or the scheduler."""
        from distributed.client import FutureCancelledError, FuturesCancelledError
        from distributed.comm.core import CommClosedError
        from distributed.scheduler import KilledWorker

        try:
            yield
        except KilledWorker as exc:
            key = str(getattr(exc, "task", "") or (exc.args[0] if exc.args else ""))
            found = _KEY.match(key)
            where = self.partitions[int(found.group(1))] if found else "a partition"
            raise PartitionFailed(
                where,
                "every worker that worked on it died (out of memory? a worker needs memory for "
                "its compiled partitions); use smaller partitions or workers with more memory",
            ) from None
        except (
            FutureCancelledError,
            FuturesCancelledError,
            concurrent.futures.CancelledError,
            asyncio.CancelledError,
            CommClosedError,
            TimeoutError,
            OSError,
        ) as exc:
            lost = getattr(exc, "reason", "") == "scheduler-connection-lost"
            if lost or self._scheduler_gone():
                raise SchedulerLost(
                    self.address or "(unknown address)",
                    "the connection to the scheduler was lost during the work; nothing was "
                    "returned",
                ) from None
            raise

    def _scheduler_gone(self) -> bool:
        return getattr(self.client, "status", "running") != "running"

    # -- summaries ----------------------------------------------------------------
    def summaries(
        self,
        policies: Sequence[Any],
        *,
        chunk_size: int | None = None,
        done: Callable[[int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """The summary of every policy on the whole corpus, in order (``done(n)`` after each
        chunk of ``n``)."""
        return [row for row, _ in self.evaluate(policies, chunk_size=chunk_size, done=done)]

    def evaluate(
        self,
        policies: Sequence[Any],
        *,
        chunk_size: int | None = None,
        done: Callable[[int], None] | None = None,
        extra: Callable[[Any, Any, Any], Any] | None = None,
        extra_args: Sequence[Any] | None = None,
    ) -> list[tuple[dict[str, Any], list[Any]]]:
        """Per policy, in order: its summary, and each partition's ``extra(compiled, evaluation,
        extra_args[p])`` partial in partition order (``[]`` without ``extra``). ``extra_args``:
        one per partition (futures stay on the workers)."""
        size = chunk_size or CHUNK_POINTS
        chunks = [list(policies[i : i + size]) for i in range(0, len(policies), size)]
        args = list(extra_args) if extra_args is not None else [None] * len(self.partitions)
        rows: list[tuple[dict[str, Any], list[Any]]] = []
        with self.watching():
            launched: list[list[Any] | None] = [
                self._evaluate(c, 0, extra, args) for c in chunks[:1]
            ]
            for number, chunk in enumerate(chunks):
                if number + 1 < len(chunks):  # the workers evaluate it while this one merges
                    launched.append(self._evaluate(chunks[number + 1], number + 1, extra, args))
                states = launched[number]
                launched[number] = None  # released once merged
                assert states is not None
                rows.extend(self._merge(chunk, states, number))
                del states
                if done is not None:
                    done(len(chunk))
        return rows

    def _evaluate(
        self,
        chunk: list[Any],
        number: int,
        extra: Callable[[Any, Any, Any], Any] | None,
        args: list[Any],
    ) -> list[Any]:
        self._round += 1
        return [
            self.client.submit(
                evaluate_points,
                compiled,
                chunk,
                self._offsets[p],
                self.calls,
                extra,
                args[p],
                key=self._key("evaluate", p, f"-{self._round}-{number}"),
            )
            for p, compiled in enumerate(self._compiled)
        ]

    def _merge(
        self, chunk: list[Any], states: list[Any], number: int
    ) -> list[tuple[dict[str, Any], list[Any]]]:
        from distributed import as_completed

        merges = [PointMerge(self.episodes, self.calls) for _ in chunk]
        first = True
        passes = 0
        while True:
            requests = [m.requests(first) for m in merges]
            if all(r is None for r in requests):
                break
            futures = {
                self.client.submit(
                    answer_points,
                    state,
                    requests,
                    key=self._key("answer", p, f"-{self._round}-{number}-{passes}"),
                    priority=_PASS_PRIORITY,
                ): p
                for p, state in enumerate(states)
            }
            for future in as_completed(list(futures)):
                answers = future.result()  # a failure raises here, in watching()
                for merge, answer in zip(merges, answers, strict=True):
                    if answer is not None:
                        merge.take(answer, futures[future])
            del futures
            for merge in merges:
                merge.close_pass()
            first = False
            passes += 1
        self.passes.append(passes)
        return [
            (merge.summary(), [merge.extras[p] for p in sorted(merge.extras)]) for merge in merges
        ]

    # -- the partitions, for callers' own tasks ------------------------------------
    def on_partitions(
        self, function: Callable[..., Any], *args: Any, stage: str, wedge: bool = False
    ) -> list[Any]:
        """``function(compiled, *args)`` on every partition, as futures kept on the workers
        (``wedge``: on the partition compiled with ``censored="wedge"``, the recorded
        observations, compiled anew when this corpus is not)."""
        compiled = self._compiled
        if wedge and self.censored != "wedge":
            compiled = [
                self.client.submit(
                    _compile,
                    part,
                    "wedge",
                    self.seed,
                    self.origin_us,
                    key=self._key("wedge", p),
                )
                for p, part in enumerate(self.partitions)
            ]
        self._round += 1
        return [
            self.client.submit(function, c, *args, key=self._key(stage, p, f"-{self._round}"))
            for p, c in enumerate(compiled)
        ]

    @property
    def compiled_partitions(self) -> list[Any]:
        """The compiled partitions, as futures on the workers (in partition order)."""
        return list(self._compiled)

    def results(self, futures: list[Any]) -> list[Any]:
        """Every future's result in order (the first failure in order is raised, named)."""
        with self.watching():
            return self._in_order(futures)

    # -- lifetime -----------------------------------------------------------------
    def close(self) -> None:
        """Release the compiled partitions on the workers."""
        self._compiled = []

    def __enter__(self) -> ClusterCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
