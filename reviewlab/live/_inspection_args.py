"""What the inspection tools take: their schemas, the arguments each allows, and the readers
that check one argument.

:func:`inspection_schemas` is the OpenAI-style declaration of ``read_file``, ``list_files`` and
``search_code`` (with a ``root`` choice when the registry has a drive); :data:`ALLOWED_ARGS`
the argument names each accepts. A reader (:func:`int_arg`, :func:`str_arg`, :func:`bool_arg`,
:func:`glob_arg`) returns the argument's value or raises
:class:`~reviewlab.live._confine.ToolError` naming the argument and what it got, which the
episode turns into the host's text (:mod:`reviewlab.live._inspection` dispatches the calls).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewlab.live._confine import ToolError


def int_arg(
    args: Mapping[str, Any], key: str, default: int | None, *, minimum: int = 1
) -> int | None:
    """``args[key]`` as a whole number at least ``minimum`` (``default`` when absent)."""
    value = args.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{key} must be an integer, got {value!r}")
    if value < minimum:
        raise ToolError(f"{key} must be at least {minimum}, got {value}")
    return value


def str_arg(args: Mapping[str, Any], key: str, default: str | None = None) -> str:
    """``args[key]`` as a string (``default`` when absent; required when that is ``None``)."""
    value = args.get(key, default)
    if value is None:
        raise ToolError(f"missing required argument {key!r}")
    if not isinstance(value, str):
        raise ToolError(f"{key} must be a string, got {value!r}")
    return value


def bool_arg(args: Mapping[str, Any], key: str, default: bool) -> bool:
    """``args[key]`` as ``true`` or ``false`` (``default`` when absent)."""
    value = args.get(key, default)
    if not isinstance(value, bool):
        raise ToolError(f"{key} must be true or false, got {value!r}")
    return value


def glob_arg(args: Mapping[str, Any]) -> str | None:
    """The ``glob`` filter (``None``: every entry)."""
    pattern = args.get("glob")
    if pattern is not None and not isinstance(pattern, str):
        raise ToolError(f"glob must be a string, got {pattern!r}")
    return pattern


ALLOWED_ARGS: dict[str, tuple[str, ...]] = {
    "read_file": ("path", "start_line", "end_line", "root"),
    "list_files": ("path", "glob", "recursive", "root"),
    "search_code": ("pattern", "path", "glob", "literal", "ignore_case", "root"),
}
"""The arguments each tool accepts (any other is refused by name)."""


def _function(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def inspection_schemas(*, drive: bool = False) -> list[dict[str, Any]]:
    """OpenAI-style function schemas of the three tools (with a
    ``root`` choice when a drive exists)."""
    path = {"type": "string", "description": "Path relative to the workspace root."}
    root = {
        "root": {
            "type": "string",
            "enum": ["workspace", "drive"],
            "description": "Which root the path is relative to (default: workspace).",
        }
    }
    extra = root if drive else {}
    return [
        _function(
            "read_file",
            "Read a text file with line numbers, optionally a 1-based inclusive line range.",
            {
                "path": path,
                "start_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line (default 1).",
                },
                "end_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Last line (default: end).",
                },
                **extra,
            },
            ["path"],
        ),
        _function(
            "list_files",
            "List the files and folders under a directory of the workspace.",
            {
                "path": {**path, "description": "Directory relative to the root (default '.')."},
                "glob": {
                    "type": "string",
                    "description": "Only entries matching this glob, e.g. '*.py'.",
                },
                "recursive": {
                    "type": "boolean",
                    "description": "Descend into subfolders (default false).",
                },
                **extra,
            },
            [],
        ),
        _function(
            "search_code",
            "Search files for a regular expression; answers path:line: text rows.",
            {
                "pattern": {
                    "type": "string",
                    "description": "Regular expression (or text with literal=true).",
                },
                "path": {**path, "description": "File or directory to search (default '.')."},
                "glob": {
                    "type": "string",
                    "description": "Only files matching this glob, e.g. '*.py'.",
                },
                "literal": {
                    "type": "boolean",
                    "description": "Treat pattern as plain text (default false).",
                },
                "ignore_case": {
                    "type": "boolean",
                    "description": "Case-insensitive (default false).",
                },
                **extra,
            },
            ["pattern"],
        ),
    ]
