"""The dashboard's commands and page content, without a browser (see
test_dashboard_browser.py for one)."""

from __future__ import annotations

import sys

import nbformat
import pytest

from reviewlab.recording._files import save_episodes
from reviewlab.recording.synth import synth_corpus
from reviewlab.ui import _dashboard as dashboard


def test_the_voila_command_serves_the_template_on_localhost_only():
    """The argv runs this interpreter's Voilà on the template notebook, bound
    to 127.0.0.1, without a browser."""
    argv = dashboard.dashboard_command(port=9123)
    assert argv[:4] == [sys.executable, "-m", "voila", str(dashboard.NOTEBOOK)]
    assert "--port=9123" in argv and "--Voila.ip=127.0.0.1" in argv and "--no-browser" in argv
    assert "--no-browser" not in dashboard.dashboard_command(open_browser=True)
    assert f"--port={dashboard.DEFAULT_PORT}" in dashboard.dashboard_command()


@pytest.mark.parametrize("port", [0, 70000, True, "80"])
def test_a_bad_port_is_refused_naming_it(port):
    """Ports outside 1..65535 (or not integers) are a ValueError naming ``port``."""
    with pytest.raises(ValueError, match="port"):
        dashboard.dashboard_command(port=port)


def test_the_corpus_reaches_the_kernel_through_the_environment(tmp_path):
    """A corpus file is passed as an absolute path in
    REVIEWLAB_DASHBOARD_CORPUS; a missing one is refused."""
    corpus = tmp_path / "c.jsonl"
    save_episodes(synth_corpus(3, seed=1), corpus)
    env = dashboard.dashboard_env(corpus, base={"PATH": "/bin"})
    assert env == {"PATH": "/bin", dashboard.CORPUS_ENV: str(corpus.resolve())}
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        dashboard.dashboard_env(tmp_path / "nope.jsonl")


