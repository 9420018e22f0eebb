"""End to end: the dashboard served by Voilà, driven in headless Chromium through Playwright."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from reviewlab.ui import _dashboard as dashboard

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
_UI_TIMEOUT_MS = 120_000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll until Voilà answers (readiness, not a race): fail with its
    log if it dies or never answers."""
    deadline = time.monotonic() + _START_TIMEOUT_SEC
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"voila exited with {process.returncode}:\n{log.read_text(errors='replace')}"
            )
        try:
            # Any HTTP answer (even 404) means the server is up; the page
            # itself would start a kernel.
            with urllib.request.urlopen(url + "voila/static/no-such-file", timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    pytest.fail(
        f"voila did not answer within {_START_TIMEOUT_SEC} s:\n{log.read_text(errors='replace')}"
    )


@pytest.fixture()
def served(tmp_path, corpus_file):
    """The dashboard on a free localhost port, stopped after the test."""
    port = _free_port()
    log = tmp_path / "voila.log"
    with log.open("wb") as sink:
        process = dashboard.serve(
            port=port, corpus=corpus_file, stdout=sink, stderr=subprocess.STDOUT
        )
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


@pytest.fixture()
def corpus_file(tmp_path):
    """The bundled corpus when present, else a seeded synthetic one of the same size."""
    bundled = dashboard.default_corpus()
    if bundled.is_file():
        return bundled
    from reviewlab.recording.synth import write_synthetic

    path = tmp_path / "synthetic-1k.jsonl.gz"
    write_synthetic(path, 1000, seed=0)
    return path


_CURRENT = "tr[data-current] td[data-curve]"
_CURVE = "tr.rl-curve td[data-curve]"
_TEXTS = "(selector) => Array.from(document.querySelectorAll(selector), e => e.innerText).join('|')"


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_moving_a_slider_in_the_browser_moves_the_metrics_and_the_tradeoff_curve(served, tmp_path):
    """Dragging query_code's slider down in the page raises the abandoned-call rate shown, moves
    the current point and the trade-off curve (table and chart), and the page is screenshotted."""
    from playwright.sync_api import sync_playwright

    url, log = served
    shot = tmp_path / "dashboard.png"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.goto(url, timeout=_UI_TIMEOUT_MS)
            cell = page.locator("td[data-metric='abandoned_call_rate']")
            cell.wait_for(timeout=_UI_TIMEOUT_MS)
            page.locator(_CURRENT).first.wait_for(timeout=_UI_TIMEOUT_MS)
            before = cell.inner_text()
            timeout_loss = page.locator("td[data-metric='timeout_coverage_loss_rate']")
            assert timeout_loss.count() == 1  # coverage lost to timeouts is among the metrics
            current_before = page.evaluate(_TEXTS, _CURRENT)
            curve_before = page.evaluate(_TEXTS, _CURVE)
            charts_before = page.evaluate(
                "() => Array.from(document.querySelectorAll('img'), e => e.src).join('|')"
            )
            assert "preset: ouroboros" in page.locator("table.rl-tradeoff").inner_text()
            slider = page.locator(".widget-hslider", has_text="query_code")
            handle = slider.locator(".noUi-handle")
            handle.wait_for(timeout=_UI_TIMEOUT_MS)
            box = handle.bounding_box()
            assert box is not None
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(
                x - 250, y, steps=10
            )  # toward 0.1 s: most query_code calls now outlive it
            page.mouse.up()
            page.wait_for_function(
                "([selector, old]) => Array.from(document.querySelectorAll(selector),"
                " e => e.innerText).join('|') !== old",
                arg=[_CURRENT, current_before],
                timeout=_UI_TIMEOUT_MS,
            )
            page.wait_for_function(
                "([selector, old]) => { const e = document.querySelector(selector);"
                " return e !== null && e.innerText !== old; }",
                arg=["td[data-metric='abandoned_call_rate']", before],
                timeout=_UI_TIMEOUT_MS,
            )
            after = cell.inner_text()
            current_after = page.evaluate(_TEXTS, _CURRENT)
            curve_after = page.evaluate(_TEXTS, _CURVE)
            charts_after = page.evaluate(
                "() => Array.from(document.querySelectorAll('img'), e => e.src).join('|')"
            )
            page.wait_for_function(
                "() => Array.from(document.images).every(i => i.complete)",
                timeout=_UI_TIMEOUT_MS,
            )  # the charts decoded before the screenshot
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    detail = (before, after, log.read_text(errors="replace"))
    assert float(after.rstrip(" %")) > float(before.rstrip(" %")), detail
    assert current_after != current_before and curve_after != curve_before, detail
    # The current point's abandoned-call rate is the metric shown.
    assert current_after.split("|")[1] == after
    assert charts_after != charts_before  # the trade-off chart (and the per-tool one) redrawn
    assert shot.stat().st_size > 10_000
