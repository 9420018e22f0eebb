"""What the importers share: the error type, time parsing and the shell-command classifier."""

from __future__ import annotations

import os
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path


class ImportFormatError(ValueError):
    """A foreign log that cannot be turned into episodes; names the file and where in it."""

    def __init__(self, path: str | os.PathLike[str], where: str, message: str) -> None:
        self.path = str(path)
        self.where = where
        self.message = message
        super().__init__(f"{self.path}: {where}: {message}")


def parse_time(value: object, *, path: Path, where: str) -> datetime:
    """An ISO timestamp as an aware datetime; naive stamps are read
    as UTC (OpenHands writes those)."""
    if not isinstance(value, str):
        raise ImportFormatError(path, where, f"timestamp must be an ISO string, got {value!r}")
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ImportFormatError(path, where, f"bad timestamp {value!r}: {exc}") from None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def seconds_between(earlier: datetime, later: datetime) -> float:
    """``later - earlier`` in seconds, never negative (clock jitter between writers)."""
    return max(0.0, (later - earlier).total_seconds())


_SEARCH = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "git-grep"}
_LIST = {"ls", "tree", "dir"}
_READ = {"cat", "head", "tail", "less", "more", "nl", "bat"}
_PREFIXES = {"cd", "sudo", "time", "env", "nohup"}


def classify_command(command: str) -> str:
    """Our tool name for a shell command: ``search_code``, ``list_files``,
    ``read_file`` or ``run_command``.

    The first word that does the work decides: ``cd X &&`` prefixes and
    ``sudo``/``time`` wrappers are skipped, so ``cd repo && grep -rn foo``
    is a search. Pipelines count by their first stage (``grep … | head`` is a
    search). Anything else (builds, tests, servers, editors) is ``run_command``.
    """
    for segment in re.split(r"&&|\|\||;|\n", command):
        head = segment.split("|", 1)[0].strip()
        if not head:
            continue
        try:
            words = shlex.split(head)
        except ValueError:
            words = head.split()
        words = [w for w in words if "=" not in w or w.startswith("-")]  # drop VAR=value prefixes
        while words and words[0] in _PREFIXES - {"cd"}:
            words = words[1:]
        if not words or words[0] == "cd":
            continue
        program = os.path.basename(words[0])
        if program == "git" and len(words) > 1 and words[1] == "grep":
            return "search_code"
        if program in _SEARCH:
            return "search_code"
        if program in _LIST:
            return "list_files"
        if program in _READ:
            return "read_file"
        return "run_command"
    return "run_command"
