"""`acpgen inspect --html` and `acpgen replay --html`: the session as a self-contained page, loaded
in headless Chromium; the assertions read the DOM after its script ran (--dump-dom): one diagram
row per line, the violation marked, the session filter applied from `?session=`, and a hostile
message shown as text (no element made from it). A screenshot is kept in the test's tmp folder.
.ci/run installs Debian's chromium when it is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "</script><img src=x onerror=\"document.title='pwned'\"><b>bold</b>"
# A tiny agent: two sessions; a prompt in each gets a hostile text chunk, a number where text
# belongs (a violation) and end_turn.
AGENT = r'''
import json, sys
n = 0
for raw in sys.stdin:
    m = json.loads(raw)
    out = []
    if m.get("method") == "initialize":
        out.append({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif m.get("method") == "session/new":
        n += 1
        out.append({"jsonrpc": "2.0", "id": m["id"], "result": {"sessionId": f"s{n}"}})
    elif m.get("method") == "session/prompt":
        sid = m["params"]["sessionId"]
        out.append({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": HOSTILE}}}})
        if sid == "s2":
            out.append({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": {
                "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 42}}}})
        out.append({"jsonrpc": "2.0", "id": m["id"], "result": {"stopReason": "end_turn"}})
    for o in out:
        sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()
'''.replace("HOSTILE", repr(HOSTILE))
CLIENT = b"".join([
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n',
    b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n',
    b'{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}\n',
    b'{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s2","prompt":[{"type":"text","text":"hi"}]}}\n',
])
LINES = 5 + 2 + 1 + 2 + 3  # what the client sent, and the agent's answers and updates


class Rows(HTMLParser):
    """The diagram rows (attributes of each tr.msg), the page title and every tag seen."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []
        self.tags: list[str] = []
        self.attributes: set[str] = set()
        self.title = ""
        self.in_title = False
        self.ids: dict[str, str] = {}
        self.current_id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        self.attributes.update(found)
        if tag == "tr" and "msg" in (found.get("class") or "").split():
            self.rows.append(found)
        self.in_title = tag == "title"
        self.current_id = found.get("id")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        if self.current_id:
            self.ids[self.current_id] = self.ids.get(self.current_id, "") + data

    def handle_endtag(self, tag: str) -> None:
        self.in_title = False
        self.current_id = None


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):  # CI installs it (.ci/run): a missing browser there is a failure
            pytest.fail("chromium is not installed, and .ci/run should have installed it")
        pytest.skip("chromium is not installed (.ci/run installs it: apt-get install chromium)")
    return found


def browse(page: Path, tmp: Path, query: str = "", screenshot: Path | None = None) -> Rows:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp / 'profile'}"]
    url = page.as_uri() + query
    if screenshot is not None:
        subprocess.run([chromium(), *flags, f"--screenshot={screenshot}", "--window-size=1200,900", url],
                       capture_output=True, timeout=120, check=True)
    result = subprocess.run([chromium(), *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True)
    parser = Rows()
    parser.feed(result.stdout)
    assert parser.rows, result.stdout[:2000]
    return parser


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("html")
    html = tmp / "session.html"
    trace = tmp / "session.jsonl"
    subprocess.run([sys.executable, "-m", "acpgen", "inspect", "--trace", str(trace), "--html", str(html), "--report",
                    str(tmp / "report.txt"), "--", sys.executable, "-c", AGENT],
                   input=CLIENT, capture_output=True, timeout=120, cwd=ROOT, check=True)
    return html


def test_the_page_is_self_contained_and_escapes_every_message(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "<img" not in text and "&lt;/script&gt;&lt;img" in text
    parsed = Rows()
    parsed.feed(text)
    # no external resource, and no element or handler made from a message
    assert not {"src", "href", "onerror", "onload"} & parsed.attributes
    assert set(parsed.tags) <= {"html", "head", "meta", "title", "style", "body", "h1", "p", "span", "label", "select",
                                "option", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "pre",
                                "small", "ul", "li", "script"}
    assert parsed.tags.count("script") == 1


def test_chromium_shows_the_diagram_with_the_violation_marked(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "session.png"
    dom = browse(page, tmp_path, screenshot=shot)
    assert shot.is_file() and shot.stat().st_size > 1000  # the artefact
    assert len(dom.rows) == LINES
    assert not [r for r in dom.rows if "hidden" in r]
    directions = [("c2a" in (r["class"] or "")) for r in dom.rows]
    assert directions.count(True) == 5
    marked = [r for r in dom.rows if "violation" in (r["class"] or "").split()]
    assert len(marked) == 1 and marked[0]["data-method"] == "session/update" and marked[0]["data-session"] == "s2"
    assert dom.ids["violation-count"] == "1"
    # the hostile text made no element and ran nothing
    assert "img" not in dom.tags and "b" not in dom.tags and dom.title != "pwned"


def test_the_session_filter_applies_from_the_address(page: Path, tmp_path: Path) -> None:
    dom = browse(page, tmp_path, "?session=s2")
    shown = [r for r in dom.rows if "hidden" not in r]
    assert shown and all(r["data-session"] == "s2" for r in shown)
    assert [r for r in dom.rows if r["data-session"] == "s1" and "hidden" in r]
    assert dom.ids["shown"] == str(len(shown))
    by_method = browse(page, tmp_path, "?method=session/prompt")
    assert {r["data-method"] for r in by_method.rows if "hidden" not in r} == {"session/prompt"}


def test_replay_writes_the_replayed_session_with_its_differences(page: Path, tmp_path: Path) -> None:
    trace = page.with_suffix(".jsonl")
    html = tmp_path / "replay.html"
    result = subprocess.run([sys.executable, "-m", "acpgen", "replay", str(trace), "--html", str(html), "--timeout", "20",
                             "--", sys.executable, "-c", AGENT], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    dom = browse(html, tmp_path)
    assert len(dom.rows) == LINES
    assert "no difference in shape" in html.read_text(encoding="utf-8")
