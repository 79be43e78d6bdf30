"""acpgen inspect: byte-transparent both ways (stderr too), violations reported with direction,
method, id and JSON path, a JSONL trace, and the agent's exit status passed on, whatever the
traffic (bad JSON, a 3 MiB line, bytes that are not UTF-8, a dying agent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "tests" / "kit" / "scripted_agent.py"
INSPECT = [sys.executable, "-m", "acpgen", "inspect"]

CLIENT_BYTES = b"".join([
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n',
    b"this line is not JSON\n",
    b'{"jsonrpc":"2.0","id":"n-1","method":"session/new","params":{"cwd":"relative","mcpServers":[]}}\n',
    b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"' +
    b"z" * (2 * 1024 * 1024) + b'"}]}}\n',
    b"\x00\xc3\x28 binary\r\n",
    b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}',  # no final newline
])


def run_inspect(tmp_path: Path, stdin: bytes, *extra: str, mode: str = "") -> subprocess.CompletedProcess[bytes]:
    received, sent = tmp_path / "received.bin", tmp_path / "sent.bin"
    command = [*INSPECT, *extra, "--", sys.executable, str(SCRIPTED), str(received), str(sent)]
    if mode:
        command.append(mode)
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120, cwd=ROOT)


def test_inspect_is_byte_transparent_both_ways_and_passes_the_exit_status(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    result = run_inspect(tmp_path, CLIENT_BYTES, "--report", str(report))
    assert result.returncode == 3
    # What the agent received is exactly what the client wrote; what the client read is exactly what
    # the agent wrote; the agent's stderr comes through unchanged (reports went to the file).
    assert (tmp_path / "received.bin").read_bytes() == CLIENT_BYTES
    assert result.stdout == (tmp_path / "sent.bin").read_bytes()
    assert len(result.stdout) > 3 * 1024 * 1024
    assert result.stderr == b"scripted agent: log line on stderr\n"


def test_inspect_reports_each_violation_with_direction_method_id_and_path(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    run_inspect(tmp_path, CLIENT_BYTES, "--report", str(report))
    lines = report.read_text().splitlines()
    expected = [
        "client->agent ?: not a JSON-RPC message: invalid JSON",
        "agent->client ?: not a JSON-RPC message: invalid JSON",  # the banner on stdout
        "agent->client session/update at params.update.content.text: expected a string, got an integer (42)",
        "agent->client: not UTF-8 at byte 0",
        'agent->client session/prompt (id 2) at result.stopReason',
        "client->agent session/cancel at params.sessionId: required key is missing",
    ]
    for fragment in expected:
        assert any(fragment in line for line in lines), (fragment, lines)
    # The 2 MiB prompt and the 3 MiB update are decoded and valid: no report names them.
    assert not any("line longer" in line for line in lines)


def test_inspect_writes_a_trace_that_maps_back_to_the_bytes(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    run_inspect(tmp_path, CLIENT_BYTES, "--trace", str(trace), "--report", str(tmp_path / "r.txt"))
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    to_agent = [r for r in records if r["dir"] == "client->agent"]
    rebuilt = b"\n".join(r["line"].encode("utf-8", "surrogateescape") for r in to_agent)
    assert rebuilt == CLIENT_BYTES  # every line, byte for byte
    kinds = [(r.get("kind"), r.get("method")) for r in to_agent]
    assert kinds[:3] == [("request", "initialize"), ("invalid", None), ("request", "session/new")]
    prompt_answer = next(r for r in records if r["dir"] == "agent->client" and r.get("method") == "session/prompt")
    assert prompt_answer["kind"] == "response" and prompt_answer["violations"][0]["path"] == "result.stopReason"
    assert any(r["dir"] == "agent-stderr" for r in records)
    assert all(isinstance(r["t"], float) for r in records)


def test_inspect_exits_with_a_dying_agent_while_the_client_keeps_its_stdin_open(tmp_path: Path) -> None:
    received, sent = tmp_path / "received.bin", tmp_path / "sent.bin"
    proc = subprocess.Popen([*INSPECT, "--", sys.executable, str(SCRIPTED), str(received), str(sent), "die"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n')
    proc.stdin.flush()
    try:
        code = proc.wait(30)
    finally:
        proc.kill()
        proc.communicate()
    assert code == 5
    assert received.read_bytes().startswith(b'{"jsonrpc"')



def test_inspect_ends_with_the_agent_and_takes_the_children_it_left(tmp_path: Path) -> None:
    # npm launchers leave a child holding stdout; inspect used to wait 5 s per pipe and leave it alive.
    pid_file = tmp_path / "child.pid"
    launcher = ("import pathlib, subprocess, sys\n"
                "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], stdin=subprocess.DEVNULL)\n"
                f"pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))\n"
                "sys.stdin.readline()\n")
    done = subprocess.run([*INSPECT, "--", sys.executable, "-c", launcher], input=b"\n", capture_output=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    child = int(pid_file.read_text())
    for _ in range(50):
        if not Path(f"/proc/{child}").exists() or Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.02)
    else:
        raise AssertionError(f"the agent's child {child} outlived inspect")


def test_inspect_between_the_example_client_and_agent_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# hello\n", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    agent = [*INSPECT, "--trace", str(trace), "--", sys.executable, str(ROOT / "examples" / "agent.py")]
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "client.py"), "--json", "--cwd", str(tmp_path), *agent],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "ACP_EXAMPLE_PAUSE_S": "0"})
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.splitlines()[-1])
    assert (summary["stopReason"], summary["errors"]) == ("end_turn", [])
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert not [r for r in records if r.get("violations")]
    methods = [r.get("method") for r in records if r["dir"] != "agent-stderr"]
    assert methods.count("session/update") == 4 and "fs/read_text_file" in methods
    assert time.monotonic() - start < 120


def test_inspect_says_what_to_do_when_the_command_or_binding_is_wrong(tmp_path: Path) -> None:
    missing = subprocess.run([*INSPECT, "--", str(tmp_path / "no-such-agent")], capture_output=True, text=True, timeout=60)
    # could not run (3), not a usage error (2): the options were right, the program is not there
    assert missing.returncode == 3 and "no such program" in missing.stderr and "Traceback" not in missing.stderr
    bad = subprocess.run([*INSPECT, "--protocol", "v9", "--", sys.executable, "-c", "pass"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "no bundled binding named 'v9'" in bad.stderr
    # the kit's first spelling, --target, still works and says it is deprecated
    old = subprocess.run([*INSPECT, "--target", "v9", "--", sys.executable, "-c", "pass"], capture_output=True,
                         text=True, timeout=60)
    assert old.returncode == 2 and "no bundled binding named 'v9'" in old.stderr
    assert "--target is deprecated here, use --protocol" in old.stderr
    both = subprocess.run([*INSPECT, "--protocol", "v1", "--target", "v2", "--", sys.executable, "-c", "pass"],
                          capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "--protocol v1 and --target v2 contradict each other" in both.stderr


def test_observer_decodes_answers_by_the_method_of_their_request_and_checks_direction() -> None:
    from acpgen.kit.bindings import load_binding
    from acpgen.kit.observe import TO_AGENT, TO_CLIENT, Observer

    observer = Observer(load_binding(target="v1"))
    observer.feed(TO_AGENT, '{"jsonrpc":"2.0","id":"a","method":"session/new","params":{"cwd":"/","mcpServers":[]}}')
    [answer] = observer.feed(TO_CLIENT, '{"jsonrpc":"2.0","id":"a","result":{"sessionId":7}}')
    assert (answer.kind, answer.method) == ("response", "session/new")
    assert [(v.path, v.message) for v in answer.violations] == [("result.sessionId", "expected a string, got an integer (7)")]
    # The same id as a number is another request: nothing is in flight under 1.
    [stray] = observer.feed(TO_CLIENT, '{"jsonrpc":"2.0","id":1,"result":{}}')
    assert [v.path for v in stray.violations] == ["id"]
    # A method the agent sends to the client, sent the other way round.
    [wrong] = observer.feed(TO_AGENT, '{"jsonrpc":"2.0","id":2,"method":"session/update","params":{}}')
    assert "handled by the client" in wrong.violations[0].message
    # An empty result may come as null; an extension method is raw JSON.
    observer.feed(TO_AGENT, '{"jsonrpc":"2.0","id":4,"method":"_vendor/thing","params":[1]}')
    [ext] = observer.feed(TO_CLIENT, '{"jsonrpc":"2.0","id":4,"result":"anything"}')
    assert ext.violations == [] and ext.method == "_vendor/thing"


def test_analyser_skips_decoding_an_overlong_line_and_goes_on() -> None:
    from acpgen.kit.bindings import load_binding
    from acpgen.kit.inspect import Analyser
    from acpgen.kit.observe import TO_CLIENT, Observer

    reports: list[str] = []
    analyser = Analyser(Observer(load_binding()), reports.append, None, max_line=100)
    analyser.put(TO_CLIENT, b'{"jsonrpc":"2.0","method":"session/update","params":{"x":"' + b"a" * 300)
    analyser.put(TO_CLIENT, b'"}}\n{"jsonrpc":"2.0","method":"session/update","params":{}}\n')
    analyser.close(10)
    assert reports[0] == "agent->client: a line longer than 100 bytes was forwarded but is not decoded"
    assert "params.sessionId: required key is missing" in reports[1]
    assert analyser.messages == 1


def test_observer_decodes_with_the_v2_binding() -> None:
    from acpgen.kit.bindings import load_binding
    from acpgen.kit.observe import TO_AGENT, Observer

    observer = Observer(load_binding(target="v2"))
    [good] = observer.feed(TO_AGENT, json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}}))
    assert good.violations == []
    [v1_shaped] = observer.feed(TO_AGENT, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": 1, "clientCapabilities": {}}}))
    assert [(v.path, v.message) for v in v1_shaped.violations] == [("params.info", "required key is missing")]
    # session/load is gone in v2: a v1 client's call is reported as unknown.
    [load] = observer.feed(TO_AGENT, '{"jsonrpc":"2.0","id":2,"method":"session/load","params":{}}')
    assert load.violations[0].path == "method"
