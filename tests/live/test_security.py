"""No path trick lets an inspection tool read, list or search anything outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviewlab.live._inspection import ToolError, inspection_registry

SECRET = "TOP-SECRET-OUTSIDE-THE-WORKSPACE"


@pytest.fixture()
def layout(tmp_path: Path) -> dict[str, Path]:
    """A workspace next to a secret file and a secret directory, with symlinks pointing out."""
    outside_dir = tmp_path / "secrets"
    outside_dir.mkdir()
    secret_file = outside_dir / "key.txt"
    secret_file.write_text(SECRET + "\n", encoding="utf-8")
    (tmp_path / "sibling.txt").write_text(SECRET + "\n", encoding="utf-8")
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('inside')\n", encoding="utf-8")
    (root / "escape_file").symlink_to(secret_file)
    (root / "escape_dir").symlink_to(outside_dir, target_is_directory=True)
    (root / "src" / "hop1").symlink_to(root / "hop2")  # a chain: hop1 -> hop2 -> outside
    (root / "hop2").symlink_to(secret_file)
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    (root / "inner_link.py").symlink_to(root / "src" / "app.py")  # stays inside: allowed
    return {"root": root, "secret_file": secret_file, "outside_dir": outside_dir, "tmp": tmp_path}


ESCAPING_PATHS = [
    "../sibling.txt",
    "../secrets/key.txt",
    "src/../../sibling.txt",
    "./../sibling.txt",
    "..",
    "src/..",
    "..\\sibling.txt",
    "escape_file",
    "escape_dir/key.txt",
    "escape_dir",
    "src/hop1",
    "loop_a",
    "a\0b",
    "src/app.py\0.txt",
    "x" * 5000,
    "a/" * 3000,
    "a" * 300,
    "src/" + "b" * 256 + "/app.py",
]


def _refused(registry, tool: str, args: dict[str, object]) -> str:
    with pytest.raises(ToolError) as info:
        registry.execute(tool, args)
    return str(info.value)


@pytest.mark.parametrize("path", ESCAPING_PATHS)
def test_read_file_never_leaves_the_workspace(layout, path):
    """Every escaping path is a ToolError for read_file and nothing is stamped."""
    registry, ctx, _ = inspection_registry(layout["root"])
    message = _refused(registry, "read_file", {"path": path})
    assert SECRET not in message
    assert ctx.last_read_view is None


@pytest.mark.parametrize("path", ESCAPING_PATHS)
def test_list_files_never_leaves_the_workspace(layout, path):
    """list_files refuses every escaping directory argument."""
    registry, _, _ = inspection_registry(layout["root"])
    _refused(registry, "list_files", {"path": path, "recursive": True})


@pytest.mark.parametrize("path", ESCAPING_PATHS)
def test_search_code_never_leaves_the_workspace(layout, path):
    """search_code refuses every escaping path argument."""
    registry, _, _ = inspection_registry(layout["root"])
    assert SECRET not in _refused(registry, "search_code", {"pattern": "SECRET", "path": path})


def test_absolute_paths_are_refused_even_inside_the_root(layout):
    """An absolute path is refused outright, even one that points into the workspace."""
    registry, _, _ = inspection_registry(layout["root"])
    for path in (
        str(layout["secret_file"]),
        "/etc/passwd",
        str(layout["root"] / "src" / "app.py"),
        "//etc/passwd",
    ):
        assert "is absolute" in _refused(registry, "read_file", {"path": path})


def test_errors_name_the_offending_path(layout):
    """The refusal says which path and why, so the model can correct itself."""
    registry, _, _ = inspection_registry(layout["root"])
    assert "'../sibling.txt'" in _refused(registry, "read_file", {"path": "../sibling.txt"})
    assert "'escape_file' resolves outside" in _refused(
        registry, "read_file", {"path": "escape_file"}
    )
    assert "NUL byte" in _refused(registry, "read_file", {"path": "a\0b"})
    assert "5000 characters long" in _refused(registry, "read_file", {"path": "x" * 5000})
    assert "longer than 255 bytes" in _refused(registry, "read_file", {"path": "y" * 256})


def test_tilde_is_a_literal_name_not_the_home_directory(layout, monkeypatch):
    """'~' is never expanded: it names a file or folder called '~' inside the workspace."""
    monkeypatch.setenv("HOME", str(layout["outside_dir"]))
    registry, _, _ = inspection_registry(layout["root"])
    assert "not found" in _refused(registry, "read_file", {"path": "~/key.txt"})
    (layout["root"] / "~").mkdir()
    (layout["root"] / "~" / "key.txt").write_text("inside tilde\n", encoding="utf-8")
    assert "inside tilde" in registry.execute("read_file", {"path": "~/key.txt"})


def test_url_encoded_dots_are_literal_names(layout):
    """'%2e%2e' is not decoded: it is a directory name, and a missing one at that."""
    registry, _, _ = inspection_registry(layout["root"])
    assert "not found" in _refused(registry, "read_file", {"path": "%2e%2e/sibling.txt"})
    assert "not found" in _refused(registry, "read_file", {"path": "%2e%2e%2fsibling.txt"})
    (layout["root"] / "%2e%2e").mkdir()
    (layout["root"] / "%2e%2e" / "sibling.txt").write_text("decoy inside\n", encoding="utf-8")
    assert "decoy inside" in registry.execute("read_file", {"path": "%2e%2e/sibling.txt"})


def test_symlink_inside_the_root_is_followed(layout):
    """A symlink whose target stays inside the workspace reads like the file itself."""
    registry, ctx, _ = inspection_registry(layout["root"])
    assert "print('inside')" in registry.execute("read_file", {"path": "inner_link.py"})
    assert ctx.last_read_view["opened_path"] == "src/app.py"


def test_walks_do_not_follow_symlinks_out(layout):
    """Recursive listing and searching from the root never enter or read escaping symlinks."""
    registry, _, _ = inspection_registry(layout["root"])
    listing = registry.execute("list_files", {"recursive": True})
    assert "escape_dir/key.txt" not in listing
    assert "escape_dir@  [symlink outside the workspace, not followed]" in listing
    assert "inner_link.py@\n" in listing
    found = registry.execute("search_code", {"pattern": "SECRET|inside"})
    assert SECRET not in found
    assert "src/app.py:1: print('inside')" in found
    assert (
        registry.execute("search_code", {"pattern": "TOP-SECRET"})
        == "no matches for 'TOP-SECRET'\n"
    )


def test_glob_cannot_reach_outside(layout):
    """A glob only filters names under the listed folder; '../*' matches nothing outside."""
    registry, _, _ = inspection_registry(layout["root"])
    for glob in ("../*", "/*", "**/../*", "*key*"):
        assert "key.txt" not in registry.execute("list_files", {"recursive": True, "glob": glob})
        assert SECRET not in registry.execute("search_code", {"pattern": "SECRET", "glob": glob})


def test_symlinked_root_is_confined_to_its_target(layout, tmp_path):
    """A workspace reached through a symlink is confined to the real directory it names."""
    alias = tmp_path / "alias"
    alias.symlink_to(layout["root"], target_is_directory=True)
    registry, ctx, _ = inspection_registry(alias)
    assert "print('inside')" in registry.execute("read_file", {"path": "src/app.py"})
    assert ctx.root == layout["root"].resolve()
    _refused(registry, "read_file", {"path": "../ws/src/app.py"})


def test_symlink_swapped_in_after_listing_is_still_refused(layout):
    """A file replaced by an escaping symlink between two calls is refused on the second."""
    registry, _, _ = inspection_registry(layout["root"])
    target = layout["root"] / "src" / "app.py"
    assert "inside" in registry.execute("read_file", {"path": "src/app.py"})
    os.remove(target)
    target.symlink_to(layout["secret_file"])
    _refused(registry, "read_file", {"path": "src/app.py"})
    assert SECRET not in registry.execute("search_code", {"pattern": "SECRET", "path": "src"})


def test_open_rechecks_confinement_of_the_file_actually_opened(layout):
    """Between the check and the open, a swapped final symlink or
    parent directory is still refused."""
    from reviewlab.live._confine import open_confined

    root = layout["root"].resolve()
    with pytest.raises(OSError):  # the final component is never followed
        open_confined(root / "escape_file", root)
    if not Path("/proc/self/fd").is_dir():
        pytest.fail("this check relies on Linux /proc, which the CI box has")
    with pytest.raises(ToolError, match="moved outside"):
        open_confined(root / "escape_dir" / "key.txt", root)
    with open_confined(root / "src" / "app.py", root) as handle:
        assert handle.read() == b"print('inside')\n"
