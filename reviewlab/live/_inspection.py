"""The read-only inspection registry a reviewer episode calls its tools on.

:func:`inspection_registry` builds a fresh ``(registry, ctx, schemas)`` triple per episode:
``read_file`` renders a file or a line range with line numbers, then stamps
``ctx.last_read_view``; ``list_files`` lists a directory; ``search_code`` answers
``path:line: text`` rows. What each tool takes (its schema, its arguments, their checks) is
:mod:`reviewlab.live._inspection_args`.

Invariants: every path goes through :mod:`reviewlab.live._confine`, so nothing outside the
root is opened, listed or searched and walks never follow symlinks; the stamp changes only as
the very last step of a successful ``read_file`` (the episode clears it before a dispatch);
output is bounded (binary and oversized files replaced by markers, text cut at ``max_chars``
on a line boundary); errors are raised, and the episode turns them into the host text.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The path limits were always importable from here: re-exported.
from reviewlab.live._confine import MAX_NAME_BYTES as MAX_NAME_BYTES
from reviewlab.live._confine import MAX_PATH_CHARS as MAX_PATH_CHARS
from reviewlab.live._confine import ToolError, confine, inside, open_confined, walk
from reviewlab.live._inspection_args import (
    ALLOWED_ARGS,
    bool_arg,
    glob_arg,
    inspection_schemas,
    int_arg,
    str_arg,
)
from reviewlab.resources import workspace_dir

TOOL_NAMES = ("read_file", "list_files", "search_code")

_BINARY_SNIFF_BYTES = 8192
# Directories a recursive walk does not descend into: version control and build caches.
_SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "node_modules", ".mypy_cache"}
)


# ToolError is defined beside the confinement checks that raise it; this module is its public home.
ToolError.__module__ = __name__


class UnknownToolError(ToolError):
    """The tool name is not one this registry offers."""


@dataclass
class InspectionContext:
    """State shared by the tools of one registry.

    ``last_read_view`` is ``None`` until a ``read_file`` renders; then it holds
    the keys ``target, opened_path, opened_root, first_line, end_line,
    total_lines, body_start, line_ends`` (offsets are into the returned text).
    """

    root: Path
    drive_root: Path | None = None
    task_id: str = ""
    last_read_view: dict[str, Any] | None = None


def _globbed(pattern: str | None, path: Path, rel: str) -> bool:
    """Whether an entry passes the ``glob`` filter: its name or its root-relative path matches."""
    return not pattern or fnmatch.fnmatch(path.name, pattern) or fnmatch.fnmatch(rel, pattern)


def _binary(handle: io.BufferedReader) -> bool:
    # A NUL byte near the start marks a binary file, as git and grep decide it.
    return b"\0" in handle.peek(_BINARY_SNIFF_BYTES)[:_BINARY_SNIFF_BYTES]


def _text(handle: io.BufferedReader) -> io.TextIOWrapper:
    # Universal newlines: "\r\n" and "\r" count as one line break, as editors count them.
    return io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline=None)


@dataclass
class InspectionRegistry:
    """Dispatches the three read-only tools over one confined root (see the module docstring)."""

    ctx: InspectionContext
    max_chars: int = 100_000
    max_file_bytes: int = 16 * 1024 * 1024
    max_entries: int = 500
    max_matches: int = 200
    declared_timeouts: Mapping[str, float] = field(default_factory=dict)
    """Per-tool timeouts the registry declares (read by
    ``TimeoutPolicy.base_for``); none by default."""

    @property
    def _ctx(self) -> InspectionContext:
        # The seed's fakes reach the shared context under this name.
        return self.ctx

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools this registry offers: :data:`TOOL_NAMES`."""
        return TOOL_NAMES

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style schemas of the tools; they offer a ``root``
        choice only with a drive root."""
        return inspection_schemas(drive=self.ctx.drive_root is not None)

    def execute(self, name: str, args: Mapping[str, Any] | None) -> str:
        """Run tool ``name`` with ``args`` and return its text; raise
        :class:`ToolError` on bad input."""
        handlers: dict[str, Callable[[Mapping[str, Any]], str]] = {
            "read_file": self._read_file,
            "list_files": self._list_files,
            "search_code": self._search_code,
        }
        handler = handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            raise UnknownToolError(
                f"unknown tool {str(name)[:200]!r}; available: {', '.join(TOOL_NAMES)}"
            )
        args = {} if args is None else args
        if not isinstance(args, Mapping):
            raise ToolError(f"{name}: arguments must be an object, got {type(args).__name__}")
        allowed = ALLOWED_ARGS[name]
        unknown = sorted(str(key) for key in args if key not in allowed)
        if unknown:
            raise ToolError(
                f"{name}: unknown argument(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}"
            )
        try:
            return handler(args)
        except (
            OSError
        ) as exc:  # permission denied, vanished mid-read, …: a tool error naming the path
            raise ToolError(
                f"{name} {str(args.get('path', '.'))[:200]!r}: {exc.strerror or exc}"
            ) from exc

    # -- confinement -------------------------------------------------------
    def _root_for(self, args: Mapping[str, Any]) -> tuple[Path, str]:
        which = str_arg(args, "root", "workspace")
        if which == "workspace":
            return self.ctx.root, "active_workspace"
        if which == "drive" and self.ctx.drive_root is not None:
            return self.ctx.drive_root, "drive"
        raise ToolError(f"unknown root {which[:64]!r}")

    def _resolve(
        self, args: Mapping[str, Any], key: str, default: str | None = None
    ) -> tuple[Path, Path, str]:
        """``(real path, root, root label)`` for a path argument, or a
        ToolError; the path may not exist."""
        raw = str_arg(args, key, default)
        root, label = self._root_for(args)
        return confine(raw, root), root, label

    # -- read_file ---------------------------------------------------------
    def _read_file(self, args: Mapping[str, Any]) -> str:
        real, root, label = self._resolve(args, "path")
        start = int_arg(args, "start_line", 1)
        end = int_arg(args, "end_line", None)
        assert start is not None
        if end is not None and end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        rel = real.relative_to(root).as_posix()
        if not real.is_file():
            kind = (
                "a directory"
                if real.is_dir()
                else "not a regular file"
                if real.exists()
                else "not found"
            )
            raise ToolError(f"read_file {rel!r}: {kind}")
        size = real.stat().st_size
        if size > self.max_file_bytes:
            return f"{rel}: [file too large: {size} bytes (limit {self.max_file_bytes}), not shown]"
        with open_confined(real, root) as handle:
            if _binary(handle):
                return f"{rel}: [binary file: {size} bytes, not shown]"
            text = _text(handle).read()
        lines = text.split("\n")
        if text.endswith("\n") or not text:
            lines.pop()
        total = len(lines)
        if total == 0:
            return f"{rel}: [empty file: 0 lines]"
        if start > total:
            raise ToolError(
                f"read_file {rel!r}: start_line {start} is past the end ({total} lines)"
            )
        last = total if end is None else min(end, total)
        rendered = self._render(rel, lines, start, last, total)
        # The stamp is the last thing a read does (module invariant).
        self.ctx.last_read_view = {
            "target": str(real),
            "opened_path": rel,
            "opened_root": label,
            "first_line": start,
            "end_line": rendered.end_line,
            "total_lines": total,
            "body_start": rendered.body_start,
            "line_ends": rendered.line_ends,
        }
        return rendered.text

    def _render(self, rel: str, lines: list[str], start: int, last: int, total: int) -> _Rendered:
        """Number lines ``start..last``, stopping early on a line boundary past ``max_chars``."""
        width = len(str(last))
        header = f"{rel} (lines {start}-{last} of {total})\n"
        parts = [header]
        line_ends: list[int] = []
        offset = len(header)
        shown_last = start - 1
        for number in range(start, last + 1):
            row = f"{number:>{width}}\t{lines[number - 1]}\n"
            if offset + len(row) > self.max_chars:
                if line_ends:
                    break
                # A single line longer than the cap (minified code): show its head only.
                line = lines[number - 1]
                row = f"{number:>{width}}\t{line[: self.max_chars]}…[line cut: {len(line)} chars]\n"
            parts.append(row)
            offset += len(row)
            line_ends.append(offset)
            shown_last = number
        if shown_last < last:
            parts[0] = f"{rel} (lines {start}-{shown_last} of {total})\n"
            # The header shrank or grew: shift every offset by the difference.
            delta = len(parts[0]) - len(header)
            line_ends = [end + delta for end in line_ends]
            parts.append(
                f"[truncated: showed lines {start}-{shown_last} of {total} total lines; "
                f"read on with start_line={shown_last + 1}]\n"
            )
        return _Rendered("".join(parts), len(parts[0]), line_ends, shown_last)

    # -- list_files --------------------------------------------------------
    def _list_files(self, args: Mapping[str, Any]) -> str:
        real, root, _label = self._resolve(args, "path", ".")
        pattern = glob_arg(args)
        recursive = bool_arg(args, "recursive", False)
        rel_base = real.relative_to(root).as_posix()
        if not real.is_dir():
            raise ToolError(f"list_files {rel_base!r}: not a directory")
        rows: list[str] = []
        matched = 0
        for path, is_dir in walk(real, recursive, _SKIPPED_DIRS):
            rel = path.relative_to(root).as_posix()
            if not _globbed(pattern, path, rel):
                continue
            matched += 1
            if len(rows) >= self.max_entries:
                continue
            if path.is_symlink():
                note = (
                    "" if inside(path, root) else "  [symlink outside the workspace, not followed]"
                )
                rows.append(f"{rel}@{note}")
            else:
                rows.append(rel + ("/" if is_dir else ""))
        head = f"{matched} entries under {rel_base}/" + (
            f" matching {pattern!r}" if pattern else ""
        )
        if matched > len(rows):
            rows.append(
                f"[truncated: showed {len(rows)} of {matched} entries; narrow path or glob]"
            )
        return "\n".join([head, *rows]) + "\n"

    # -- search_code -------------------------------------------------------
    def _search_code(self, args: Mapping[str, Any]) -> str:
        raw = str_arg(args, "pattern")
        if not raw:
            raise ToolError("pattern must not be empty")
        literal = bool_arg(args, "literal", False)
        flags = re.IGNORECASE if bool_arg(args, "ignore_case", False) else 0
        try:
            regex = re.compile(re.escape(raw) if literal else raw, flags)
        except re.error as exc:
            raise ToolError(
                f"pattern {raw[:200]!r} is not a valid regular expression ({exc}); "
                "pass literal=true to search for the text as written"
            ) from exc
        real, root, _label = self._resolve(args, "path", ".")
        pattern = glob_arg(args)
        if real.is_file():
            files = [real]
        elif real.is_dir():
            files = [
                path
                for path, is_dir in walk(real, True, _SKIPPED_DIRS)
                if not is_dir and not path.is_symlink() and path.is_file()
            ]
        else:
            raise ToolError(f"search_code {real.relative_to(root).as_posix()!r}: not found")
        rows: list[str] = []
        found = 0
        for path in files:
            rel = path.relative_to(root).as_posix()
            if not _globbed(pattern, path, rel) or path.stat().st_size > self.max_file_bytes:
                continue
            try:
                handle = open_confined(path, root)
            except (OSError, ToolError):
                continue  # vanished or swapped for a symlink since the walk: not ours to read
            with handle:
                if _binary(handle):
                    continue
                for number, line in enumerate(_text(handle), start=1):
                    if regex.search(line):
                        found += 1
                        if len(rows) < self.max_matches:
                            text = line.rstrip("\n")
                            rows.append(
                                f"{rel}:{number}: {text[:200]}{'…' if len(text) > 200 else ''}"
                            )
        if not found:
            return f"no matches for {raw[:200]!r}\n"
        head = f"{found} matches for {raw[:200]!r}"
        if found > len(rows):
            rows.append(
                f"[truncated: showed {len(rows)} of {found} matches; narrow pattern, path or glob]"
            )
        return "\n".join([head, *rows]) + "\n"


@dataclass(frozen=True)
class _Rendered:
    text: str
    body_start: int
    line_ends: list[int]
    end_line: int


def _root_dir(name: str, value: str | os.PathLike[str]) -> Path:
    path = Path(value).expanduser().resolve(strict=False)
    if not path.is_dir():
        raise ToolError(f"{name} {str(value)!r} is not a directory")
    return path


def inspection_registry(
    root: str | os.PathLike[str],
    drive_root: str | os.PathLike[str] | None = None,
    task_id: str = "",
) -> tuple[InspectionRegistry, InspectionContext, list[dict[str, Any]]]:
    """A fresh ``(registry, ctx, schemas)`` for one episode over
    ``root`` (and an optional drive)."""
    ctx = InspectionContext(
        root=_root_dir("root", root),
        drive_root=None if drive_root is None else _root_dir("drive_root", drive_root),
        task_id=task_id,
    )
    registry = InspectionRegistry(ctx)
    return registry, ctx, registry.schemas


def demo_workspace() -> Path:
    """The small bundled workspace used by ``make demo`` and the
    tests (a tiny package with a bug)."""
    path = workspace_dir()
    if not path.is_dir():
        raise FileNotFoundError(f"the bundled demo workspace is missing: {path}")
    return path
