"""Commands that serve a page stop it, and its kernels, on every way out (reviewlab/ui/_serving.py).

``reviewlab lesson``, ``reviewlab dashboard`` and ``reviewlab lab`` run as a user runs them (a
process of their own, here in a session of their own so the test's signals reach nothing else).
Once the server answers on its port (and, for Voilà, once a visit has started a kernel), the
command gets SIGTERM, SIGHUP or SIGINT, or its parent is killed. Then the command, the server
and every kernel it started must be gone, and the port must refuse connections, so a second
start on it works. Every wait is on a state (the port answering, a process gone), with generous
timeouts, never on a race the test decides.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from reviewlab.ui import _serving

START_TIMEOUT_SEC = 120.0
GONE_TIMEOUT_SEC = 30.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _command(name: str, port: int, tmp_path: Path) -> list[str]:
    base = [sys.executable, "-m", "reviewlab", name, "--port", str(port)]
    if name == "lab":
        return [*base, "--notebooks", str(tmp_path)]
    return [*base, "--no-browser"]


def _wait_serving(port: int, process: psutil.Process, log: Path) -> None:
    """Until the port answers HTTP (any status): the server is up."""
    deadline = time.monotonic() + START_TIMEOUT_SEC
    while time.monotonic() < deadline:
        if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
            pytest.fail(f"the command exited early:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/no-such-page", timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            time.sleep(0.2)
    pytest.fail(f"no answer on port {port}:\n{log.read_text(errors='replace')}")


def _start_a_kernel(port: int, server: psutil.Process, log: Path) -> None:
    """Visit the page (Voilà starts a kernel for it) and wait until a kernel process runs."""
    with contextlib.suppress(OSError, urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
    deadline = time.monotonic() + START_TIMEOUT_SEC
    while time.monotonic() < deadline:
        kernels = [p for p in server.children(recursive=True) if "ipykernel" in _cmdline(p)]
        if kernels:
            return
        time.sleep(0.2)
    pytest.fail(f"no kernel started:\n{log.read_text(errors='replace')}")


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _gone(processes: list[psutil.Process]) -> list[str]:
    """The processes still alive (not zombies) after up to :data:`GONE_TIMEOUT_SEC`."""
    deadline = time.monotonic() + GONE_TIMEOUT_SEC
    alive = processes
    while time.monotonic() < deadline:
        alive = [p for p in alive if _alive(p)]
        if not alive:
            return []
        time.sleep(0.2)
    return [f"{p.pid}: {_cmdline(p)}" for p in alive]


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _serve_and_stop(name, how, tmp_path, *, kernel):
    """Start ``reviewlab NAME``, wait for its server (and a kernel), stop it ``how``; the
    processes left alive and whether the port still listens."""
    port = _free_port()
    log = tmp_path / f"{name}.log"
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "HOME": str(tmp_path)}
    if name == "lab":
        # JupyterLab refuses to run as root (CI containers) and would open a browser.
        config = tmp_path / "jupyter-config"
        config.mkdir()
        (config / "jupyter_server_config.json").write_text(
            json.dumps({"ServerApp": {"allow_root": True, "open_browser": False}})
        )
        env["JUPYTER_CONFIG_DIR"] = str(config)
    argv = _command(name, port, tmp_path)
    with log.open("wb") as sink:
        if how == "parent dies":
            # A parent that starts the command and then is killed without a word.
            parent_code = (
                "import subprocess, sys, time\n"
                f"child = subprocess.Popen({argv!r}, stdout=sys.stdout, stderr=subprocess.STDOUT)\n"
                "print(child.pid, flush=True, file=sys.stderr)\n"
                "time.sleep(600)\n"
            )
            parent = subprocess.Popen(
                [sys.executable, "-c", parent_code],
                stdout=sink,
                stderr=subprocess.PIPE,
                env=env,
                cwd=tmp_path,
                start_new_session=True,
            )
            assert parent.stderr is not None
            command = psutil.Process(int(parent.stderr.readline()))
        else:
            parent = subprocess.Popen(
                argv,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=tmp_path,
                start_new_session=True,
            )
            command = psutil.Process(parent.pid)
    started = [command]
    try:
        _wait_serving(port, command, log)
        servers = command.children()
        assert servers, "the command started no server"
        if kernel:
            _start_a_kernel(port, servers[0], log)
        started = [command, *command.children(recursive=True)]
        if how == "parent dies":
            parent.kill()
        else:
            parent.send_signal(how)
        status = parent.wait(timeout=GONE_TIMEOUT_SEC)
        left = _gone(started)
        if how != "parent dies":
            assert status == 0, f"the command exited {status}\n{log.read_text(errors='replace')}"
        return left, _listening(port), log
    finally:
        # Whatever the outcome, nothing this test started outlives it.
        with contextlib.suppress(psutil.Error):
            started += command.children(recursive=True)
        for process in started:
            if _alive(process):
                with contextlib.suppress(psutil.Error):
                    process.kill()
        if parent.poll() is None:
            parent.kill()
        if parent.stderr is not None:
            parent.stderr.close()


HOWS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, "parent dies"]


def _name(how: object) -> str:
    return how.name if isinstance(how, signal.Signals) else str(how).replace(" ", "-")


@pytest.mark.slow
@pytest.mark.parametrize("how", HOWS, ids=_name)
def test_the_lesson_and_its_kernel_are_gone_after_every_way_out(how, tmp_path):
    """``reviewlab lesson`` with a visitor's kernel running, then a stop signal (the command exits
    0) or its parent killed: no command, Voilà or kernel process is left, and the port is free
    again."""
    left, listening, log = _serve_and_stop("lesson", how, tmp_path, kernel=True)
    assert not left, f"left behind: {left}\n{log.read_text(errors='replace')}"
    assert not listening


@pytest.mark.slow
def test_the_dashboard_and_its_kernel_are_gone_after_a_hangup(tmp_path):
    """``reviewlab dashboard`` with a kernel running, after SIGHUP (a closed terminal; the same
    stop as the lesson's, so one case here): nothing is left and the port is free again."""
    left, listening, log = _serve_and_stop("dashboard", signal.SIGHUP, tmp_path, kernel=True)
    assert not left, f"left behind: {left}\n{log.read_text(errors='replace')}"
    assert not listening


@pytest.mark.slow
def test_jupyterlab_is_gone_after_sigterm(tmp_path):
    """``reviewlab lab`` stopped by a process manager's SIGTERM: JupyterLab is gone with it."""
    left, listening, log = _serve_and_stop("lab", signal.SIGTERM, tmp_path, kernel=False)
    assert not left, f"left behind: {left}\n{log.read_text(errors='replace')}"
    assert not listening


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    """A server (and a child of its own) that ignore SIGTERM are SIGKILLed with their group
    once the grace period has passed; one that honours it is gone at once."""
    stubborn = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    process = _serving.start_server([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
    assert process.stdout is not None
    child = psutil.Process(int(process.stdout.readline()))
    started = time.monotonic()
    _serving.stop_server(process, grace_sec=0.5)
    assert time.monotonic() - started >= 0.5
    assert process.returncode == -signal.SIGKILL
    assert not _gone([child])
    process.stdout.close()
