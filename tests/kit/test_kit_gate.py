"""The kit's verdicts a CI can gate on: exit codes (0 ok, 1 a MUST failed, 2 usage error, 3 could
not run), --strict, --skip, waiver files, `conform rules`; and the verdicts that used to be wrong
against real agents, each proven by a peer of tests/kit/faulty_agent.py: a correct behaviour that
must not fail (allow_always listed first, turns that end at once, terminal / interactive / required
authentication, a v1-only agent asked for v2) and a fault that must (notifications answered with
id "", hidden before by the aborted script)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACPGEN = [sys.executable, "-m", "acpgen"]
FAULTY_AGENT = [sys.executable, str(ROOT / "tests" / "kit" / "faulty_agent.py")]
EXAMPLE_AGENT = [sys.executable, str(ROOT / "examples" / "agent.py")]


def acpgen(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ACPGEN, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


def details(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["detail"] for c in report["checks"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any], str]]:
    out = tmp_path_factory.mktemp("gate")
    waivers = out / "waivers.toml"
    waivers.write_text('[[waive]]\nrule = "rpc.method_not_found"\nreason = "tracked upstream as example#12"\n')
    jobs: dict[str, tuple[list[str], tuple[str, ...]]] = {
        "correct": (FAULTY_AGENT, ()),
        "allow_always_first": ([*FAULTY_AGENT, "allow_always_first"], ()),
        "instant_turn": ([*FAULTY_AGENT, "instant_turn"], ()),
        "auth_terminal": ([*FAULTY_AGENT, "auth_terminal"], ()),
        "auth_hangs": ([*FAULTY_AGENT, "auth_hangs"], ("--timeout", "5")),
        "auth_hangs_none": ([*FAULTY_AGENT, "auth_hangs"], ("--auth", "none")),
        "auth_required": ([*FAULTY_AGENT, "auth_required"], ()),
        "answers_notifications_empty_id": ([*FAULTY_AGENT, "answers_notifications_empty_id"], ()),
        "accepts_invalid_version": ([*FAULTY_AGENT, "accepts_invalid_version"], ()),
        "accepts_invalid_version_strict": ([*FAULTY_AGENT, "accepts_invalid_version"], ("--strict",)),
        "hangs_on_eof": ([*FAULTY_AGENT, "hangs_on_eof"], ()),
        "waived": ([*FAULTY_AGENT, "no_method_not_found"], ("--waivers", str(waivers))),
        "skipped": ([*FAULTY_AGENT, "no_method_not_found"], ("--skip", "rpc.method_not_found")),
        "v1_as_v2": (EXAMPLE_AGENT, ("--protocol", "v2")),
    }

    # conform client runs (test_conform_client_charges_each_fault_to_its_own_rule)
    for fault in CLIENT_FAULTS:
        jobs[f"client:{fault}"] = ([*FAULTY_CLIENT, "--fault", fault], ("--cancel-args=--cancel",))

    def one(name: str, command: list[str], options: tuple[str, ...]) -> tuple[int, dict[str, Any], str]:
        report = out / f"{name.replace(':', '-')}.json"
        args = ["conform", "client" if name.startswith("client:") else "agent", "--json", str(report)]
        if "--timeout" not in options:
            args += ["--timeout", "20"]
        result = acpgen(*args, *options, "--", *command)
        assert report.is_file(), result.stderr
        return result.returncode, json.loads(report.read_text()), result.stdout

    # Mostly waiting for the peers: all at once, the longest first (ignores_unknown_methods waits out
    # the fake agent's pings), so the fixture lasts about as long as its longest run.
    longest_first = ["client:ignores_unknown_methods", "auth_hangs"]
    order = [*longest_first, *(name for name in jobs if name not in longest_first)]
    with ThreadPoolExecutor(8) as pool:
        futures = {name: pool.submit(one, name, *jobs[name]) for name in order}
        return {name: future.result() for name, future in futures.items()}


def test_allow_picks_allow_once_so_later_turns_still_ask(runs: dict[str, Any]) -> None:
    # The agent lists allow_always first and stops asking once it is chosen: picking it (as the kit
    # did) left permission.reject and permission.cancelled never exercised.
    code, report, table = runs["allow_always_first"]
    got = statuses(report)
    assert code == 0, table
    for rule in ("permission.allow", "permission.reject", "permission.cancelled"):
        assert got[rule] == "pass", (rule, table)


def test_a_turn_that_ends_at_once_is_inconclusive_for_cancel_not_a_failure(runs: dict[str, Any]) -> None:
    code, report, table = runs["instant_turn"]
    got = statuses(report)
    assert code == 0 and not [r for r, s in got.items() if s == "fail"], table
    assert got["cancel.cancelled"] == "skipped" and "inconclusive" in details(report)["cancel.cancelled"]
    assert got["cancel_request.honoured"] == "skipped"
    # the permission checks that could not run say why, and how to make them run
    assert "--prompt" in details(report)["permission.reject"], table


def test_a_turn_held_open_by_a_permission_request_still_catches_a_missing_cancelled(runs: dict[str, Any]) -> None:
    # the correct agent of the same family passes; its missing_cancelled fault is caught in
    # test_kit_conform (AGENT_FAULTS)
    code, report, table = runs["correct"]
    assert code == 0 and statuses(report)["cancel.cancelled"] == "pass", table
    assert statuses(report)["cancel_request.honoured"] == "pass", table


def test_a_terminal_auth_method_is_never_passed_to_authenticate(runs: dict[str, Any]) -> None:
    # the agent exits if authenticate gets its terminal method (run.completes would fail)
    code, report, table = runs["auth_terminal"]
    got = statuses(report)
    assert code == 0 and got["run.completes"] == "pass", table
    assert got["auth.advertised"] == "skipped" and "terminal" in details(report)["auth.advertised"], table


@pytest.mark.parametrize("run", ["auth_hangs", "auth_hangs_none"])
def test_an_interactive_login_that_never_answers_does_not_end_the_run(runs: dict[str, Any], run: str) -> None:
    code, report, table = runs[run]
    got = statuses(report)
    assert code == 0 and got["run.completes"] == "pass" and got["prompt.text"] == "pass", table
    assert got["auth.advertised"] == "skipped", table
    assert ("--auth none" if run == "auth_hangs_none" else "--auth METHOD") in details(report)["auth.advertised"]


def test_auth_required_is_reported_as_blocked_not_as_failures(runs: dict[str, Any]) -> None:
    code, report, table = runs["auth_required"]
    got = statuses(report)
    assert not [r for r, s in got.items() if s == "fail"], table
    assert got["session.new"] == got["prompt.text"] == got["run.completes"] == "blocked", table
    assert "BLOCKED" in table and "blocked by auth" in table
    assert code == 3 and report["exit"] == 3, table


def test_notifications_answered_with_an_empty_id_are_caught_and_the_script_goes_on(runs: dict[str, Any]) -> None:
    # chuk-acp answers notifications with {"id": "", "error": ...}: that stray answer aborted the
    # script (run.completes FAIL) and hid the rule it breaks
    code, report, table = runs["answers_notifications_empty_id"]
    got = statuses(report)
    assert got["rpc.notification_unanswered"] == "fail", table
    assert got["run.completes"] == "pass" and got["rpc.parse_error"] == "pass", table
    assert code == 1


def test_strict_makes_a_should_failure_fail_the_run(runs: dict[str, Any]) -> None:
    code, report, table = runs["accepts_invalid_version"]
    assert statuses(report)["init.version.invalid"] == "fail" and code == 0, table
    code, report, table = runs["accepts_invalid_version_strict"]
    assert statuses(report)["init.version.invalid"] == "fail" and code == 1 and report["strict"], table
    assert "--strict" in table


def test_an_agent_that_keeps_running_after_stdin_closes_is_ended_not_failed(runs: dict[str, Any]) -> None:
    # exit.stdin_closed cited no spec rule (the stdio transport says nothing of exiting): dropped;
    # the agent is killed after a short wait, and the run ends and passes
    code, report, table = runs["hangs_on_eof"]
    assert code == 0 and not [r for r, s in statuses(report).items() if s == "fail"], table
    assert "exit.stdin_closed" not in statuses(report)


def test_a_waived_failure_shows_its_reason_and_does_not_fail_the_run(runs: dict[str, Any]) -> None:
    code, report, table = runs["waived"]
    assert statuses(report)["rpc.method_not_found"] == "waived", table
    assert "tracked upstream as example#12" in table and "1 waived" in table
    assert code == 0, table


def test_skip_drops_a_rule_from_the_verdict(runs: dict[str, Any]) -> None:
    code, report, table = runs["skipped"]
    assert statuses(report)["rpc.method_not_found"] == "skipped", table
    assert "--skip" in details(report)["rpc.method_not_found"]
    assert code == 0, table


def test_a_v1_agent_asked_for_v2_is_reported_as_speaking_v1_not_failed(runs: dict[str, Any]) -> None:
    code, report, table = runs["v1_as_v2"]
    assert code == 3, table
    assert "speaks v1" in table and "--protocol v1" in report["stopped"], table
    assert not [c for c in report["checks"] if c["status"] == "fail"], table


# -- conform client: verdicts that blamed the wrong rule, or passed a violation -------------------

FAULTY_CLIENT = [sys.executable, str(ROOT / "tests" / "kit" / "faulty_client.py")]
CLIENT_FAULTS = {
    # no -32601 for unknown methods: only method_not_found fails; the survival pings of the steps
    # before no longer charge it to unknown_fields (MUST) and the rest; late_update cannot be probed
    "ignores_unknown_methods": ({"client.method_not_found"}, {"client.cancel.late_update"}),
    # `cancelled` is the outcome of a cancelled turn; without a session/cancel it is not an answer
    "cancelled_without_cancel": ({"client.permission"}, set()),
}


@pytest.mark.parametrize("fault", sorted(CLIENT_FAULTS))
def test_conform_client_charges_each_fault_to_its_own_rule(runs: dict[str, Any], fault: str) -> None:
    failed_expected, skipped_expected = CLIENT_FAULTS[fault]
    code, report, table = runs[f"client:{fault}"]
    got = statuses(report)
    assert {r for r, s in got.items() if s == "fail"} == failed_expected, table
    assert skipped_expected <= {r for r, s in got.items() if s == "skipped"}, table
    assert code == 1
    # the same client without the fault passes (test_kit_conform.py: test_the_faulty_peers_without_a_fault_pass)


# -- usage errors and could-not-run: nothing is started ------------------------------------------

def test_usage_errors_exit_2_without_a_traceback(tmp_path: Path) -> None:
    cases = [
        ("conform", "agent", "--json", str(tmp_path / "missing" / "out.json"), "--", *FAULTY_AGENT),
        ("conform", "agent", "--junit", str(tmp_path / "missing" / "out.xml"), "--", *FAULTY_AGENT),
        ("conform", "agent", "--skip", "no.such.rule", "--", *FAULTY_AGENT),
        ("conform", "client", "--skip", "no.such.rule", "--", *FAULTY_AGENT),
        ("conform", "agent", "--waivers", str(tmp_path / "none.toml"), "--", *FAULTY_AGENT),
        ("conform", "agent", "--"),
        ("inspect", "--report", str(tmp_path / "missing" / "r.txt"), "--", *FAULTY_AGENT),
        ("inspect", "--trace", str(tmp_path / "missing" / "t.jsonl"), "--", *FAULTY_AGENT),
    ]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[waive]]\nrule = "rpc.parse_error"\n')  # no reason
    cases.append(("conform", "agent", "--waivers", str(bad), "--", *FAULTY_AGENT))
    for args in cases:
        result = acpgen(*args, timeout=60)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and "error" in result.stderr.lower(), (args, result.stderr)
    assert "reason" in acpgen("conform", "agent", "--waivers", str(bad), "--", *FAULTY_AGENT).stderr


def test_a_program_that_does_not_exist_could_not_run() -> None:
    result = acpgen("conform", "agent", "--", "no-such-agent-program-acpgen", timeout=60)
    assert result.returncode == 3 and "no such program" in result.stderr, result.stderr


def test_conform_rules_lists_every_stable_id_once_per_side() -> None:
    result = acpgen("conform", "rules", timeout=60)
    assert result.returncode == 0
    ids = [line.split()[0] for line in result.stdout.splitlines()]
    for rule in ("rpc.notification_unanswered", "prompt.message_id", "client.permission",
                 "client.advertised_only", "client.notification_unanswered", "client.cancel.ends"):
        assert rule in ids
    assert "exit.stdin_closed" not in ids
    markdown = acpgen("conform", "rules", "--markdown", timeout=60).stdout
    assert markdown.startswith("| id |") and "`cancel.cancelled`" in markdown


def test_inspect_report_holds_only_this_runs_violations(tmp_path: Path) -> None:
    # --report was opened for appending: an old run's violations stayed in a clean run's report
    report = tmp_path / "report.txt"
    sink = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    subprocess.run([*ACPGEN, "inspect", "--report", str(report), "--", *sink], input=b"not json\n",
                   capture_output=True, timeout=60, cwd=ROOT, check=True)
    assert "not a JSON-RPC message" in report.read_text()
    clean = b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n'
    subprocess.run([*ACPGEN, "inspect", "--report", str(report), "--", *sink], input=clean,
                   capture_output=True, timeout=60, cwd=ROOT, check=True)
    assert report.read_text() == ""


def test_a_client_whose_child_holds_its_stdout_does_not_hang_conform_and_leaves_no_process(tmp_path: Path) -> None:
    # The client hangs; once it is killed, its child still holds the output pipe: conform used to
    # wait for that pipe forever. Now the client's process group is ended and the waits are bounded
    # (subprocess.run's timeout is the hang detector, not a timing assertion).
    import os

    pid_file = tmp_path / "child.pid"
    report_path = tmp_path / "client.json"
    result = subprocess.run([*ACPGEN, "conform", "client", "--json", str(report_path), "--timeout", "2", "--",
                             *FAULTY_CLIENT, "--fault", "child_holds_stdout"], capture_output=True, text=True,
                            timeout=120, cwd=ROOT, env={**os.environ, "FAULTY_CHILD_PID": str(pid_file)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert statuses(json.loads(report_path.read_text()))["client.initialize_first"] == "fail"
    child = int(pid_file.read_text())
    stat = Path(f"/proc/{child}/stat")
    # gone, or a zombie waiting for a reaper (what a container's init may leave): not running
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
