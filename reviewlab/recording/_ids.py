"""Episode ids are unique within a corpus: the one rule, and the one wording of a repeat.

Every reader (JSONL lines, columnar rows, partitions, a cluster's partitions), every writer
(JSONL, Parquet, the recorder) and every engine handed a list of episodes enforces it. A repeat
is an error at its later occurrence that says where the id first stood, in the words of
:func:`duplicate_id`; :func:`first_repeat` finds it in a sequence.
"""

from __future__ import annotations

from collections.abc import Iterable


def duplicate_id(episode_id: str, first: str | None = None) -> str:
    """The words for a repeated id: ``duplicate episode id 'a' (first on line 3)``.

    ``first`` says where the id first stood (``line 3``, ``row 2 of part-00000.parquet``,
    ``episodes[0]``); a writer that does not keep places leaves it out.
    """
    where = f" (first on {first})" if first else ""
    return f"duplicate episode id {episode_id!r}{where}"


def first_repeat(ids: Iterable[str]) -> tuple[int, int] | None:
    """``(later, first)``: the position of the first id that repeats an earlier one and the
    position of that earlier one; ``None`` when every id is distinct."""
    seen: dict[str, int] = {}
    for position, episode_id in enumerate(ids):
        first = seen.setdefault(episode_id, position)
        if first != position:
            return position, first
    return None
