"""`acpgen conform client -- CMD ...`: start a client with a scripted fake agent and judge it.

The client's command gets the fake agent's command appended (or spliced in where an argument is
`{agent}`), the way an editor is told which agent to start. The fake agent
(`acpgen.kit.fake_agent`) logs every line; afterwards each line is decoded with the chosen binding
and the steps of the script are checked from the log."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from acpgen.kit.bindings import Binding
from acpgen.kit.observe import TO_AGENT, Observation, Observer, dig
from acpgen.kit.report import FAIL, PASS, SKIP, Report, Rule

INIT, SETUP, TURN, CANCEL = "Initialization", "Session Setup", "Prompt Turn", "Prompt Turn: Cancellation"
CONTENT, PERM, FS, TERM = "Content", "Tool Calls: Requesting Permission", "File System", "Terminals"
EXT, TRANSPORT, RPC, SCHEMA = "Extensibility", "Transports: stdio", "JSON-RPC 2.0", "Schema"

R = Rule
RULES = [
    R("client.initialize_first", "MUST", "the first message is initialize", INIT),
    R("client.initialize", "MUST", "initialize params are well-formed (protocolVersion, client capabilities)", f"{INIT}; {SCHEMA}"),
    R("client.session_new", "MUST", "session/new is well-formed and its cwd is an absolute path", SETUP),
    R("client.prompt", "MUST", "session/prompt is well-formed and uses only content the agent advertised", f"{TURN}; {CONTENT}"),
    R("client.unknown_fields", "MUST", "an update with unknown fields and _meta does not break the client", f"{EXT}; {SCHEMA}"),
    R("client.unknown_variant", "SHOULD", "an unknown session/update variant does not break the client", EXT),
    R("client.unknown_enum", "SHOULD", "an unknown enum value (tool kind) does not break the client", EXT),
    R("client.large_update", "SHOULD", "a 1 MiB session/update does not break the client", TRANSPORT),
    R("client.method_not_found", "MUST", "an unknown method from the agent is answered with -32601", f"{RPC} §5.1"),
    R("client.permission", "MUST", "session/request_permission is answered well-formed, selecting one of the offered options", PERM),
    R("client.fs.read", "MUST", "fs/read_text_file (when advertised) is answered well-formed", FS),
    R("client.fs.read.content", "SHOULD", "fs/read_text_file returns the file's content", FS),
    R("client.fs.write", "MUST", "fs/write_text_file (when advertised) is answered well-formed", FS),
    R("client.terminal", "MUST", "terminal/* requests (when advertised) are answered well-formed", TERM),
    R("client.turn", "MUST", "the client completes the scripted turn: it answers every request and gets the prompt result (v2: to the idle update)", TURN),
    R("client.cancel.sent", "MUST", "the cancellation run sends session/cancel for the session", CANCEL),
    R("client.cancel.permission", "MUST", "after session/cancel, a pending permission request is answered with outcome cancelled", CANCEL),
    R("client.cancel.late_update", "SHOULD", "an update that arrives after session/cancel is accepted", CANCEL),
    R("client.cancel.ends", "MUST", "the cancelled turn ends: once its prompt is answered `cancelled`, a client asked "
      "(--cancel-args) to cancel one turn is done and exits within --timeout", CANCEL),
    R("client.notification_unanswered", "MUST", "notifications (session/update, an unknown _-prefixed one) are never "
      "answered: every answer carries the id of a request the agent sent", f"{RPC} §4.1; {EXT}"),
    R("client.messages.valid", "MUST", "every message the client sends is well-formed JSON-RPC that the schema decodes", f"{SCHEMA}; {RPC}"),
    R("client.stdin.clean", "MUST", "nothing but JSON-RPC messages on the agent's stdin", TRANSPORT),
]
UNADVERTISED_V2 = ("auth/login", "auth/logout", "tool_call/cancel", "terminal/cancel")
RULES_V2 = [*RULES, R(
    "client.advertised_only", "MUST",
    "no auth/login or auth/logout when authMethods is empty; no tool_call/cancel or terminal/cancel without capabilities.cancel",
    "v2 Initialization; v2 Tool Calls: Cancelling Tool Calls")]
"""The fake v2 agent advertises no auth methods and no cancellable tool call or terminal."""
PINGS = {"fields": "client.unknown_fields", "variant": "client.unknown_variant",
         "enum": "client.unknown_enum", "large": "client.large_update"}
FILE_TEXT = "A file for the client to read: acpgen conform.\n"


@dataclass
class Line:
    direction: str
    raw: str
    obs: list[Observation]


def fake_agent_command(log: Path, scenario: str, binding: Binding, read: Path, write: Path, timeout: float) -> list[str]:
    return [sys.executable, "-m", "acpgen.kit.fake_agent", "--log", str(log), "--scenario", scenario,
            "--version", str(binding.protocol_version), "--read", str(read), "--write", str(write),
            "--timeout", str(timeout)]


def client_command(command: list[str], agent: list[str], extra: list[str]) -> list[str]:
    """The fake agent's argv appended, or spliced where an argument is `{agent}`; inside a longer
    argument (`--agent={agent}`) it becomes one shell-quoted string, for clients that take the
    agent's command as one option value."""
    if "{agent}" in command:
        at = command.index("{agent}")
        return [*command[:at], *extra, *agent, *command[at + 1:]]
    if any("{agent}" in arg for arg in command):
        return [*(arg.replace("{agent}", shlex.join(agent)) for arg in command), *extra]
    return [*command, *extra, *agent]


