"""acpgen conform agent|client: the examples pass every MUST; each deliberately broken agent and
client (tests/kit/faulty_*.py, one fault per run) fails the rule its fault breaks; --json and
--junit carry the same results."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / "tests" / "kit"
ACPGEN = [sys.executable, "-m", "acpgen"]
FAULTY_AGENT = [sys.executable, str(KIT / "faulty_agent.py")]
FAULTY_CLIENT = [sys.executable, str(KIT / "faulty_client.py")]
PEERS = ROOT / "tests" / "peers"
# What the official SDKs' peers (tests/peers) fail, as README.md reports it.
SDK_FAILURES = {
    "ts-agent": {"cancel_request.honoured"},
    "py-agent": {"rpc.parse_error", "init.version.invalid", "cancel_request.honoured"},
    "ts-client": set(),
    "py-client": set(),
}

# fault -> the rule it must fail (and whether that rule is a MUST, i.e. the exit status is 1)
AGENT_FAULTS = {
    "wrong_field_type": ("updates.valid", True),
    "missing_cancelled": ("cancel.cancelled", True),
    "stdout_noise": ("stdout.clean", True),
    "no_method_not_found": ("rpc.method_not_found", True),
    "dies_on_bad_line": ("rpc.survives_bad_line", True),
    "answers_notifications": ("rpc.notification_unanswered", True),
    "fs_unadvertised": ("capabilities.fs", True),
    "version_echo": ("init.version.newer", True),
    "bad_stop_reason": ("prompt.stop_reason", True),
    "no_load_replay": ("session.load", True),
    "numeric_id": ("jsonrpc.id", True),
    "hangs_on_eof": ("exit.stdin_closed", False),
}
CLIENT_FAULTS = {
    "no_initialize": ("client.initialize_first", True),
    "relative_cwd": ("client.session_new", True),
    "image_prompt": ("client.prompt", True),
    "wrong_option": ("client.permission", True),
    "bad_permission_shape": ("client.permission", True),
    "no_method_not_found": ("client.method_not_found", True),
    "dies_on_unknown_variant": ("client.unknown_variant", False),
    "dies_on_unknown_field": ("client.unknown_fields", True),
    "line_limit_64k": ("client.large_update", False),
    "allows_after_cancel": ("client.cancel.permission", True),
    "stdin_noise": ("client.stdin.clean", True),
}


def conform(kind: str, command: list[str], out: Path, *options: str) -> tuple[int, dict[str, Any], str, Path]:
    report = out.with_suffix(".json")
    result = subprocess.run([*ACPGEN, "conform", kind, "--json", str(report), "--junit", str(out.with_suffix(".xml")),
                             "--timeout", "30", *options, "--", *command],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert report.is_file(), result.stderr
    return result.returncode, json.loads(report.read_text()), result.stdout, out.with_suffix(".xml")


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any], str, Path]]:
    """Every conform run of this module, four at a time (each takes a few seconds, mostly waiting)."""
    out = tmp_path_factory.mktemp("conform")
    jobs: dict[str, tuple[str, list[str], tuple[str, ...]]] = {
        "example-agent": ("agent", [sys.executable, str(ROOT / "examples" / "agent.py")], ()),
        "example-client": ("client", [sys.executable, str(ROOT / "examples" / "client.py"), "--json"], ("--cancel-args=--cancel",)),
        "faulty-agent": ("agent", FAULTY_AGENT, ()),
        "faulty-client": ("client", FAULTY_CLIENT, ("--cancel-args=--cancel",)),
        "ts-agent": ("agent", ["node", str(PEERS / "ts_agent.mjs")], ()),
        "py-agent": ("agent", [sys.executable, str(PEERS / "py_agent.py")], ()),
        "ts-client": ("client", ["node", str(PEERS / "ts_client.mjs")], ("--cancel-args=--cancel",)),
        "py-client": ("client", [sys.executable, str(PEERS / "py_client.py")], ("--cancel-args=--cancel",)),
        "v2-agent": ("agent", [sys.executable, str(ROOT / "examples" / "agent_v2.py")], ("--target", "v2")),
        "v1-agent-as-v2": ("agent", [sys.executable, str(ROOT / "examples" / "agent.py")], ("--target", "v2")),
        "router-as-v1": ("agent", [sys.executable, str(ROOT / "examples" / "agent_router.py")], ()),
        "router-as-v2": ("agent", [sys.executable, str(ROOT / "examples" / "agent_router.py")], ("--target", "v2")),
    }
    for fault in AGENT_FAULTS:
        jobs[f"agent:{fault}"] = ("agent", [*FAULTY_AGENT, fault], ())
    for fault in CLIENT_FAULTS:
        jobs[f"client:{fault}"] = ("client", [*FAULTY_CLIENT, "--fault", fault], ("--cancel-args=--cancel",))
    with ThreadPoolExecutor(4) as pool:
        futures = {name: pool.submit(conform, kind, command, out / name.replace(":", "-"), *options)
                   for name, (kind, command, options) in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


def test_example_agent_passes_every_must(runs: dict[str, Any]) -> None:
    code, report, table, _ = runs["example-agent"]
    assert code == 0 and report["ok"], table
    got = statuses(report)
    # What the example agent advertises is exercised, not skipped.
    for rule in ("session.load", "session.list", "session.close", "auth.advertised", "cancel.cancelled",
                 "permission.allow", "permission.reject", "permission.cancelled", "rpc.parse_error"):
        assert got[rule] == "pass", (rule, table)
    assert got["prompt.image"] == "skipped"  # not advertised


def test_example_client_passes_every_must(runs: dict[str, Any]) -> None:
    code, report, table, _ = runs["example-client"]
    assert code == 0 and report["ok"], table
    got = statuses(report)
    for rule in ("client.permission", "client.fs.read", "client.fs.write", "client.cancel.permission",
                 "client.large_update", "client.unknown_variant", "client.method_not_found"):
        assert got[rule] == "pass", (rule, table)


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_the_faulty_peers_without_a_fault_pass(runs: dict[str, Any], kind: str) -> None:
    code, report, table, _ = runs[f"faulty-{kind}"]
    assert code == 0, table
    assert not [c for c in report["checks"] if c["status"] == "fail"], table


@pytest.mark.parametrize("fault", sorted(AGENT_FAULTS))
def test_conform_agent_catches_each_fault(runs: dict[str, Any], fault: str) -> None:
    rule, must = AGENT_FAULTS[fault]
    code, report, table, _ = runs[f"agent:{fault}"]
    assert statuses(report)[rule] == "fail", table
    assert code == (1 if must else 0), table


@pytest.mark.parametrize("fault", sorted(CLIENT_FAULTS))
def test_conform_client_catches_each_fault(runs: dict[str, Any], fault: str) -> None:
    rule, must = CLIENT_FAULTS[fault]
    code, report, table, _ = runs[f"client:{fault}"]
    assert statuses(report)[rule] == "fail", table
    if must:
        assert code == 1, table
    else:  # a SHOULD fault: the run still fails when it takes a MUST step down with it
        assert report["ok"] == (code == 0), table


def test_reports_agree_and_name_their_rules(runs: dict[str, Any]) -> None:
    _, report, table, junit = runs["agent:missing_cancelled"]
    failed = {c["id"] for c in report["checks"] if c["status"] == "fail"}
    assert "cancel.cancelled" in failed
    for check in report["checks"]:
        assert check["level"] in ("MUST", "SHOULD") and check["section"] and check["rule"]
        assert check["id"] in table
    assert "FAIL  MUST    cancel.cancelled" in table
    suite = ET.parse(junit).getroot()
    assert int(suite.get("failures", -1)) == report["counts"]["fail"] == len(failed)
    assert int(suite.get("skipped", -1)) == report["counts"]["skipped"]
    assert {case.get("name") for case in suite if case.find("failure") is not None} == {
        f"{c['id']} ({c['level']})" for c in report["checks"] if c["status"] == "fail"}


def test_conform_agent_runs_the_protocol_level_checks_with_the_v2_binding(runs: dict[str, Any]) -> None:
    code, report, table, _ = runs["v2-agent"]
    assert code == 0 and report["schema"] == "acp_v2", table
    got = statuses(report)
    for rule in ("init.version.requested", "init.version.newer", "session.new", "prompt.text", "rpc.parse_error",
                 "rpc.method_not_found", "rpc.notification_unanswered", "messages.valid", "stdout.clean"):
        assert got[rule] == "pass", (rule, table)
    assert got["cancel.cancelled"] == "skipped"  # the v1 turn scripts do not apply to the v2 draft
    # A v1 agent checked against v2 answers version 1 and cannot read v2's initialize.
    code, report, table, _ = runs["v1-agent-as-v2"]
    assert code == 1 and statuses(report)["init.version.requested"] == "fail", table


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_v1_v2_router_passes_every_must_in_either_version(runs: dict[str, Any], version: str) -> None:
    # Asked for 0 (v1) or 1 (v2) it answers version 1; asked for version + 1000 in v1's shape, the
    # v1 agent answers 1 (v2 cannot read v1's params) and in v2's shape the v2 agent answers 2.
    code, report, table, _ = runs[f"router-as-{version}"]
    assert code == 0 and report["ok"], table
    got = statuses(report)
    for rule in ("init.version.requested", "init.version.older", "init.version.newer", "init.version.invalid"):
        assert got[rule] == "pass", (rule, table)


def test_conform_client_refuses_a_v2_binding() -> None:
    result = subprocess.run([*ACPGEN, "conform", "client", "--target", "v2", "--", *FAULTY_CLIENT],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 2
    assert "speaks ACP protocol version 1; acp_v2 is version 2" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("peer", sorted(SDK_FAILURES))
def test_the_sdk_peers_fail_what_the_readme_says(runs: dict[str, Any], peer: str) -> None:
    code, report, table, _ = runs[peer]
    failed = {c["id"] for c in report["checks"] if c["status"] == "fail"}
    assert failed == SDK_FAILURES[peer], table
    must = any(c["status"] == "fail" and c["level"] == "MUST" for c in report["checks"])
    assert code == (1 if must else 0)
