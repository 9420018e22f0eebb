"""The read-only inspection registry: the three tools, the reader stamp, schemas and markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewlab.live import _inspection as inspection
from reviewlab.live._inspection import (
    TOOL_NAMES,
    InspectionRegistry,
    ToolError,
    UnknownToolError,
    demo_workspace,
    inspection_registry,
)


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "greeting.txt").write_text("hello native reviewer\n", encoding="utf-8")
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "core.py").write_text(
        "".join(f"line {n}\n" for n in range(1, 13)), encoding="utf-8"
    )
    (root / "pkg" / "sub" / "deep.py").write_text(
        "def answer():\n    return 42\n", encoding="utf-8"
    )
    (root / "notes.md").write_text("# Notes\nTODO: answer\n", encoding="utf-8")
    return root


def test_read_file_renders_every_line_with_numbers(workspace):
    """A whole-file read shows a header and each line prefixed with its 1-based number."""
    registry, _ctx, _schemas = inspection_registry(workspace)
    text = registry.execute("read_file", {"path": "greeting.txt"})
    assert text == "greeting.txt (lines 1-1 of 1)\n1\thello native reviewer\n"


def test_read_file_line_range_is_inclusive_and_clamped(workspace):
    """start_line/end_line select an inclusive range; an end past the file is clamped."""
    registry, ctx, _ = inspection_registry(workspace)
    text = registry.execute("read_file", {"path": "pkg/core.py", "start_line": 3, "end_line": 5})
    assert text.splitlines() == [
        "pkg/core.py (lines 3-5 of 12)",
        "3\tline 3",
        "4\tline 4",
        "5\tline 5",
    ]
    registry.execute("read_file", {"path": "pkg/core.py", "start_line": 10, "end_line": 99})
    assert (ctx.last_read_view["first_line"], ctx.last_read_view["end_line"]) == (10, 12)


def test_read_file_rejects_bad_ranges(workspace):
    """A reversed range, a start past the end, or non-integers are tool errors."""
    registry, _, _ = inspection_registry(workspace)
    with pytest.raises(ToolError, match="before start_line"):
        registry.execute("read_file", {"path": "pkg/core.py", "start_line": 5, "end_line": 2})
    with pytest.raises(ToolError, match="past the end"):
        registry.execute("read_file", {"path": "pkg/core.py", "start_line": 13})
    with pytest.raises(ToolError, match="start_line must be an integer"):
        registry.execute("read_file", {"path": "pkg/core.py", "start_line": "3"})
    with pytest.raises(ToolError, match="start_line must be at least 1"):
        registry.execute("read_file", {"path": "pkg/core.py", "start_line": 0})
    with pytest.raises(ToolError, match="missing required argument 'path'"):
        registry.execute("read_file", {})
    with pytest.raises(ToolError, match="a directory"):
        registry.execute("read_file", {"path": "pkg"})
    with pytest.raises(ToolError, match="not found"):
        registry.execute("read_file", {"path": "missing.py"})


def test_read_stamp_describes_exactly_what_was_rendered(workspace):
    """The stamp names the file, root and range, and its offsets index the returned text."""
    registry, ctx, _ = inspection_registry(workspace)
    assert ctx.last_read_view is None
    text = registry.execute("read_file", {"path": "pkg/core.py", "start_line": 2, "end_line": 4})
    stamp = ctx.last_read_view
    assert set(stamp) == {
        "target",
        "opened_path",
        "opened_root",
        "first_line",
        "end_line",
        "total_lines",
        "body_start",
        "line_ends",
    }
    assert stamp["target"] == str((workspace / "pkg" / "core.py").resolve())
    assert stamp["opened_path"] == "pkg/core.py" and stamp["opened_root"] == "active_workspace"
    assert (stamp["first_line"], stamp["end_line"], stamp["total_lines"]) == (2, 4, 12)
    starts = [stamp["body_start"], *stamp["line_ends"][:-1]]
    rows = [text[a:b] for a, b in zip(starts, stamp["line_ends"], strict=True)]
    assert rows == ["2\tline 2\n", "3\tline 3\n", "4\tline 4\n"]
    assert registry._ctx is ctx


def test_stamp_is_written_only_after_rendering(workspace, monkeypatch):
    """While a read renders, the stamp still shows the previous read;
    a failed read leaves it alone."""
    registry, ctx, _ = inspection_registry(workspace)
    registry.execute("read_file", {"path": "greeting.txt"})
    previous = ctx.last_read_view
    seen_during_render = []
    real_render = InspectionRegistry._render

    def spying_render(self, *args, **kwargs):
        seen_during_render.append(ctx.last_read_view)
        return real_render(self, *args, **kwargs)

    monkeypatch.setattr(InspectionRegistry, "_render", spying_render)
    registry.execute("read_file", {"path": "pkg/core.py"})
    assert seen_during_render == [previous]
    assert ctx.last_read_view["opened_path"] == "pkg/core.py"

    def failing_render(self, *args, **kwargs):
        raise RuntimeError("renderer broke")

    monkeypatch.setattr(InspectionRegistry, "_render", failing_render)
    stamp_before = ctx.last_read_view
    with pytest.raises(RuntimeError):
        registry.execute("read_file", {"path": "notes.md"})
    assert ctx.last_read_view is stamp_before
    with pytest.raises(ToolError):
        registry.execute("read_file", {"path": "../outside"})
    assert ctx.last_read_view is stamp_before


def test_crlf_and_missing_final_newline_count_lines_like_an_editor(workspace):
    """CRLF line breaks count once, and a last line without a newline still counts."""
    (workspace / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree")
    registry, ctx, _ = inspection_registry(workspace)
    text = registry.execute("read_file", {"path": "dos.txt"})
    assert text.splitlines()[1:] == ["1\tone", "2\ttwo", "3\tthree"]
    assert ctx.last_read_view["total_lines"] == 3


def test_binary_file_gets_a_marker_and_no_stamp(workspace):
    """A file with NUL bytes is not rendered; the answer says so and names its size."""
    (workspace / "blob.bin").write_bytes(b"\x89PNG\0\0\0" + bytes(range(256)))
    registry, ctx, _ = inspection_registry(workspace)
    text = registry.execute("read_file", {"path": "blob.bin"})
    assert text == "blob.bin: [binary file: 263 bytes, not shown]"
    assert ctx.last_read_view is None


def test_empty_file_gets_a_marker(workspace):
    """An empty file renders a clear marker rather than an empty answer."""
    registry, _, _ = inspection_registry(workspace)
    assert (
        registry.execute("read_file", {"path": "pkg/__init__.py"})
        == "pkg/__init__.py: [empty file: 0 lines]"
    )


def test_file_over_the_byte_limit_is_not_read(workspace):
    """A file past max_file_bytes gets a marker naming its size and the limit."""
    (workspace / "big.log").write_text("x" * 5000, encoding="utf-8")
    registry, ctx, _ = inspection_registry(workspace)
    registry.max_file_bytes = 4096
    assert registry.execute("read_file", {"path": "big.log"}) == (
        "big.log: [file too large: 5000 bytes (limit 4096), not shown]"
    )
    assert ctx.last_read_view is None


def test_long_render_is_cut_on_a_line_boundary_with_a_marker(workspace):
    """Past max_chars the read stops after a whole line and says
    which lines of how many it showed."""
    (workspace / "long.txt").write_text(
        "".join(f"row {n:04d}\n" for n in range(1, 1001)), encoding="utf-8"
    )
    registry, ctx, _ = inspection_registry(workspace)
    registry.max_chars = 200
    text = registry.execute("read_file", {"path": "long.txt"})
    stamp = ctx.last_read_view
    shown = stamp["end_line"]
    assert 1 < shown < 1000 and stamp["total_lines"] == 1000
    assert text.endswith(
        f"[truncated: showed lines 1-{shown} of 1000 total lines; "
        f"read on with start_line={shown + 1}]\n"
    )
    assert text.startswith(f"long.txt (lines 1-{shown} of 1000)\n")
    assert len(stamp["line_ends"]) == shown
    assert (
        text[stamp["line_ends"][-1] - 10 : stamp["line_ends"][-1]] == f"\trow {shown:04d}\n"[-10:]
    )
    assert len(text) < 200 + 120


def test_single_overlong_line_is_cut_inside_the_line(workspace):
    """One line longer than max_chars shows its head and how long it really is."""
    (workspace / "min.js").write_text("a" * 1000, encoding="utf-8")
    registry, _, _ = inspection_registry(workspace)
    registry.max_chars = 100
    text = registry.execute("read_file", {"path": "min.js"})
    assert "…[line cut: 1000 chars]" in text and len(text) < 200


def test_list_files_top_level_and_recursive(workspace):
    """list_files shows one level by default, everything with recursive=true, dirs with a slash."""
    registry, _, _ = inspection_registry(workspace)
    top = registry.execute("list_files", {})
    assert top.splitlines() == ["3 entries under ./", "greeting.txt", "notes.md", "pkg/"]
    everything = registry.execute("list_files", {"path": ".", "recursive": True}).splitlines()
    assert everything[0] == "7 entries under ./"
    assert everything[1:] == [
        "greeting.txt",
        "notes.md",
        "pkg/",
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/sub/",
        "pkg/sub/deep.py",
    ]


def test_list_files_glob_and_limit(workspace):
    """A glob filters by name or relative path; past max_entries
    the listing says how many it hid."""
    registry, _, _ = inspection_registry(workspace)
    py = registry.execute(
        "list_files", {"path": "pkg", "recursive": True, "glob": "*.py"}
    ).splitlines()
    assert py == [
        "3 entries under pkg/ matching '*.py'",
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/sub/deep.py",
    ]
    registry.max_entries = 2
    capped = registry.execute("list_files", {"recursive": True}).splitlines()
    assert capped[-1] == "[truncated: showed 2 of 7 entries; narrow path or glob]"
    assert len(capped) == 4


def test_list_files_rejects_a_file_and_bad_arguments(workspace):
    """Listing a file, a non-boolean recursive flag or an unknown argument is a tool error."""
    registry, _, _ = inspection_registry(workspace)
    with pytest.raises(ToolError, match="not a directory"):
        registry.execute("list_files", {"path": "notes.md"})
    with pytest.raises(ToolError, match="recursive must be true or false"):
        registry.execute("list_files", {"recursive": "yes"})
    with pytest.raises(ToolError, match="unknown argument"):
        registry.execute("list_files", {"depth": 3})


def test_search_code_regex_and_literal(workspace):
    """search_code answers path:line: text rows for a regex, or for literal text."""
    registry, _, _ = inspection_registry(workspace)
    text = registry.execute("search_code", {"pattern": r"def \w+\(\)"})
    assert text.splitlines() == [
        "1 matches for 'def \\\\w+\\\\(\\\\)'",
        "pkg/sub/deep.py:1: def answer():",
    ]
    literal = registry.execute("search_code", {"pattern": "answer(", "literal": True})
    assert literal.splitlines()[1:] == ["pkg/sub/deep.py:1: def answer():"]
    nocase = registry.execute(
        "search_code", {"pattern": "todo", "ignore_case": True, "glob": "*.md"}
    )
    assert nocase.splitlines()[1:] == ["notes.md:2: TODO: answer"]
    assert registry.execute("search_code", {"pattern": "nowhere-to-be-found"}) == (
        "no matches for 'nowhere-to-be-found'\n"
    )


def test_search_code_scoped_to_a_file_and_capped(workspace):
    """A path narrows the search; past max_matches the answer says how many it hid."""
    registry, _, _ = inspection_registry(workspace)
    registry.max_matches = 3
    rows = registry.execute("search_code", {"pattern": "line", "path": "pkg/core.py"}).splitlines()
    assert rows[0] == "12 matches for 'line'"
    assert rows[1:4] == ["pkg/core.py:1: line 1", "pkg/core.py:2: line 2", "pkg/core.py:3: line 3"]
    assert rows[4] == "[truncated: showed 3 of 12 matches; narrow pattern, path or glob]"


def test_search_code_skips_binary_files_and_rejects_bad_regex(workspace):
    """Binary files are never searched; an invalid regex is a tool error suggesting literal=true."""
    (workspace / "blob.bin").write_bytes(b"answer\0answer")
    registry, _, _ = inspection_registry(workspace)
    rows = registry.execute("search_code", {"pattern": "answer"}).splitlines()
    assert all(not row.startswith("blob.bin") for row in rows)
    with pytest.raises(ToolError, match="literal=true"):
        registry.execute("search_code", {"pattern": "answer("})
    with pytest.raises(ToolError, match="must not be empty"):
        registry.execute("search_code", {"pattern": ""})


def test_unknown_tool_is_an_error(workspace):
    """A tool name the registry does not offer raises UnknownToolError naming it."""
    registry, _, _ = inspection_registry(workspace)
    with pytest.raises(UnknownToolError, match="'run_command'"):
        registry.execute("run_command", {"cmd": "ls"})
    with pytest.raises(ToolError, match="arguments must be an object"):
        registry.execute("read_file", ["greeting.txt"])  # type: ignore[arg-type]


def test_schemas_are_openai_function_tools(workspace):
    """Each schema is an OpenAI function tool with a JSON-Schema object of parameters."""
    registry, _, schemas = inspection_registry(workspace)
    assert (
        [schema["function"]["name"] for schema in schemas]
        == list(TOOL_NAMES)
        == list(registry.tool_names)
    )
    for schema in schemas:
        assert schema["type"] == "function"
        function = schema["function"]
        assert function["description"]
        params = function["parameters"]
        assert params["type"] == "object"
        assert set(params["required"]) <= set(params["properties"])
        assert "root" not in params["properties"]
    assert schemas[0]["function"]["parameters"]["required"] == ["path"]
    assert schemas[2]["function"]["parameters"]["required"] == ["pattern"]
    json.dumps(schemas)  # serialisable as sent on the wire


def test_registry_declares_no_timeouts_by_default(workspace):
    """declared_timeouts is an empty mapping unless configured, so policies use their own table."""
    registry, _, _ = inspection_registry(workspace)
    assert dict(registry.declared_timeouts) == {}


def test_drive_root_is_a_second_confined_root(workspace, tmp_path):
    """With a drive root, root='drive' reads from it and the stamp names that root."""
    drive = tmp_path / "drive"
    drive.mkdir()
    (drive / "memo.txt").write_text("drive memo\n", encoding="utf-8")
    registry, ctx, schemas = inspection_registry(workspace, drive, task_id="t-1")
    assert ctx.task_id == "t-1"
    assert "root" in schemas[0]["function"]["parameters"]["properties"]
    assert "drive memo" in registry.execute("read_file", {"path": "memo.txt", "root": "drive"})
    assert ctx.last_read_view["opened_root"] == "drive"
    with pytest.raises(ToolError, match="not found"):
        registry.execute("read_file", {"path": "memo.txt"})
    plain, _, _ = inspection_registry(workspace)
    with pytest.raises(ToolError, match="unknown root 'drive'"):
        plain.execute("read_file", {"path": "memo.txt", "root": "drive"})


def test_root_must_be_a_directory(tmp_path):
    """Building a registry over a missing directory fails at once, naming it."""
    with pytest.raises(ToolError, match="is not a directory"):
        inspection_registry(tmp_path / "absent")


def test_demo_workspace_is_bundled_and_readable():
    """The bundled demo workspace holds a small package the registry can read and search."""
    root = demo_workspace()
    assert (root / "README.md").is_file()
    registry, ctx, _ = inspection_registry(root)
    listing = registry.execute("list_files", {"recursive": True})
    assert "inventory/stock.py" in listing and "inventory/pricing.py" in listing
    assert "def needs_reorder" in registry.execute("search_code", {"pattern": "def needs_reorder"})
    registry.execute("read_file", {"path": "inventory/stock.py"})
    assert ctx.last_read_view["total_lines"] > 20
    assert inspection.demo_workspace() == root


def test_special_and_unreadable_files_are_tool_errors(workspace):
    """A FIFO is never opened (it would block) and an unreadable file is a ToolError naming it."""
    import os

    os.mkfifo(workspace / "pipe")
    registry, _, _ = inspection_registry(workspace)
    with pytest.raises(ToolError, match="not a regular file"):
        registry.execute("read_file", {"path": "pipe"})
    assert "pipe" not in registry.execute("search_code", {"pattern": "."})
    secret = workspace / "locked.txt"
    secret.write_text("locked\n", encoding="utf-8")
    secret.chmod(0)
    try:
        if os.access(secret, os.R_OK):  # root ignores permission bits; nothing to refuse then
            assert "locked" in registry.execute("read_file", {"path": "locked.txt"})
        else:
            with pytest.raises(ToolError, match="'locked.txt': Permission denied"):
                registry.execute("read_file", {"path": "locked.txt"})
    finally:
        secret.chmod(0o644)
