"""acpgen inspect verdicts that were wrong against real peers: a session a v1+v2 router answered in
v2 (decoded with v1: false drops), what the leniency annotations dropped or replaced (an unprefixed
logger line, not in --report), an answer to a notification with id null or "" (toad answers
$/cancel_request so), and the -32700 answer to an unreadable line, which stays allowed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from acpgen.kit.bindings import load_binding
from acpgen.kit.observe import TO_AGENT, TO_CLIENT, Observer

ROOT = Path(__file__).resolve().parents[2]
INSPECT = [sys.executable, "-m", "acpgen", "inspect"]

V2_SESSION = b"".join([
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"capabilities":{},'
    b'"info":{"name":"t","version":"1"}}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n',
])
LENIENT_AGENT = r'''
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 1,
            "agentCapabilities": {"promptCapabilities": {"image": "yes"}},
            "authMethods": [{"id": "a", "name": "A"}, {"name": "no id"}]}}), flush=True)
'''


def inspect(tmp_path: Path, stdin: bytes, *command: str) -> tuple[subprocess.CompletedProcess[bytes], list[str]]:
    report = tmp_path / "report.txt"
    result = subprocess.run([*INSPECT, "--report", str(report), "--", *command], input=stdin,
                            capture_output=True, timeout=60, cwd=ROOT)
    return result, report.read_text().splitlines()


def test_inspect_follows_the_version_a_router_answered_with(tmp_path: Path) -> None:
    # checked with the v1 binding, the router's correct v2 answers lost "items" (auth methods, config
    # options) to the leniency annotations and printed unprefixed lines
    result, lines = inspect(tmp_path, V2_SESSION, sys.executable, str(ROOT / "examples" / "agent_router.py"))
    assert result.returncode == 0, result.stderr
    assert b'"protocolVersion":2' in result.stdout
    assert lines == ["the agent answered initialize with protocolVersion 2: the session is checked with acp_v2 "
                     "from here on"], lines
    assert b"dropped" not in result.stderr


def test_inspect_reports_what_the_leniency_annotations_dropped_or_replaced(tmp_path: Path) -> None:
    init = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
    result, lines = inspect(tmp_path, init, sys.executable, "-c", LENIENT_AGENT)
    assert result.returncode == 0, result.stderr
    text = "\n".join(lines)
    assert ("agent->client initialize (id 0) at result.agentCapabilities.promptCapabilities.image: tolerated by "
            "the schema's leniency annotations: \"yes\" replaced by false") in text, text
    assert "at result.authMethods: tolerated by the schema's leniency annotations: dropped 1 of 2 item(s)" in text
    assert "2 tolerated under the schema's leniency annotations" in text
    assert b"dropped invalid item" not in result.stderr  # no unprefixed logger line any more


def test_a_valid_message_tolerates_nothing() -> None:
    observer = Observer(load_binding(None, "v1"))
    observer.feed(TO_AGENT, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}')
    [answer] = observer.feed(TO_CLIENT, '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":'
                                        '{"loadSession":true,"promptCapabilities":{"image":true}},"authMethods":'
                                        '[{"id":"a","name":"A"}],"futureKey":{"x":1}}}')
    assert answer.violations == [] and answer.tolerated == []


def test_an_answer_to_a_notification_is_a_violation_and_a_parse_error_answer_is_not() -> None:
    observer = Observer(load_binding(None, "v1"))
    observer.feed(TO_CLIENT, '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}')
    for answer_id in ("null", '""'):
        [answer] = observer.feed(TO_AGENT, f'{{"jsonrpc":"2.0","id":{answer_id},"error":{{"code":-32601,"message":"no"}}}}')
        assert [v.path for v in answer.violations] == ["id"], answer.violations
        assert "a notification (such as $/cancel_request) is never answered" in answer.violations[0].message
    # an unreadable line may be answered once with id null
    observer.feed(TO_AGENT, '{"jsonrpc": "2.0", "id": 9, "method": ')
    [parse_error] = observer.feed(TO_CLIENT, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
    assert parse_error.violations == []
    [again] = observer.feed(TO_CLIENT, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
    assert [v.path for v in again.violations] == ["id"]