def test_the_template_notebook_only_calls_the_library():
    """The page runs one code cell that builds the explorer through
    dashboard_explorer, and is committed clean."""
    notebook = nbformat.read(dashboard.NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert len(code) == 1 and "dashboard_explorer()" in code[0].source
    assert code[0].outputs == [] and notebook.metadata["kernelspec"]["name"] == "python3"


def test_dashboard_explorer_opens_the_corpus_named_in_the_environment(tmp_path, monkeypatch):
    """What the page shows is an explorer over the corpus the server was given."""
    corpus = tmp_path / "c.jsonl"
    save_episodes(synth_corpus(20, seed=2), corpus)
    monkeypatch.setenv(dashboard.CORPUS_ENV, str(corpus))
    explorer = dashboard.dashboard_explorer(chart=False)
    assert len(explorer.episodes) == 20
    assert "20 episodes" in explorer.metrics.value


def test_dashboard_explorer_opens_a_parquet_corpus(tmp_path):
    """A Parquet corpus (what ``open_corpus`` reads beside JSONL) is explored episode for
    episode, in its order."""
    from reviewlab.recording.columnar import write_columnar

    written = synth_corpus(7, seed=3)
    corpus = tmp_path / "c.parquet"
    write_columnar(written, corpus)
    explorer = dashboard.dashboard_explorer(corpus, chart=False)
    assert [episode.id for episode in explorer.episodes] == [episode.id for episode in written]
    assert "7 episodes" in explorer.metrics.value


def test_dashboard_explorer_opens_a_gateway_session_folder(tmp_path, monkeypatch):
    """A gateway's recording folder (one file per host session) is explored as one episode per
    session, with the calls each session recorded."""
    from reviewlab.recording import SessionJournal
    from reviewlab.recording._schema import Call

    folder = tmp_path / "gw-rec"
    for tools in (["read_file", "read_file"], ["grep", "read_file", "grep"]):
        journal = SessionJournal(folder, meta={"recorded_by": "reviewlab gateway"})
        for at, tool in enumerate(tools):
            journal.call(Call(tool=tool, duration_sec=0.5, transport="mcp"), at_sec=float(at))
        journal.close()
    monkeypatch.setenv(dashboard.CORPUS_ENV, str(folder))
    explorer = dashboard.dashboard_explorer(chart=False)
    calls = sorted(len(episode.calls) for episode in explorer.episodes)
    assert calls == [2, 3]
    assert "2 episodes" in explorer.metrics.value


def test_a_malformed_line_is_named_by_file_and_line_in_the_page(tmp_path):
    """A JSONL corpus whose second line is not an episode gives the page naming the file and
    line 2, not an explorer."""
    corpus = tmp_path / "c.jsonl"
    save_episodes(synth_corpus(1, seed=4), corpus)
    with corpus.open("a", encoding="utf-8") as out:
        out.write('{"schema": "reviewlab.episode/1", "rounds": "many"}\n')
    page = dashboard.dashboard_explorer(corpus, chart=False)
    assert type(page).__name__ == "HTML"
    assert f"{corpus}:2:" in page.value and "Traceback" not in page.value


def test_a_damaged_session_folder_or_parquet_file_is_named_in_the_page(tmp_path):
    """A session file with a line after its end line (header, call, end: line 4) and a file
    called .parquet that is not one each give the page naming the file (and the line)."""
    from reviewlab.recording import SessionJournal
    from reviewlab.recording._schema import Call

    folder = tmp_path / "gw-rec"
    journal = SessionJournal(folder, meta={})
    journal.call(Call(tool="read_file", duration_sec=1.0, transport="mcp"), at_sec=0.0)
    journal.close()
    (session,) = folder.iterdir()
    with session.open("a", encoding="utf-8") as out:
        out.write('{"late": 1}\n')
    fake = tmp_path / "c.parquet"
    fake.write_bytes(b"not parquet at all")
    for corpus, named in ((folder, f"{session}:4:"), (fake, str(fake))):
        page = dashboard.dashboard_explorer(corpus, chart=False)
        assert type(page).__name__ == "HTML"
        assert named in page.value and "Traceback" not in page.value


def test_lab_command_opens_jupyterlab_on_the_notebooks(tmp_path):
    """``make lab`` runs this interpreter's JupyterLab rooted at
    notebooks/ (or the folder given)."""
    argv = dashboard.lab_command()
    assert argv[:4] == [sys.executable, "-m", "jupyter", "lab"]
    assert argv[-1].startswith("--notebook-dir=") and argv[-1].endswith("notebooks")
    assert dashboard.lab_command(tmp_path, port=8890)[-2:] == [
        f"--notebook-dir={tmp_path}",
        "--port=8890",
    ]


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"\x1f\x8b\x08\x00garbage", "gzip"),
        (b'{"schema": "reviewlab.episode/1", "id": 3}\n', ":1:"),
        (b"\xff\xfe not utf-8\n", ":1:"),
        (b"", "no episodes"),
    ],
)
def test_a_bad_corpus_is_a_readable_message_in_the_page(tmp_path, monkeypatch, content, needle):
    """A damaged, malformed or empty corpus gives a page naming the file and the defect."""
    corpus = tmp_path / "bad.jsonl.gz"
    corpus.write_bytes(content)
    monkeypatch.setenv(dashboard.CORPUS_ENV, str(corpus))
    page = dashboard.dashboard_explorer(chart=False)
    assert type(page).__name__ == "HTML"
    assert str(corpus) in page.value and needle in page.value
    assert "Traceback" not in page.value


def test_the_served_template_shows_a_bad_corpus_without_a_traceback(tmp_path, monkeypatch):
    """Executing the page's template on a malformed corpus outputs the message, not an error."""
    from nbclient import NotebookClient

    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"schema": "reviewlab.episode/1", "rounds": "many"}\n')
    monkeypatch.setenv(dashboard.CORPUS_ENV, str(corpus))
    notebook = nbformat.read(dashboard.NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    [cell] = [cell for cell in notebook.cells if cell.cell_type == "code"]
    kinds = [output.output_type for output in cell.outputs]
    assert "error" not in kinds
    [shown] = [output.data["text/plain"] for output in cell.outputs if "data" in output]
    assert shown.startswith("HTML(") and "reviewlab-error" in shown
