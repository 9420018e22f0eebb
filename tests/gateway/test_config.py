"""A servers file that lists a gateway on that very file is refused by name: the gateway would
start itself without end."""

from __future__ import annotations

import json

import pytest

from reviewlab.gateway import GatewayConfigError, load_servers


def write(path, entries):
    """``entries`` as an ``mcpServers`` file at ``path``; the path."""
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return path


def files_server():
    """A plain stdio server entry."""
    return {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}


@pytest.mark.parametrize("form", ["separate", "equals", "relative"])
def test_a_gateway_entry_on_the_same_file_is_refused_naming_the_entry(tmp_path, form):
    """``--config FILE``, ``--config=FILE`` and a path relative to the entry's ``cwd`` that all
    name the file being read make it an error naming the file and the entry."""
    path = tmp_path / "mcp.json"
    target = {"separate": ["--config", str(path)], "equals": [f"--config={path}"]}.get(
        form, ["--config", "mcp.json"]
    )
    gateway = {"command": "reviewlab", "args": ["gateway", *target, "--record", "rec"]}
    if form == "relative":
        gateway["cwd"] = str(tmp_path)
    write(path, {"files": files_server(), "reviewlab": gateway})
    with pytest.raises(GatewayConfigError) as caught:
        load_servers(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: mcpServers.reviewlab: runs a gateway on this same file")


def test_a_gateway_entry_on_another_file_and_a_disabled_one_are_kept(tmp_path):
    """A gateway over another servers file is an ordinary upstream, and a disabled gateway entry
    on this file is left out like any disabled server."""
    other = write(tmp_path / "servers.json", {"files": files_server()})
    path = tmp_path / "mcp.json"
    nested = {"command": "reviewlab", "args": ["gateway", "--config", str(other)]}
    itself = {"command": "reviewlab", "args": ["gateway", "--config", str(path)], "disabled": True}
    write(path, {"files": files_server(), "nested": nested, "itself": itself})
    assert [spec.name for spec in load_servers(path)] == ["files", "nested"]
