"""SWE-agent's time-limit message censors a step in either spelling, "cancelled" or "canceled"
(reviewlab/recording/interop/_swe_agent.py); other mentions of cancelling do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from reviewlab.recording.interop import import_swe_agent

TEST_REPO = FIXTURES / "swe_agent" / "6e44b9__sweagenttestrepo-1c2844.traj"


def _with_observation(tmp_path: Path, observation: str) -> list[bool]:
    """The completion of each imported call once step 3's observation is ``observation``."""
    document = json.loads(TEST_REPO.read_text())
    document["trajectory"][3]["observation"] = observation
    document["trajectory"][3]["execution_time"] = 30.02
    path = tmp_path / "step.traj"
    path.write_text(json.dumps(document))
    return [call.completed for call in import_swe_agent(path)[0].calls]


@pytest.mark.parametrize("spelling", ["cancelled", "canceled"])
@pytest.mark.parametrize(
    "template",
    [
        # SWE-agent's default command_cancelled_timeout_template (sweagent/agent/agents.py)
        "The command 'python3 slow.py' was {} because it took more than 30 seconds. "
        "Please try a different command that completes more quickly.",
        # the one of its config/bash_only.yaml
        "The command 'python3 slow.py' was {} because it took more than 30.0 seconds to complete.",
    ],
    ids=["default-template", "bash-only-template"],
)
def test_the_time_limit_message_censors_the_step_in_either_spelling(tmp_path, spelling, template):
    """Both spellings of SWE-agent's time-limit message make the step right-censored."""
    completed = _with_observation(tmp_path, template.format(spelling))
    assert completed == [True, True, True, False, True]


@pytest.mark.parametrize(
    "observation",
    [
        "Order 42 was canceled by the customer.",
        "The job was cancelled by the user after 3 retries.",
        "tests: 2 cancelled, 14 passed",
    ],
)
def test_other_mentions_of_cancelling_do_not_censor(tmp_path, observation):
    """Output that merely says something was cancelled is an ordinary, completed step."""
    assert all(_with_observation(tmp_path, observation))
