"""mini-swe-agent's current release, run offline, and the ``.traj.json`` it saved imported.

The run: the release's ``DefaultAgent`` with its shipped ``mini.yaml`` agent settings, its
``LocalEnvironment`` (``timeout=1``) running real shell commands, and its
``DeterministicToolcallModel`` scripted to ask for ``cat``, then ``sleep 5`` and ``ls`` in one
step, then the submit command. The scripted model stamps each reply when it is asked, as the
release's API models do. Expected figures are computed from the file's own stamps.
"""

from __future__ import annotations

import importlib.resources
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from reviewlab.cli import main
from reviewlab.recording import load_episodes
from reviewlab.recording.interop import ImportFormatError, import_auto, import_mini_swe_agent


def _reply(commands: list[str], step: int) -> dict[str, Any]:
    from minisweagent.models.test_models import make_toolcall_output

    ids = [f"call_{step}_{i}" for i in range(len(commands))]
    calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})},
        }
        for call_id, command in zip(ids, commands, strict=True)
    ]
    actions = [{"command": c, "tool_call_id": i} for c, i in zip(commands, ids, strict=True)]
    return make_toolcall_output(None, calls, actions)


@pytest.fixture(scope="module")
def trajectory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The trajectory one offline mini-swe-agent run saved."""
    home = tmp_path_factory.mktemp("mini-home")
    work = tmp_path_factory.mktemp("mini-work")
    (work / "task.txt").write_text("hello\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MSWEA_GLOBAL_CONFIG_DIR", str(home))  # never the user's config folder
        from minisweagent.agents.default import DefaultAgent
        from minisweagent.environments.local import LocalEnvironment
        from minisweagent.models.test_models import DeterministicToolcallModel

        class Stamped(DeterministicToolcallModel):
            """The release's scripted model, stamping a reply when it is asked for."""

            def query(self, messages: list[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
                reply = super().query(messages, **kwargs)
                return {**reply, "extra": {**reply["extra"], "timestamp": time.time()}}

        config = yaml.safe_load(
            (importlib.resources.files("minisweagent.config") / "mini.yaml").read_text()
        )
        script = [
            _reply(["cat task.txt"], 0),
            _reply(["sleep 5", "ls"], 1),
            _reply(["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"], 2),
        ]
        path = work / "run.traj.json"
        agent = DefaultAgent(
            Stamped(outputs=script),
            LocalEnvironment(timeout=1, cwd=str(work)),
            **{**config["agent"], "output_path": path},
        )
        result = agent.run("review task.txt")
    assert result["exit_status"] == "Submitted"
    return path


def _stamps(path: Path) -> tuple[list[float], list[list[dict[str, Any]]]]:
    """Each reply's stamp and the observations (``extra``) that followed it, from the file."""
    replies: list[float] = []
    observations: list[list[dict[str, Any]]] = []
    for message in json.loads(path.read_text())["messages"]:
        if message["role"] == "assistant":
            replies.append(message["extra"]["timestamp"])
            observations.append([])
        elif message["role"] == "tool":
            observations[-1].append(message["extra"])
    return replies, observations


def test_the_release_wrote_tool_messages_with_a_killed_call(trajectory: Path) -> None:
    """The saved run holds role-tool observations, one of them killed by the timeout."""
    document = json.loads(trajectory.read_text())
    assert document["trajectory_format"] == "mini-swe-agent-1.1"
    assert document["info"]["config"]["environment"]["timeout"] == 1
    _, observations = _stamps(trajectory)
    killed = [o for step in observations for o in step if o.get("exception_type")]
    assert [o["exception_type"] for o in killed] == ["TimeoutExpired"]
    assert "timed out after 1 seconds" in killed[0]["exception_info"]


def test_every_call_matches_the_trajectorys_record(trajectory: Path) -> None:
    """Durations from the stamps, the killed sleep censored at its 1 s limit, in step order."""
    replies, observations = _stamps(trajectory)
    (episode,) = import_mini_swe_agent(trajectory)
    first, second, final = episode.rounds
    assert [c.args["command"] for c in first.calls] == ["cat task.txt"]
    assert first.calls[0].duration_sec == pytest.approx(
        observations[0][0]["timestamp"] - replies[0], abs=1e-6
    )
    sleep, listing = second.calls
    assert (sleep.args["command"], sleep.completed, sleep.duration_sec) == ("sleep 5", False, 1.0)
    step_total = max(o["timestamp"] for o in observations[1]) - replies[1]
    assert listing.duration_sec == pytest.approx(step_total - 1.0, abs=1e-6)
    assert listing.completed and listing.tool == "list_files"
    assert second.send_sec == pytest.approx(replies[1] - observations[0][0]["timestamp"], abs=1e-6)
    assert final.calls == [] and episode.end_reason == "final_answer"
    assert episode.meta["environment_timeout_sec"] == "1.0"


def test_the_cli_imports_the_trajectory(
    trajectory: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``reviewlab import auto`` detects the format and reports the one censored call."""
    out = tmp_path / "mini.jsonl"
    assert main(["import", "auto", str(trajectory), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "detected format mini_swe_agent" in text
    assert "3 call(s) (1 censored)" in text
    assert [c.completed for c in load_episodes(out)[0].calls] == [True, False, True]


def test_a_format_1_trajectory_is_read_from_its_message_stamps(tmp_path: Path) -> None:
    """Format 1 (releases 1.x): stamps on every message, the killed step's text censored."""
    messages = [
        {"role": "system", "content": "s", "timestamp": 100.0},
        {"role": "user", "content": "task", "timestamp": 100.0},
        {"role": "assistant", "content": "x", "action": "grep -rn foo .", "timestamp": 102.5},
        {
            "role": "user",
            "content": "<returncode>0</returncode>\n<output>a</output>",
            "timestamp": 103,
        },
        {"role": "assistant", "content": "y", "action": "make test", "timestamp": 104.0},
        {
            "role": "user",
            "content": "The last command <command>make</command> timed out and has been killed.",
            "timestamp": 164.2,
        },
    ]
    document = {
        "info": {"exit_status": "LimitsExceeded", "config": {"environment": {"timeout": 60}}},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
    }
    path = tmp_path / "old.traj.json"
    path.write_text(json.dumps(document))
    found, (episode,) = import_auto(path)
    assert found == "mini_swe_agent"
    grep, make = episode.calls
    assert (grep.tool, grep.duration_sec, grep.completed) == ("search_code", 0.5, True)
    assert (make.tool, make.duration_sec, make.completed) == ("run_command", 60.0, False)
    assert [r.send_sec for r in episode.rounds] == [2.5, 1.0]
    assert episode.end_reason == "log_end"


def test_an_unknown_trajectory_format_names_it(tmp_path: Path) -> None:
    """A future ``trajectory_format`` is refused by name, never read as another one."""
    path = tmp_path / "new.traj.json"
    path.write_text(json.dumps({"trajectory_format": "mini-swe-agent-9", "messages": []}))
    with pytest.raises(ImportFormatError, match=r"'mini-swe-agent-9' is not a format"):
        import_mini_swe_agent(path)


def test_a_text_action_run_is_read_from_its_user_observations(tmp_path: Path) -> None:
    """Text actions (``mini_textbased.yaml``, ``DeterministicModel``): the observations are user
    messages with ``extra.returncode``; the killed ``sleep 5`` is censored at its 1 s limit."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MSWEA_GLOBAL_CONFIG_DIR", str(tmp_path / "home"))
        from minisweagent.agents.default import DefaultAgent
        from minisweagent.environments.local import LocalEnvironment
        from minisweagent.models.test_models import DeterministicModel, make_output

        class Stamped(DeterministicModel):
            """The release's scripted text model, stamping a reply when it is asked for."""

            def query(self, messages: list[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
                reply = super().query(messages, **kwargs)
                return {**reply, "extra": {**reply["extra"], "timestamp": time.time()}}

        config = yaml.safe_load(
            (importlib.resources.files("minisweagent.config") / "mini_textbased.yaml").read_text()
        )
        script = [
            make_output("look", [{"command": "ls"}]),
            make_output("wait", [{"command": "sleep 5"}]),
            make_output("done", [{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}]),
        ]
        path = tmp_path / "text.traj.json"
        agent = DefaultAgent(
            Stamped(outputs=script),
            LocalEnvironment(timeout=1, cwd=str(tmp_path)),
            **{**config["agent"], "output_path": path},
        )
        assert agent.run("look around")["exit_status"] == "Submitted"
    roles = [m["role"] for m in json.loads(path.read_text())["messages"]]
    assert "tool" not in roles and roles.count("user") >= 3
    (episode,) = import_mini_swe_agent(path)
    assert [(c.tool, c.completed) for c in episode.calls] == [
        ("list_files", True),
        ("run_command", False),
    ]
    assert episode.calls[1].duration_sec == 1.0
