"""Path confinement for the inspection tools: nothing outside a root is opened, listed or searched.

Lifecycle of one path argument: :func:`confine` checks the raw text, resolves it through every
symlink and refuses it unless its real location lies inside the root; a file is then opened
with :func:`open_confined`, which re-checks the file actually opened; directories are walked
with :func:`walk`, which reports symlinks and never follows them.

Invariants: every path argument is relative to the root (an absolute path, ``..``, a NUL
byte, an over-long path or a real location outside the root is a :class:`ToolError` naming
the path; ``~`` and ``%2e%2e`` are ordinary names); the text checks come first, so a refused
argument never reaches the file system; :func:`open_confined` never follows a final symlink
and, on Linux, looks the opened file up again through ``/proc`` (the check and the open are
two steps).
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

MAX_PATH_CHARS = 1024
"""Longer path arguments are refused before touching the file system."""
MAX_NAME_BYTES = 255
"""Longer file or folder names are refused (no common file system allows them)."""


class ToolError(ValueError):
    """A tool call that cannot be served as asked (bad argument, path outside the root, …)."""


def confine(raw: str, root: Path) -> Path:
    """The real location of ``raw`` (relative to the resolved ``root``), or
    a ToolError; it may not exist."""
    shown = repr(raw[:120] + ("…" if len(raw) > 120 else ""))
    if "\0" in raw:
        raise ToolError(f"path {shown} contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError(f"path {shown} is {len(raw)} characters long (limit {MAX_PATH_CHARS})")
    if os.path.isabs(raw) or raw.startswith("\\"):
        raise ToolError(f"path {shown} is absolute; give a path relative to the workspace root")
    parts = re.split(r"[\\/]", raw)
    if ".." in parts:
        raise ToolError(f"path {shown} contains '..'; paths must stay inside the workspace root")
    if any(len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in parts):
        raise ToolError(f"path {shown} has a component longer than {MAX_NAME_BYTES} bytes")
    try:
        real = (root / raw).resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loop, name too long for the OS, …
        raise ToolError(f"path {shown} cannot be resolved: {exc}") from exc
    if not real.is_relative_to(root):
        raise ToolError(f"path {shown} resolves outside the workspace root")
    return real


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` exists and its real location (every symlink
    followed) lies inside ``root``."""
    try:
        return path.resolve(strict=True).is_relative_to(root)
    except (OSError, RuntimeError):
        return False


def open_confined(path: Path, root: Path) -> io.BufferedReader:
    """Open an already-confined ``path`` for reading, re-checking confinement on the open file.

    The path was checked when it was confined; this closes the gap in which a
    component could be swapped for a symlink before the open: the last
    component is opened without following symlinks, and on Linux the file
    actually opened is looked up again through ``/proc``.
    """
    # O_NONBLOCK: a FIFO swapped in after the check must not block the open.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToolError(f"path {path.name!r} is not a regular file")
        proc = f"/proc/self/fd/{fd}"
        if os.path.exists(proc) and not Path(os.readlink(proc)).is_relative_to(root):
            raise ToolError(
                f"path {path.name!r} moved outside the workspace root while it was opened"
            )
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def walk(
    base: Path, recursive: bool, skip: frozenset[str] = frozenset()
) -> Iterator[tuple[Path, bool]]:
    """``(path, is_dir)`` under ``base`` in sorted order; symlinks are reported, never followed.

    A recursive walk does not descend into directories named in ``skip``; an
    unreadable directory is passed over silently (it simply has no entries).
    """
    try:
        entries = sorted(os.scandir(base), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        yield Path(entry.path), is_dir
        if recursive and is_dir and entry.name not in skip:
            yield from walk(Path(entry.path), recursive, skip)