class ClientConform:
    def __init__(self, binding: Binding, command: list[str], timeout: float, cancel_args: str | None) -> None:
        self.binding = binding
        self.command = command
        self.timeout = timeout
        self.cancel_args = shlex.split(cancel_args) if cancel_args is not None else None
        self.report = Report(subject="client: " + " ".join(command), schema=binding.name)
        self.results: dict[str, tuple[str, str]] = {}
        self.notes: list[str] = []
        self.ignores_unknown = False
        """The turn run showed a client that answers no unknown method but kept answering the rest."""

    def set(self, rule: str, status: str, detail: str = "") -> None:
        old = self.results.get(rule)
        if old is not None and old[0] == FAIL:
            if status == FAIL:
                self.results[rule] = (FAIL, old[1] + "\n" + detail)
            return
        self.results[rule] = (status, detail)

    async def run_client(self, scenario: str, workdir: Path) -> tuple[list[Line], int | None, str]:
        log = workdir / f"{scenario}.jsonl"
        read, write = workdir / "read-me.txt", workdir / f"written-{scenario}.txt"
        agent = fake_agent_command(log, scenario, self.binding, read, write, self.timeout)
        extra = self.cancel_args if scenario == "cancel" and self.cancel_args is not None else []
        # Its own process group: a client's children (the fake agent, whatever it starts) end with it.
        proc = await asyncio.create_subprocess_exec(
            *client_command(self.command, agent, extra), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        assert proc.stdout is not None
        output = bytearray()

        async def collect() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(1 << 16):
                output.extend(chunk)
                del output[:-64 * 1024]

        reader = asyncio.get_running_loop().create_task(collect())
        code: int | None
        try:
            code = await asyncio.wait_for(proc.wait(), self.timeout * 3)
        except asyncio.TimeoutError:
            code = None
        if code is not None:  # the fake agent (and the client's other children) may finish writing first
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), min(self.timeout, 5))
        # A child may still hold the output pipe after the client exited or was killed: end the
        # whole group, and never wait unbounded for the pipe to close.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), 5)
        try:
            await asyncio.wait_for(asyncio.shield(reader), 2)
        except asyncio.TimeoutError:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self.remove_created(log)
        return self.read_log(log), code, bytes(output).decode("utf-8", "replace")[-1500:]

    def remove_created(self, log: Path) -> None:
        """The fake agent's files in the client's announced cwd (the fs checks read and write there)."""
        if not log.is_file():
            return
        for text in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(text)
            if entry.get("event") == "created" and isinstance(entry.get("path"), str):
                with contextlib.suppress(OSError):
                    os.unlink(entry["path"])

    def read_log(self, log: Path) -> list[Line]:
        observer = Observer(self.binding)
        lines: list[Line] = []
        if not log.is_file():
            return lines
        for text in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(text)
            if "dir" not in entry:
                lines.append(Line("event", entry.get("event", ""), []))
                continue
            raw = entry["line"]
            obs = observer.feed(entry["dir"], raw) if raw.strip() else []
            lines.append(Line(entry["dir"], raw, obs))
        return lines

    async def run(self) -> Report:
        with tempfile.TemporaryDirectory(prefix="acpgen-conform-client-") as tmp:
            workdir = Path(tmp)
            (workdir / "read-me.txt").write_text(FILE_TEXT, encoding="utf-8")
            scenarios = ["turn"] + (["cancel"] if self.cancel_args is not None else [])
            runs = await asyncio.gather(*(self.run_client(s, workdir) for s in scenarios))
            for scenario, (lines, code, output) in zip(scenarios, runs, strict=False):
                if not lines:
                    self.set("client.initialize_first", FAIL, f"the client never started the agent (exit {code}):\n{output}")
                    continue
                self.judge_common(lines, scenario, output, code)
                if scenario == "turn":
                    self.judge_turn(lines, output, code)
                else:
                    self.judge_cancel(lines, code)
        if self.cancel_args is None:
            for name in ("client.cancel.sent", "client.cancel.permission", "client.cancel.late_update", "client.cancel.ends"):
                self.set(name, SKIP, "no --cancel-args given: the client was not asked to cancel")
        for rule in RULES_V2 if self.binding.protocol_version >= 2 else RULES:
            status, detail = self.results.get(rule.id, (SKIP, "not exercised"))
            self.report.add(rule, status, detail)
        return self.report

    def sent(self, lines: list[Line]) -> list[Observation]:
        return [o for line in lines if line.direction == TO_AGENT for o in line.obs]

    def answer(self, lines: list[Line], request_id: str) -> Observation | None:
        return next((o for o in self.sent(lines) if o.kind in ("response", "error") and o.id == request_id), None)

    def judge_common(self, lines: list[Line], scenario: str, output: str, code: int | None) -> None:
        sent = self.sent(lines)
        calls = [o for o in sent if o.kind in ("request", "notification")]
        if not calls or calls[0].method != "initialize":
            first = calls[0].method if calls else None
            self.set("client.initialize_first", FAIL, f"[{scenario}] first message: {first!r}")
        else:
            self.set("client.initialize_first", PASS)
        noise = [line.raw[:120] for line in lines if line.direction == TO_AGENT and line.raw.strip()
                 and any(o.kind == "invalid" and not isinstance(o.message, dict) for o in line.obs)]
        self.set("client.stdin.clean", FAIL if noise else PASS, "\n".join(f"[{scenario}] {n!r}" for n in noise[:5]))
        if self.binding.protocol_version >= 2:
            called = sorted({o.method or "" for o in calls if o.method in UNADVERTISED_V2})
            self.set("client.advertised_only", FAIL if called else PASS,
                     f"[{scenario}] called {', '.join(called)}, which the agent did not advertise" if called else "")
        bad = [f"[{scenario}] " + v.render() for o in sent for v in o.violations]
        self.set("client.messages.valid", FAIL if bad else PASS, "\n".join(bad[:8]))
        asked = {json.dumps(o.id) for line in lines if line.direction not in (TO_AGENT, "event")
                 for o in line.obs if o.kind == "request"}
        stray = [o for o in sent if o.kind in ("response", "error") and json.dumps(o.id) not in asked]
        self.set("client.notification_unanswered", FAIL if stray else PASS,
                 "\n".join(f"[{scenario}] answered no request of the agent's (a notification?): "
                           f"{json.dumps(o.message)[:160]}" for o in stray[:3]))
        for rule, method in (("client.initialize", "initialize"), ("client.session_new", "session/new"),
                             ("client.prompt", "session/prompt")):
            found = [o for o in sent if o.method == method and o.kind == "request"]
            if not found:
                self.set(rule, FAIL, f"[{scenario}] the client never sent {method} (exit {code}):\n{output[-600:]}")
                continue
            problems = [v.render() for o in found for v in o.violations]
            if method == "session/new":
                for o in found:
                    cwd = dig(o.message, "params", "cwd")
                    if isinstance(cwd, str) and not cwd.startswith("/") and not (len(cwd) > 2 and cwd[1] == ":"):
                        problems.append(f"cwd {cwd!r} is not an absolute path")
            if method == "session/prompt":
                for o in found:
                    blocks = dig(o.message, "params", "prompt")
                    for block in blocks if isinstance(blocks, list) else []:
                        kind = block.get("type") if isinstance(block, dict) else None
                        if kind not in ("text", "resource_link"):
                            problems.append(f"prompt content {kind!r}, which the agent did not advertise")
            self.set(rule, FAIL if problems else PASS, "\n".join(f"[{scenario}] {p}" for p in problems))

    def judge_turn(self, lines: list[Line], output: str, code: int | None) -> None:
        tail = f"(client exit {code}; output tail:\n{output[-600:]})"
        dead = ""
        asked = [o.id for line in lines if line.direction not in (TO_AGENT, "event") for o in line.obs
                 if o.kind == "request" and isinstance(o.id, str)]
        answered = {o.id for o in self.sent(lines) if o.kind in ("response", "error")}
        for step, rule in PINGS.items():
            ping = f"acpgen-ping-{step}"
            later = asked[asked.index(ping) + 1:] if ping in asked else []
            if dead:
                self.set(rule, SKIP, f"not reached: {dead}")
            elif ping in answered:
                self.set(rule, PASS)
            elif any(request in answered for request in later):
                # no -32601, but it answered what came next: it survived; method_not_found says the rest
                self.ignores_unknown = True
                self.set(rule, PASS, "survived: it answered the agent's later requests (it answers no unknown method)")
            else:
                self.set(rule, FAIL, f"the client stopped answering after this update {tail}")
                dead = f"the client stopped at the {rule} step"
        if dead:
            for rule in ("client.permission", "client.fs.read", "client.fs.read.content", "client.fs.write", "client.terminal"):
                self.set(rule, SKIP, f"not reached: {dead}")
        first_ping = self.answer(lines, "acpgen-ping-fields")
        if first_ping is not None:
            code_ = dig(first_ping.message, "error", "code") if first_ping.kind == "error" else None
            self.set("client.method_not_found", PASS if code_ == -32601 else FAIL,
                     "" if code_ == -32601 else f"answered {json.dumps(first_ping.message)[:200]}")
        elif dead:
            self.set("client.method_not_found", SKIP, f"not reached: {dead}")
        else:
            self.set("client.method_not_found", FAIL, "no answer to an unknown method (it went on answering the "
                     "agent's other requests)")
        if not dead:
            perm = self.answer(lines, "acpgen-permission")
            if perm is None:
                self.set("client.permission", FAIL, f"no answer to session/request_permission {tail}")
            elif perm.kind == "error" or perm.violations:
                self.set("client.permission", FAIL, "; ".join(v.render() for v in perm.violations) or str(perm.message.get("error")))
            else:
                outcome = dig(perm.message, "result", "outcome")
                outcome = outcome if isinstance(outcome, dict) else {}
                chosen = outcome.get("optionId")
                cancel_sent = any(o.method == "session/cancel" for o in self.sent(lines))
                if outcome.get("outcome") == "selected" and chosen not in ("acpgen-allow", "acpgen-reject"):
                    self.set("client.permission", FAIL, f"selected {chosen!r}, which was not offered")
                elif outcome.get("outcome") == "cancelled" and not cancel_sent:
                    self.set("client.permission", FAIL, "answered `cancelled`, which is the outcome when the prompt "
                             "turn was cancelled, though the client sent no session/cancel")
                else:
                    self.set("client.permission", PASS)
            self.judge_answer(lines, "acpgen-fs-read", "client.fs.read", "fs.readTextFile not advertised")
            self.refusal_outside_cwd(lines, "acpgen-fs-read", ("client.fs.read", "client.fs.read.content"))
            read = self.answer(lines, "acpgen-fs-read")
            if self.results.get("client.fs.read", ("",))[0] == SKIP:
                pass
            elif read is not None and read.kind == "response":
                content = dig(read.message, "result", "content")
                self.set("client.fs.read.content", PASS if content == FILE_TEXT else FAIL,
                         "" if content == FILE_TEXT else f"got {str(content)[:120]!r}")
            else:
                self.set("client.fs.read.content", SKIP, "no successful read")
            self.judge_answer(lines, "acpgen-fs-write", "client.fs.write", "fs.writeTextFile not advertised")
            self.refusal_outside_cwd(lines, "acpgen-fs-write", ("client.fs.write",))
            self.judge_answer(lines, "acpgen-term-create", "client.terminal", "terminal not advertised")
            for step in ("wait", "output", "release"):
                if any(line.direction != "event" and f'"acpgen-term-{step}"' in line.raw for line in lines):
                    self.judge_answer(lines, f"acpgen-term-{step}", "client.terminal", "")
        if self.binding.protocol_version >= 2:  # the turn's end is the idle update, after every request
            for rule in ("client.fs.read", "client.fs.read.content", "client.fs.write", "client.terminal"):
                self.results[rule] = (SKIP, "v2 has no fs/* or terminal/* client methods")
            idle_sent = any('"state":"idle"' in line.raw for line in lines if line.direction not in (TO_AGENT, "event"))
            no_answer = [line.raw for line in lines if line.direction == "event" and line.raw == "no-answer"]
            if idle_sent and not no_answer:
                self.set("client.turn", PASS)
            else:
                self.set("client.turn", FAIL, f"the turn did not complete {tail}")
            return
        prompt_answered = any(o.kind == "response" and o.method == "session/prompt"
                              for line in lines if line.direction != TO_AGENT and line.direction != "event" for o in line.obs)
        no_answer = [line.raw for line in lines if line.direction == "event" and line.raw == "no-answer"]
        if prompt_answered and not no_answer:
            self.set("client.turn", PASS)
        else:
            self.set("client.turn", FAIL, f"the turn did not complete {tail}")

    def judge_answer(self, lines: list[Line], request_id: str, rule: str, skip: str) -> None:
        asked = any(line.direction != TO_AGENT and line.direction != "event" and f'"id":"{request_id}"' in line.raw
                    for line in lines)
        if not asked:
            if skip:
                self.set(rule, SKIP, skip)
            return
        obs = self.answer(lines, request_id)
        if obs is None:
            self.set(rule, FAIL, f"no answer to {request_id}")
        elif obs.kind == "error" or obs.violations:
            self.set(rule, FAIL, "; ".join(v.render() for v in obs.violations) or f"error {obs.message.get('error')}")
        else:
            self.set(rule, PASS)

    def refusal_outside_cwd(self, lines: list[Line], request_id: str, rules: tuple[str, ...]) -> None:
        """A client may refuse a path outside the cwd it announced (the fake agent reads and
        writes inside it when it can): an error answer for such a path is no failure."""
        answer = self.answer(lines, request_id)
        if answer is None or answer.kind != "error" or answer.violations:
            return
        request = next((o for line in lines if line.direction not in (TO_AGENT, "event") for o in line.obs
                        if o.kind == "request" and o.id == request_id), None)
        path = dig(request.message, "params", "path") if request is not None else None
        cwds = [dig(o.message, "params", "cwd") for o in self.sent(lines) if o.method == "session/new"]
        cwd = cwds[0] if cwds and isinstance(cwds[0], str) else None
        if not isinstance(path, str) or cwd is None:
            return
        inside = os.path.commonpath([os.path.abspath(path), os.path.abspath(cwd)]) == os.path.abspath(cwd)
        if not inside:
            for rule in rules:
                self.results[rule] = (SKIP, f"refused {path}, which lies outside its announced cwd {cwd} (a client may)")

    def judge_cancel(self, lines: list[Line], code: int | None) -> None:
        sent = self.sent(lines)
        cancel_at = next((i for i, line in enumerate(lines) if line.direction == TO_AGENT
                          and any(o.method == "session/cancel" for o in line.obs)), None)
        if cancel_at is None:
            self.set("client.cancel.sent", FAIL, "no session/cancel within the run")
            self.set("client.cancel.permission", SKIP, "no session/cancel")
            self.set("client.cancel.late_update", SKIP, "no session/cancel")
            return
        self.set("client.cancel.sent", PASS)
        ended = any(line.direction == "event" and line.raw == "turn-ended" for line in lines)
        if code is not None:
            self.set("client.cancel.ends", PASS)
        else:
            self.set("client.cancel.ends", FAIL, "the prompt was answered `cancelled`, yet the client was still running "
                     f"{self.timeout * 3:g} s after it started (killed)" if ended else
                     "the cancelled turn never ended (the client was killed after "
                     f"{self.timeout * 3:g} s)")
        perm_at = next((i for i, line in enumerate(lines) if line.direction == TO_AGENT
                        and any(o.id == "acpgen-permission-pending" and o.kind in ("response", "error") for o in line.obs)), None)
        if perm_at is None:
            self.set("client.cancel.permission", FAIL, "the pending permission request was never answered")
        elif perm_at < cancel_at:
            self.set("client.cancel.permission", SKIP, "the permission request was answered before the cancel")
        else:
            perm = next(o for o in lines[perm_at].obs if o.id == "acpgen-permission-pending")
            outcome = dig(perm.message, "result", "outcome", "outcome")
            self.set("client.cancel.permission", PASS if outcome == "cancelled" else FAIL,
                     "" if outcome == "cancelled" else f"answered {json.dumps(perm.message)[:200]}")
        del sent
        late = self.answer(lines, "acpgen-ping-after-cancel")
        if late is None and self.ignores_unknown:
            self.set("client.cancel.late_update", SKIP, "the client answers no unknown method, so the ping after "
                     "the late update cannot show it survived")
            return
        self.set("client.cancel.late_update", PASS if late is not None else FAIL,
                 "" if late is not None else "no answer after a late update")


def all_client_rule_ids() -> set[str]:
    return {r.id for r in RULES_V2}


async def conform_client(binding: Binding, command: list[str], timeout: float, cancel_args: str | None) -> Report:
    return await ClientConform(binding, command, timeout, cancel_args).run()


