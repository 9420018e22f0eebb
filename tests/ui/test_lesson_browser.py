"""End to end: the lesson page served by Voilà (``reviewlab lesson``), driven in headless Chromium.

Debian's Chromium (``/usr/bin/chromium``) through Playwright, never a downloaded browser. The
page's outcome texts carry their facts as ``data-`` attributes (``data-bound-sec`` …), which
the test reads; every wait is for the page to say something, never a sleep.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from reviewlab.ui import _lesson as lesson

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_START_TIMEOUT_SEC = 90.0
_UI_TIMEOUT_MS = 180_000
_BOUND = ".rl-scene-outcome[data-scene='bound']"
_CREDITING = ".rl-scene-outcome[data-scene='crediting']"

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="Debian chromium is not installed (apt-get install chromium)",
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll until Voilà answers (readiness, not a race); fail with its log if it dies first."""
    deadline = time.monotonic() + _START_TIMEOUT_SEC
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"voila exited with {process.returncode}:\n{log.read_text(errors='replace')}"
            )
        try:
            with urllib.request.urlopen(url + "voila/static/no-such-file", timeout=5):
                return
        except urllib.error.HTTPError:
            return  # any HTTP answer means the server is up
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    pytest.fail(f"voila did not answer within {_START_TIMEOUT_SEC} s:\n{log.read_text()}")


@pytest.fixture()
def served(tmp_path):
    """The lesson on a free localhost port, stopped after the test."""
    port = _free_port()
    log = tmp_path / "voila.log"
    with log.open("wb") as sink:
        process = lesson.serve_lesson(port=port, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_until_serving(url, process, log)
        yield url, log
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _changed(page, selector: str, attribute: str, old: str) -> str:
    """Wait until ``attribute`` of ``selector`` differs from ``old``; return the new value."""
    page.wait_for_function(
        "([selector, attribute, old]) => { const e = document.querySelector(selector);"
        " return e !== null && e.getAttribute(attribute) !== old; }",
        arg=[selector, attribute, old],
        timeout=_UI_TIMEOUT_MS,
    )
    return str(page.locator(selector).get_attribute(attribute))


def _image(page, scene: str) -> str:
    return str(page.locator(f".rl-scene-{scene} img").first.get_attribute("src"))


@pytest.mark.browser
@pytest.mark.timeout(420)
def test_moving_the_deadline_slider_and_the_toggles_changes_the_drawn_bound_and_the_outcome(
    served, tmp_path
):
    """Dragging the inherited deadline down makes the deadline set a shorter bound, the narrowing
    toggle gives the tool timeout back, the crediting toggle shows wrong lines credited, and the
    zombie scene's toggle posts the comment once instead of twice."""
    from playwright.sync_api import sync_playwright

    url, log = served
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url, timeout=_UI_TIMEOUT_MS)
            outcome = page.locator(_BOUND)
            outcome.wait_for(timeout=_UI_TIMEOUT_MS)
            page.locator(_CREDITING).wait_for(timeout=_UI_TIMEOUT_MS)
            page.screenshot(path=str(tmp_path / "lesson-opened.png"), full_page=True)
            bound_before = str(outcome.get_attribute("data-bound-sec"))
            by_before = str(outcome.get_attribute("data-bound-by"))
            image_before = _image(page, "bound")

            slider = page.locator(".rl-scene-bound .widget-hslider", has_text="inherited deadline")
            handle = slider.locator(".noUi-handle")
            handle.wait_for(timeout=_UI_TIMEOUT_MS)
            box = handle.bounding_box()
            track = slider.locator(".noUi-target").bounding_box()
            assert box is not None and track is not None
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            # From 90 s toward 25 s of the 0-120 s track: the deadline becomes the nearer clock.
            target = track["x"] + track["width"] * 25 / 120
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(target, y, steps=10)
            page.mouse.up()
            bound_after = _changed(page, _BOUND, "data-bound-sec", bound_before)
            by_after = str(outcome.get_attribute("data-bound-by"))
            page.wait_for_function(
                "([selector, old]) => { const e = document.querySelector(selector);"
                " return e !== null && e.getAttribute('src') !== old; }",
                arg=[".rl-scene-bound img", image_before],
                timeout=_UI_TIMEOUT_MS,
            )
            outcome.screenshot(path=str(tmp_path / "bound-outcome.png"))
            page.locator(".rl-scene-bound").screenshot(path=str(tmp_path / "bound-deadline.png"))

            page.locator(".rl-scene-bound button", has_text="none").click()
            by_none = _changed(page, _BOUND, "data-bound-by", by_after)
            bound_none = str(outcome.get_attribute("data-bound-sec"))
            page.locator(".rl-scene-bound").screenshot(path=str(tmp_path / "bound-none.png"))

            credited = page.locator(_CREDITING)
            before_rule = str(credited.get_attribute("data-outcome"))
            page.locator(".rl-scene-crediting button", has_text="sticky rule off").click()
            after_rule = _changed(page, _CREDITING, "data-outcome", before_rule)
            crediting_text = credited.inner_text()
            page.locator(".rl-scene-crediting").screenshot(path=str(tmp_path / "crediting.png"))

            zombie = ".rl-scene-outcome[data-scene='zombie']"
            page.locator(".rl-scene-zombie button", has_text="side effects protected").click()
            posted = _changed(page, zombie, "data-outcome", "posted-2")
            page.locator(".rl-scene-zombie").screenshot(path=str(tmp_path / "zombie.png"))
            page.locator(".rl-scene-hidden-clock").screenshot(path=str(tmp_path / "hidden.png"))
            page.screenshot(path=str(tmp_path / "lesson.png"), full_page=True)
        finally:
            browser.close()
    context = log.read_text(errors="replace")
    assert (by_before, bound_before) == ("tool_timeout", "30"), context
    assert by_after == "deadline" and float(bound_after) < float(bound_before), (
        bound_after,
        context,
    )
    assert (by_none, bound_none) == ("tool_timeout", "30"), context
    assert (before_rule, after_rule) == ("uncredited", "wrong"), context
    assert "Wrong lines credited" in crediting_text
    assert posted == "posted-1", context
    names = ("lesson.png", "bound-deadline.png", "bound-none.png", "crediting.png", "zombie.png")
    for name in names:
        assert (tmp_path / name).stat().st_size > 10_000, name
