"""`acpgen conform agent -- CMD ...`: drive an agent through scripted scenarios and check each rule.

The kit plays the client at the JSON-RPC level (`AgentProcess`), so it sees every byte the agent
writes and can send what a well-behaved runtime never would (a malformed line, an unknown method).
Every message the agent sends, in every scenario, is decoded with the chosen binding; a message
that does not decode fails the check of the step it belongs to and `messages.valid`."""

from __future__ import annotations

import asyncio
import base64
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen.kit.bindings import Binding
from acpgen.kit.harness import AgentProcess, Closed, Timeout, WrongId
from acpgen.kit.observe import TO_AGENT, Observation, Observer, dig
from acpgen.kit.offers import config_choice, unknown_tool_call_updates
from acpgen.kit.remote_agent import NotSendable, RemoteAgent, RemoteOptions, reachable
from acpgen.kit.report import BLOCKED, FAIL, PASS, SKIP, Report, Rule

INIT = "Initialization"
SETUP = "Session Setup"
TURN = "Prompt Turn"
CANCEL = "Prompt Turn: Cancellation"
CONTENT = "Content"
PERMISSION = "Tool Calls: Requesting Permission"
FS = "File System"
TERM = "Terminals"
LIST = "Session List"
EXT = "Extensibility"
TRANSPORT = "Transports: stdio"
RPC = "JSON-RPC 2.0"
RFD_CANCEL = "Request Cancellation ($/cancel_request)"
SCHEMA = "Schema"
MODES = "Session Modes"
CONFIG = "Session Config Options"
TOOL_CALLS = "Tool Calls: Updating"
LARGE_PROMPT = 1 << 20
STARTUP = 3
EXIT_WAIT = 2.0
"""Seconds the main run's agent gets to exit after its stdin closed, before it is killed."""
"""initialize may take this many times --timeout: it includes the agent's start."""
UNSUPPORTED_VERSION = -32022
"""The v2 draft's answer to an initialize whose version (and every lower one) the agent lacks."""
AUTH_REQUIRED = -32000
"""`auth_required`: the agent wants `authenticate` first. A check answered with it is BLOCKED, not failed."""
NOT_PASSED_TO_AUTHENTICATE = ("terminal", "env_var")
"""Auth method types a client never passes to authenticate by itself: the schema says the client
MUST NOT pass `terminal` methods; `env_var` ones are satisfied by the agent's environment."""
DEFAULT_PROMPT = "Hello from acpgen conform. Please read README.md."
"""The scripted prompts' text (--prompt): it asks for a file read, which makes many agents ask a permission."""


@dataclass(frozen=True)
class AgentOptions:
    auth: str | None = None
    """An advertised auth method id, "none" (never authenticate), or None (the first method a
    client may pass to authenticate)."""
    prompt: str | None = None
    remote: RemoteOptions | None = None
    """Connect to this URL (WebSocket or Streamable HTTP) instead of starting a command."""


class AuthBlocked(Exception):
    """The agent answered -32000 (authentication required) where the script needs it to go on."""


class OtherVersion(Exception):
    """The agent answered initialize with another protocol version (which it may: it does not
    support the one asked for), so nothing of the asked version can be checked."""


def auth_required(obs: Observation) -> bool:
    return obs.kind == "error" and dig(obs.message, "error", "code") == AUTH_REQUIRED

R = Rule
RULES = [
    R("init.version.requested", "MUST", "initialize: an agent that supports the requested version answers with it", INIT),
    R("init.version.older", "MUST", "initialize with an older version: answered with that version or the agent's latest (v2: or -32022)", INIT),
    R("init.version.newer", "MUST", "initialize with a newer version: answered with the agent's latest version", INIT),
    R("init.version.invalid", "SHOULD", "initialize with an invalid protocolVersion: a JSON-RPC error (-32602)", f"{INIT}; {RPC} §5.1"),
    R("init.capabilities", "MUST", "the initialize result (capabilities, auth methods, agent info) is well-formed", f"{INIT}; {SCHEMA}"),
    R("auth.advertised", "MUST", "authenticate with an advertised method is answered (result or error)", INIT),
    R("session.new", "MUST", "session/new returns a sessionId", SETUP),
    R("jsonrpc.id", "MUST", "a response echoes the request id exactly (a string id stays a string)", f"{RPC} §5"),
    R("prompt.text", "MUST", "a text prompt is accepted and the turn ends with a stop reason", f"{CONTENT}; {TURN}"),
    R("prompt.resource_link", "MUST", "a resource_link prompt is accepted (baseline content)", CONTENT),
    R("prompt.image", "MUST", "an image prompt is accepted when promptCapabilities.image is advertised", CONTENT),
    R("prompt.audio", "MUST", "an audio prompt is accepted when promptCapabilities.audio is advertised", CONTENT),
    R("prompt.resource", "MUST", "an embedded resource prompt is accepted when promptCapabilities.embeddedContext is advertised", CONTENT),
    R("updates.valid", "MUST", "every session/update is well-formed and names a session the agent created", f"{TURN}; {SCHEMA}"),
    R("prompt.stop_reason", "MUST", "every session/prompt result carries a valid stopReason", TURN),
    R("cancel.cancelled", "MUST", "session/cancel mid-turn: the prompt is answered with stopReason cancelled", CANCEL),
    R("permission.allow", "MUST", "permission round trip (selected allow): request well-formed, turn completes", PERMISSION),
    R("permission.reject", "MUST", "permission round trip (selected reject): turn completes", PERMISSION),
    R("permission.cancelled", "MUST", "permission round trip (outcome cancelled): turn completes", PERMISSION),
    R("capabilities.fs", "MUST", "no fs/* request to a client that did not advertise fs", FS),
    R("capabilities.terminal", "MUST", "no terminal/* request to a client that did not advertise terminal", TERM),
    R("session.load", "MUST", "session/load (when advertised) replays the conversation as session/update before answering", SETUP),
    R("session.list", "MUST", "session/list (when advertised) answers with a well-formed list", LIST),
    R("session.list.contains", "SHOULD", "session/list includes the session created on this connection", LIST),
    R("session.close", "MUST", "session/close (when advertised) answers a known session", SETUP),
    R("session.set_mode", "MUST", "session/set_mode with one of the modes session/new offered is answered", MODES),
    R("session.set_config_option", "MUST", "session/set_config_option with an offered value is answered with the "
      "full set of options", CONFIG),
    R("updates.tool_call_known", "SHOULD", "a tool_call_update names a tool call a tool_call announced in its session "
      "(the schema: \"an update to an existing tool call\")", TOOL_CALLS),
    R("stress.concurrent_sessions", "SHOULD", "three sessions prompted at once on one connection: each turn ends, "
      "each update names its own session", f"{SETUP}; {TURN}"),
    R("stress.large_prompt", "SHOULD", "a 1 MiB text prompt is accepted and its turn ends (no line limit below it)", TRANSPORT),
    R("rpc.method_not_found", "MUST", "an unknown method is answered with -32601", f"{RPC} §5.1"),
    R("rpc.parse_error", "MUST", "a malformed line is answered with -32700 (id null)", f"{RPC} §5.1"),
    R("rpc.survives_bad_line", "MUST", "after a malformed line the connection and session keep working", f"{RPC} §5.1; {TRANSPORT}"),
    R("cancel_request.answered", "MUST", "a request cancelled with $/cancel_request still gets exactly one answer", f"{RFD_CANCEL}; {RPC} §5"),
    R("cancel_request.honoured", "SHOULD", "$/cancel_request on a running prompt: -32800 or stopReason cancelled", RFD_CANCEL),
    R("rpc.notification_unanswered", "MUST", "unknown notifications (plain and _-prefixed) are ignored: never answered", f"{RPC} §4.1; {EXT}"),
    R("ext.method", "MUST", "an unknown _-prefixed extension request is answered (result or -32601)", EXT),
    R("run.completes", "MUST", "the scripted session runs to its end: every request answered, no early exit", f"{RPC} §5; {TRANSPORT}"),
    R("messages.valid", "MUST", "every message the agent sends is well-formed JSON-RPC that the schema decodes", f"{SCHEMA}; {RPC}"),
    R("stdout.clean", "MUST", "nothing but JSON-RPC messages on stdout", TRANSPORT),
    R("messages.strict", "SHOULD", "nothing the agent sends decodes only because the schema's leniency annotations "
      "(x-deserialize-skip-invalid-items, x-deserialize-default-on-error) dropped an item or replaced a value", SCHEMA),
]
RULE = {r.id: r for r in RULES}

PNG_1PX = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()
WAV_EMPTY = base64.b64encode(bytes.fromhex(
    "52494646240000005741564566d7420100000001000100401f0000803e0000020010006461746100000000")).decode()


@dataclass
class Client:
    """The scripted client's state for one agent process."""

    capabilities: dict[str, Any]
    workdir: Path
    permission: str = "allow"
    cancelling: set[str] = field(default_factory=set)
    requests: list[Observation] = field(default_factory=list)
    hold_permissions: bool = False
    """While set, a permission request is held unanswered until `release_held` (the cancel check
    keeps a turn open this way, so its session/cancel cannot arrive after the turn ended)."""
    held_permissions: list[asyncio.Future[None]] = field(default_factory=list)

    def release_held(self) -> None:
        for future in self.held_permissions:
            if not future.done():
                future.set_result(None)
        self.held_permissions.clear()

    async def handle(self, agent: AgentProcess, obs: Observation) -> tuple[object, dict[str, Any] | None]:
        self.requests.append(obs)
        params = obs.message.get("params") if isinstance(obs.message, dict) else None
        params = params if isinstance(params, dict) else {}
        method = obs.method or ""
        if method == "session/request_permission":
            if self.hold_permissions:
                release: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self.held_permissions.append(release)
                await release
            options = [o for o in params.get("options", []) if isinstance(o, dict)]
            if self.permission == "cancelled" or params.get("sessionId") in self.cancelling or not options:
                return {"outcome": {"outcome": "cancelled"}}, None
            return {"outcome": {"outcome": "selected", "optionId": pick_option(options, self.permission).get("optionId")}}, None
        if method == "fs/read_text_file":
            path = Path(str(params.get("path", "")))
            try:
                return {"content": path.read_text(encoding="utf-8")}, None
            except (OSError, UnicodeDecodeError):
                return None, {"code": -32002, "message": "Resource not found", "data": {"uri": str(path)}}
        if method == "fs/write_text_file":
            return {}, None  # pretend: the kit never writes the agent's files
        if method == "terminal/create":
            return {"terminalId": "acpgen-term-1"}, None
        if method == "terminal/output":
            return {"output": "", "truncated": False, "exitStatus": {"exitCode": 0}}, None
        if method == "terminal/wait_for_exit":
            return {"exitCode": 0}, None
        if method in ("terminal/release", "terminal/kill"):
            return {}, None
        return None, {"code": -32601, "message": "Method not found", "data": {"method": method}}


def pick_option(options: list[dict[str, Any]], permission: str) -> dict[str, Any]:
    """The `*_once` option of the wanted kind first: an `allow_always` answer would stop the agent
    asking on later turns, and the reject and cancelled round trips would never run."""
    prefix = "allow" if permission == "allow" else "reject"
    for kind in (f"{prefix}_once", f"{prefix}_always"):
        found = next((o for o in options if o.get("kind") == kind), None)
        if found is not None:
            return found
    return options[0]


def short(obs: Observation) -> str:
    return "; ".join(v.render() for v in obs.violations)


class AgentConform:
    rules: list[Rule] = RULES
    """The checks this script reports (v2 replaces the v1 turn checks)."""

    def __init__(self, binding: Binding, command: list[str], timeout: float, options: AgentOptions | None = None) -> None:
        self.binding = binding
        self.command = command
        self.timeout = timeout
        self.options = options or AgentOptions()
        self.prompt_text = self.options.prompt or DEFAULT_PROMPT
        self.report = Report(subject="agent: " + " ".join(command), schema=binding.name)
        self.version = binding.protocol_version
        self.processes: list[AgentProcess] = []
        self.sessions: set[str] = set()
        self.tmp = tempfile.TemporaryDirectory(prefix="acpgen-conform-")
        self.workdir = Path(self.tmp.name)
        (self.workdir / "README.md").write_text("# conform\n\nA file for the agent to read.\n", encoding="utf-8")
        self.results: dict[str, tuple[str, str]] = {}
        self.agent_caps: dict[str, Any] = {}
        self.new_session_result: dict[str, Any] = {}
        self.latest: int | None = None
        self.initialized = asyncio.Event()
        self.has_unsupported_version = "UnsupportedProtocolVersionErrorData" in getattr(binding.module, "TYPES", {})

    # -- bookkeeping -----------------------------------------------------------------------------

    def set(self, rule: str, status: str, detail: str = "") -> None:
        old = self.results.get(rule)
        if old is not None and old[0] == FAIL and status != FAIL:
            return  # a failure seen once stays
        if old is not None and old[0] in (PASS, BLOCKED) and status in (SKIP, BLOCKED):
            return
        if old is not None and status == FAIL and old[0] == FAIL:
            detail = old[1] + "\n" + detail
        self.results[rule] = (status, detail)

    def check_answer(self, rule: str, obs: Observation) -> bool:
        """A result that decodes passes the rule; an error or a violation fails it."""
        if obs.kind == "error" and auth_required(obs):
            self.set(rule, BLOCKED, f"blocked by auth: answered -32000 (authentication required) {str(obs.message.get('error'))[:160]}")
            return False
        if obs.kind == "error":
            self.set(rule, FAIL, f"answered with error {obs.message.get('error')}")
            return False
        if obs.violations:
            self.set(rule, FAIL, short(obs))
            return False
        self.set(rule, PASS)
        return True

    @property
    def one_stream(self) -> bool:
        """Every message of a connection comes in one ordered stream (stdio, WebSocket); over
        Streamable HTTP a session's messages and the connection's come on different streams."""
        return self.options.remote is None or self.options.remote.profile == "WebSocket"

    def client_capabilities(self, full: bool) -> dict[str, Any]:
        if self.version >= 2:  # v2 clients have no fs/terminal methods; elicitation is what they advertise
            return {"elicitation": {"form": {}, "url": {}}} if full else {}
        if full:
            return {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        return {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}

    def init_params(self, version: object, full: bool = True) -> dict[str, Any]:
        info = {"name": "acpgen-conform", "version": "1"}
        if self.version >= 2:
            return {"protocolVersion": version, "capabilities": self.client_capabilities(full), "info": info}
        return {"protocolVersion": version, "clientCapabilities": self.client_capabilities(full), "clientInfo": info}

    async def spawn(self, client: Client) -> AgentProcess:
        remote = self.options.remote
        agent = (AgentProcess(Observer(self.binding), client.handle, self.timeout) if remote is None else
                 RemoteAgent(Observer(self.binding), client.handle, self.timeout, self.binding, remote))
        await agent.start(self.command)
        self.processes.append(agent)
        return agent

    # -- scenarios -------------------------------------------------------------------------------

    async def run(self) -> Report:
        """The main session, the capability-less client and the version probes run side by side
        (the version probes once the main initialize said which version is the agent's latest)."""
        if self.options.remote is not None:
            try:
                await reachable(self.options.remote.url, self.timeout)
            except Closed as exc:
                self.report.stopped = str(exc)
                for rule in self.rules:
                    self.report.add(rule, SKIP, f"not checked: {exc}")
                self.tmp.cleanup()
                return self.report
        try:
            await asyncio.gather(self.main_run(), self.version_scenarios(), self.capability_scenario(),
                                 self.stress_scenario())
        finally:
            for agent in self.processes:
                await agent.kill()
            self.tmp.cleanup()
        if self.report.stopped:
            for rule in self.rules:
                self.report.add(rule, SKIP, f"not checked: {self.report.stopped}")
            return self.report
        self.whole_run_checks()
        self.extra_checks()
        for rule in self.rules:
            default = (SKIP, "not exercised")
            if rule.id.startswith("permission."):
                default = (SKIP, f"the agent asked no permission in its turns (prompt {self.prompt_text!r}); "
                                 "--prompt TEXT can ask for work that needs one")
            status, detail = self.results.get(rule.id, default)
            self.report.add(rule, status, detail)
        return self.report

    def main_client(self) -> Client:
        return Client(self.client_capabilities(True), self.workdir)

    async def main_run(self) -> None:
        main = self.main_client()
        agent = await self.spawn(main)
        try:
            await self.main_scenario(agent, main)
            self.set("run.completes", PASS)
        except AuthBlocked as exc:
            self.set("run.completes", BLOCKED, f"blocked by auth: {exc}")
            for rule in self.rules:
                if rule.id not in self.results and not rule.id.startswith(
                        ("init.version.", "capabilities.", "stdout.", "updates.", "messages.")):
                    self.set(rule.id, BLOCKED, f"blocked by auth: {exc}")
        except OtherVersion as exc:
            self.report.stopped = str(exc)
            self.results.clear()
        except (Closed, Timeout) as exc:
            self.set("run.completes", FAIL, f"the scripted session stopped: {exc}\n{agent.stderr_text()[-600:]}")
            for rule in self.rules:
                if rule.id not in self.results and not rule.id.startswith(
                        ("init.version.", "capabilities.", "stdout.", "updates.", "messages.")):
                    self.set(rule.id, SKIP, f"not reached: {exc}")
        finally:
            self.initialized.set()
            self.release(main)
        await self.exit_check(agent)

    def release(self, client: Client) -> None:
        """Let go of any request the scripted client still holds (v2 holds a permission request)."""

    async def initialize(self, agent: AgentProcess, version: object, full: bool = True) -> Observation:
        # The first answer also waits for the agent to start (imports, a loaded machine).
        return await agent.request("initialize", self.init_params(version, full), timeout=self.timeout * STARTUP)

    async def initialize_main(self, agent: AgentProcess) -> dict[str, Any] | None:
        """The main run's initialize: the requested-version and capabilities checks; the result,
        or `Closed` when the agent cannot be initialized."""
        init = await self.initialize(agent, self.version)
        result = init.message.get("result") if init.kind == "response" else None
        if isinstance(result, dict):
            answered = result.get("protocolVersion")
            self.latest = answered if isinstance(answered, int) else None
            if (isinstance(answered, int) and not isinstance(answered, bool) and answered < self.version
                    and init.violations and self.decodes_in_its_version(agent, answered, result)):
                raise OtherVersion(
                    f"the agent speaks v{answered}: asked for protocol version {self.version}, it answered "
                    f"protocolVersion {answered} (an agent without version {self.version} answers so); "
                    f"check it with --protocol v{answered}")
            if answered == self.version:
                self.set("init.version.requested", PASS)
            else:
                self.set("init.version.requested", FAIL, f"requested {self.version}, answered {answered!r}")
            caps = result.get("agentCapabilities") or result.get("capabilities")
            self.agent_caps = caps if isinstance(caps, dict) else {}
        self.initialized.set()
        if not self.check_answer("init.capabilities", init):
            self.set("init.version.requested", FAIL, "initialize failed")
            raise Closed(f"initialize failed: {short(init) or init.message.get('error')}")
        return result if isinstance(result, dict) else None

    async def main_scenario(self, agent: AgentProcess, client: Client) -> None:
        result = await self.initialize_main(agent)
        await self.authenticate(agent, result)
        session_id = await self.new_session(agent)
        await self.modes_and_config(agent, session_id)
        await self.prompts(agent, client, session_id)
        await self.cancel(agent, client, session_id)
        await self.cancel_request(agent, client, session_id)
        await self.load_and_list(agent, session_id)
        await self.rpc_checks(agent, session_id)
        await self.close_session(agent, session_id)

    def auth_choice(self, methods: list[dict[str, Any]], id_key: str) -> tuple[dict[str, Any] | None, str]:
        """The auth method to call (--auth), or None and why not."""
        wanted = self.options.auth
        if wanted == "none":
            return None, "--auth none: authenticate is not called"
        if wanted is not None:
            found = next((m for m in methods if m.get(id_key) == wanted), None)
            if found is None:
                return None, f"--auth {wanted}: not among the advertised methods {[m.get(id_key) for m in methods]}"
            if found.get("type") == "terminal":
                return None, f"--auth {wanted}: a terminal method, which a client MUST NOT pass to authenticate"
            return found, ""
        usable = [m for m in methods if m.get("type", "agent") not in NOT_PASSED_TO_AUTHENTICATE]
        if not usable:
            return None, "only terminal / env_var auth methods advertised (a client does not pass those to authenticate)"
        return usable[0], ""

    async def authenticate(self, agent: AgentProcess, result: dict[str, Any] | None) -> None:
        methods = dig(result, "authMethods")
        methods = [m for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
        auth_method = "auth/login" if self.version >= 2 else "authenticate"
        if not methods or auth_method not in self.binding.agent_methods:
            self.set("auth.advertised", SKIP, "no auth methods advertised")
            return
        chosen, why = self.auth_choice(methods, "id")
        if chosen is None:
            self.set("auth.advertised", SKIP, why)
            return
        try:
            obs = await agent.request(auth_method, {"methodId": chosen.get("id")})
        except Timeout as exc:
            # An interactive login waits for a person: not a violation; the script goes on.
            self.set("auth.advertised", SKIP, f"method {chosen.get('id')!r}: {exc} (an interactive login? "
                     "choose another with --auth METHOD, or --auth none)")
            return
        if obs.kind == "error" and not obs.violations:
            self.set("auth.advertised", PASS)  # a well-formed refusal (it may need a user)
        else:
            self.check_answer("auth.advertised", obs)

    async def new_session(self, agent: AgentProcess) -> str:
        try:
            obs = await agent.request("session/new", {"cwd": str(self.workdir), "mcpServers": []},
                                      request_id="acpgen-new-1")
        except WrongId as exc:
            self.set("jsonrpc.id", FAIL, str(exc))
            raise
        if obs.id == "acpgen-new-1" and isinstance(obs.id, str):
            self.set("jsonrpc.id", PASS)
        else:
            self.set("jsonrpc.id", FAIL, f"sent id \"acpgen-new-1\", answer carried {obs.id!r}")
        self.check_answer("session.new", obs)
        if auth_required(obs):
            raise AuthBlocked("session/new answered -32000 (authentication required)")
        result = obs.message.get("result") if obs.kind == "response" else None
        session_id = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(session_id, str):
            raise Closed("session/new gave no sessionId; nothing else can be checked")
        self.sessions.add(session_id)
        self.new_session_result = result if isinstance(result, dict) else {}
        return session_id

    async def modes_and_config(self, agent: AgentProcess, session_id: str) -> None:
        """session/set_mode and session/set_config_option with what session/new offered."""
        offered = self.new_session_result
        modes = dig(offered, "modes", "availableModes")
        ids = [m.get("id") for m in modes if isinstance(m, dict)] if isinstance(modes, list) else []
        if ids and "session/set_mode" in self.binding.agent_methods:
            current = dig(offered, "modes", "currentModeId")
            mode = next((m for m in ids if m != current), ids[0])
            obs = await agent.request("session/set_mode", {"sessionId": session_id, "modeId": mode})
            self.check_answer("session.set_mode", obs)
        else:
            self.set("session.set_mode", SKIP, "session/new offered no modes")
        choice = config_choice(offered.get("configOptions"))
        if choice is None or "session/set_config_option" not in self.binding.agent_methods:
            self.set("session.set_config_option", SKIP, "session/new offered no select or boolean config option")
            return
        config_id, value = choice
        obs = await agent.request("session/set_config_option", {"sessionId": session_id, "configId": config_id, **value})
        if self.check_answer("session.set_config_option", obs):
            options = dig(obs.message, "result", "configOptions")
            if not isinstance(options, list) or not any(isinstance(o, dict) and o.get("id") == config_id for o in options):
                self.set("session.set_config_option", FAIL, f"the answer's configOptions lack {config_id!r} (the full set is due)")

    def permission_requests(self, client: Client, since: int) -> list[Observation]:
        return [o for o in client.requests[since:] if o.method == "session/request_permission"]

    async def prompt(self, agent: AgentProcess, client: Client, rule: str, session_id: str,
                     blocks: list[dict[str, Any]], permission: str = "allow") -> Observation | None:
        client.permission = permission
        since = len(client.requests)
        try:
            obs = await agent.request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        except Timeout as exc:
            self.set(rule, FAIL, str(exc))
            return None
        self.check_answer(rule, obs)
        self.check_stop_reason(obs)
        asked = self.permission_requests(client, since)
        prule = f"permission.{permission}"
        if asked:
            bad = [short(o) for o in asked if o.violations]
            if bad:
                self.set(prule, FAIL, "; ".join(bad))
            elif obs.kind == "response" and not obs.violations:
                self.set(prule, PASS)
            else:
                self.set(prule, FAIL, "the turn did not end with a valid result after the permission answer")
        return obs

    def check_stop_reason(self, obs: Observation) -> None:
        result = obs.message.get("result") if obs.kind == "response" else None
        if obs.kind != "response" or self.version >= 2:
            return
        if not isinstance(result, dict) or "stopReason" not in result:
            self.set("prompt.stop_reason", FAIL, f"result has no stopReason: {str(result)[:200]}")
        elif any(v.path.startswith("result.stopReason") for v in obs.violations):
            self.set("prompt.stop_reason", FAIL, short(obs))
        else:
            self.set("prompt.stop_reason", PASS)

    async def prompts(self, agent: AgentProcess, client: Client, session_id: str) -> None:
        readme = self.workdir / "README.md"
        text = {"type": "text", "text": self.prompt_text}
        await self.prompt(agent, client, "prompt.text", session_id, [text], "allow")
        link = {"type": "resource_link", "uri": readme.as_uri(), "name": "README.md", "mimeType": "text/markdown"}
        await self.prompt(agent, client, "prompt.resource_link", session_id, [text, link], "reject")
        await self.prompt(agent, client, "prompt.text", session_id, [text], "cancelled")
        caps = dig(self.agent_caps, "promptCapabilities") or dig(self.agent_caps, "session", "prompt")
        caps = caps if isinstance(caps, dict) else {}
        extra: dict[str, tuple[str, dict[str, Any]]] = {
            "prompt.image": ("image", {"type": "image", "mimeType": "image/png", "data": PNG_1PX}),
            "prompt.audio": ("audio", {"type": "audio", "mimeType": "audio/wav", "data": WAV_EMPTY}),
            "prompt.resource": ("embeddedContext", {"type": "resource", "resource": {
                "uri": readme.as_uri(), "mimeType": "text/markdown", "text": readme.read_text(encoding="utf-8")}}),
        }
        for rule, (cap, block) in extra.items():
            if caps.get(cap):
                await self.prompt(agent, client, rule, session_id, [text, block], "allow")
            else:
                self.set(rule, SKIP, f"promptCapabilities.{cap} not advertised")

    def updates_for(self, agent: AgentProcess, session_id: str, since: int) -> list[Observation]:
        return [o for o in agent.received.observations[since:]
                if o.method == "session/update" and o.kind == "notification"
                and isinstance(o.message.get("params"), dict) and o.message["params"].get("sessionId") == session_id]

    async def start_turn(self, agent: AgentProcess, session_id: str, text: str = "Hello from acpgen conform: a turn to cancel.",
                         client: Client | None = None) -> tuple[Any, int]:
        """Start a prompt and wait for its first update (or, when `client` holds permission
        requests, for one of those), or its end."""
        since = len(agent.received.observations)
        future = await agent.start_request("session/prompt", {"sessionId": session_id, "prompt": [
            {"type": "text", "text": text}]})
        if client is not None:
            await agent.wait_for(lambda: bool(client.held_permissions) or future.done(), self.timeout)
        else:
            await agent.wait_for(lambda: bool(self.updates_for(agent, session_id, since)) or future.done(), self.timeout)
        return future, since

    async def cancel(self, agent: AgentProcess, client: Client, session_id: str) -> None:
        """A verdict only where the turn was certainly still running when session/cancel arrived:
        the turn is held open by a permission request left unanswered (then answered `cancelled`
        after the cancel, as clients SHOULD); or, for an agent that asks none, cancelled after its
        first update and answered `cancelled`. An `end_turn` with no held request proves nothing
        (the turn may have ended before the cancel reached it): SKIP, saying so."""
        client.permission = "allow"
        client.hold_permissions = True
        try:
            future, _ = await self.start_turn(agent, session_id, self.prompt_text, client)
        finally:
            client.hold_permissions = False
        held = bool(client.held_permissions)
        if not held and future.done():
            first = future.result()
            if auth_required(first):
                self.set("cancel.cancelled", BLOCKED, "blocked by auth: the prompt was answered -32000")
                return
            future, _ = await self.start_turn(agent, session_id)
            if future.done():
                self.set("cancel.cancelled", SKIP, "inconclusive: the turn ended before its first update; nothing to cancel")
                return
        client.cancelling.add(session_id)
        await agent.notify("session/cancel", {"sessionId": session_id})
        client.release_held()
        try:
            obs = await agent.wait_answer(future, "session/prompt after session/cancel")
        finally:
            client.cancelling.discard(session_id)
        result = obs.message.get("result") if obs.kind == "response" else None
        reason = result.get("stopReason") if isinstance(result, dict) else None
        if reason == "cancelled":
            self.set("cancel.cancelled", PASS)
        elif obs.kind == "response" and reason == "end_turn" and not held:
            self.set("cancel.cancelled", SKIP, "inconclusive: the turn answered end_turn right after its first update, "
                     "so it may have ended before session/cancel reached it (it asked no permission that would hold it open; "
                     "--prompt can ask for work that needs one)")
        else:
            got = f"stopReason {reason!r}" if obs.kind == "response" else f"error {obs.message.get('error')}"
            where = " (session/cancel was sent while the turn waited for a permission answer)" if held else ""
            self.set("cancel.cancelled", FAIL, f"expected stopReason \"cancelled\", got {got}{where}")
        self.check_stop_reason(obs)

    async def cancel_request(self, agent: AgentProcess, client: Client, session_id: str) -> None:
        """As for session/cancel: the turn is held open by a permission request when it asks one."""
        if "$/cancel_request" not in self.binding.agent_methods:
            for rule in ("cancel_request.answered", "cancel_request.honoured"):
                self.set(rule, SKIP, "the schema has no $/cancel_request")
            return
        client.permission = "allow"
        client.hold_permissions = True
        try:
            future, _ = await self.start_turn(agent, session_id, self.prompt_text, client)
        finally:
            client.hold_permissions = False
        held = bool(client.held_permissions)
        if not held and future.done():
            future, _ = await self.start_turn(agent, session_id)
        if future.done():
            for rule in ("cancel_request.answered", "cancel_request.honoured"):
                self.set(rule, SKIP, "inconclusive: the turn ended before its first update; nothing to cancel")
            return
        pending = [k for k, f in agent.waiters.items() if f is future]
        request_id = int(pending[0]) if pending else None
        await agent.notify("$/cancel_request", {"requestId": request_id})
        # The held permission request is answered as usual ("allow", after the $/cancel_request): a
        # `cancelled` outcome would end the turn by itself and hide whether the agent honoured it.
        client.release_held()
        try:
            obs = await agent.wait_answer(future, "session/prompt after $/cancel_request")
        except Timeout as exc:
            self.set("cancel_request.answered", FAIL, str(exc))
            self.set("cancel_request.honoured", FAIL, str(exc))
            # the turn may still be running: end it the standard way so later steps can proceed
            await agent.notify("session/cancel", {"sessionId": session_id})
            return
        self.set("cancel_request.answered", PASS if not obs.violations else FAIL, short(obs))
        error = obs.message.get("error") if obs.kind == "error" else None
        result = obs.message.get("result") if obs.kind == "response" else None
        if (isinstance(error, dict) and error.get("code") == -32800) or (isinstance(result, dict) and result.get("stopReason") == "cancelled"):
            self.set("cancel_request.honoured", PASS)
        elif not held and isinstance(result, dict) and result.get("stopReason") == "end_turn":
            self.set("cancel_request.honoured", SKIP, "inconclusive: the turn answered end_turn right after its first update, "
                     "so it may have ended before $/cancel_request reached it (no permission request held it open)")
        else:
            self.set("cancel_request.honoured", FAIL, f"the turn ran on: {str(error or result)[:200]}")

    async def load_and_list(self, agent: AgentProcess, session_id: str) -> None:
        if self.agent_caps.get("loadSession") and "session/load" in self.binding.agent_methods:
            since = len(agent.received.observations)
            obs = await agent.request("session/load", {"sessionId": session_id, "cwd": str(self.workdir), "mcpServers": []})
            if self.check_answer("session.load", obs) and self.one_stream:
                index = agent.received.observations.index(obs)
                replayed = self.updates_for(agent, session_id, since)
                if not replayed or agent.received.observations.index(replayed[0]) > index:
                    self.set("session.load", FAIL, "no session/update replayed the history before the answer")
            elif self.results.get("session.load", ("",))[0] == PASS:
                # Streamable HTTP: the answer comes on the connection's stream, the replay on the
                # session's; their order is not defined across streams, so only the replay is judged.
                await agent.wait_for(lambda: bool(self.updates_for(agent, session_id, since)), min(self.timeout, 5))
                if not self.updates_for(agent, session_id, since):
                    self.set("session.load", FAIL, "no session/update replayed the history")
        else:
            self.set("session.load", SKIP, "loadSession not advertised")
        session_caps = dig(self.agent_caps, "sessionCapabilities") or dig(self.agent_caps, "session")
        session_caps = session_caps if isinstance(session_caps, dict) else {}
        if session_caps.get("list") is not None and "session/list" in self.binding.agent_methods:
            obs = await agent.request("session/list", {})
            if self.check_answer("session.list", obs):
                sessions = dig(obs.message, "result", "sessions")
                sessions = sessions if isinstance(sessions, list) else []
                ids = {s.get("sessionId") for s in sessions if isinstance(s, dict)}
                if session_id in ids:
                    self.set("session.list.contains", PASS)
                else:
                    self.set("session.list.contains", FAIL, f"{session_id} is not among {len(ids)} listed sessions")
        else:
            self.set("session.list", SKIP, "sessionCapabilities.list not advertised")
            self.set("session.list.contains", SKIP, "sessionCapabilities.list not advertised")

    async def rpc_checks(self, agent: AgentProcess, session_id: str) -> None:
        obs = await agent.request("acpgen/no_such_method", {})
        code = dig(obs.message, "error", "code") if obs.kind == "error" else None
        if code == -32601:
            self.set("rpc.method_not_found", PASS)
        else:
            self.set("rpc.method_not_found", FAIL, f"expected error -32601, got {str(obs.message)[:200]}")
        obs = await agent.request("_acpgen/probe", {"from": "acpgen conform"})
        ecode = dig(obs.message, "error", "code") if obs.kind == "error" else None
        if obs.kind == "response" or ecode == -32601:
            self.set("ext.method", PASS)
        else:
            self.set("ext.method", FAIL, f"expected a result or -32601, got {str(obs.message)[:200]}")
        # notifications that nobody handles: nothing may come back for them
        before = len(agent.received.observations)
        await agent.notify("acpgen/unknown_notification", {"from": "acpgen conform"})
        await agent.notify("_acpgen/notice", {"from": "acpgen conform"})
        probe = await agent.request("acpgen/no_such_method", {})
        answered = [o for o in agent.received.observations[before:]
                    if o.kind in ("response", "error") and o is not probe]
        answered += [o for o in agent.strays if o not in answered]
        if answered:
            self.set("rpc.notification_unanswered", FAIL, f"answered a notification: {str(answered[0].message)[:200]}")
        else:
            self.set("rpc.notification_unanswered", PASS)
        # a malformed line: -32700 with id null, and the connection carries on
        parse_error = agent.expect(None)
        malformed = b'{"jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": {\n'
        agent.observer.feed(TO_AGENT, malformed.rstrip(b"\n"))  # so its id-null answer answers something
        try:
            await agent.send_raw(malformed)
        except NotSendable as exc:
            agent.waiters.pop("null", None)
            for rule in ("rpc.parse_error", "rpc.survives_bad_line"):
                self.set(rule, SKIP, f"not applicable: {exc}")
            return
        try:
            obs = await agent.wait_answer(parse_error, "a malformed line", timeout=min(self.timeout, 10))
            code = dig(obs.message, "error", "code") if obs.kind == "error" else None
            if code == -32700:
                self.set("rpc.parse_error", PASS)
            else:
                self.set("rpc.parse_error", FAIL, f"expected error -32700 with id null, got {str(obs.message)[:200]}")
        except Timeout:
            agent.waiters.pop("null", None)
            self.set("rpc.parse_error", FAIL, "no -32700 answer to a malformed line")
        except Closed as exc:
            self.set("rpc.parse_error", FAIL, str(exc))
            self.set("rpc.survives_bad_line", FAIL, str(exc))
            raise
        try:
            obs = await agent.request("session/prompt", {"sessionId": session_id, "prompt": [
                {"type": "text", "text": "Still there after a malformed line?"}]})
        except (Closed, Timeout) as exc:
            self.set("rpc.survives_bad_line", FAIL, str(exc))
            raise
        if obs.kind == "response" and not obs.violations:
            self.set("rpc.survives_bad_line", PASS)
        elif auth_required(obs):
            self.set("rpc.survives_bad_line", BLOCKED, "blocked by auth: the prompt after the malformed line was answered -32000")
        else:
            self.set("rpc.survives_bad_line", FAIL, f"the session no longer works: {str(obs.message)[:200]}")

    async def close_session(self, agent: AgentProcess, session_id: str) -> None:
        session_caps = dig(self.agent_caps, "sessionCapabilities") or dig(self.agent_caps, "session")
        session_caps = session_caps if isinstance(session_caps, dict) else {}
        if session_caps.get("close") is None or "session/close" not in self.binding.agent_methods:
            self.set("session.close", SKIP, "sessionCapabilities.close not advertised")
            return
        self.check_answer("session.close", await agent.request("session/close", {"sessionId": session_id}))

    async def exit_check(self, agent: AgentProcess) -> None:
        """End the main run by closing the agent's stdin (the agent is killed after a short wait).
        Not a verdict: no spec text says an agent exits when its stdin closes (the stdio transport
        says only who launches whom and what goes on stdout), so an agent that keeps running is
        ended, not failed (the kit judged it as `exit.stdin_closed` before, citing no rule)."""
        await agent.close_stdin(EXIT_WAIT)

    async def version_scenarios(self) -> None:
        await self.initialized.wait()
        if self.report.stopped:
            return
        latest = self.latest if self.latest is not None else self.version
        older = max(self.version - 1, 0)
        cases = [("init.version.older", older), ("init.version.newer", self.version + 1000),
                 ("init.version.invalid", "1.0.0")]

        async def one(rule: str, version: object) -> None:
            agent = await self.spawn(Client({}, self.workdir))
            try:
                obs = await self.initialize(agent, version)
            except (Closed, Timeout) as exc:
                self.set(rule, FAIL, f"initialize with protocolVersion {version!r}: {exc}")
                return
            finally:
                await agent.close_stdin(2)
            result = obs.message.get("result") if obs.kind == "response" else None
            answered = result.get("protocolVersion") if isinstance(result, dict) else None
            if rule == "init.version.invalid":
                if obs.kind == "error":
                    code = dig(obs.message, "error", "code")
                    self.set(rule, PASS if code == -32602 else FAIL, "" if code == -32602 else f"error code {code}, expected -32602")
                else:
                    self.set(rule, FAIL, f"accepted protocolVersion {version!r} (answered {answered!r})")
                return
            if (isinstance(answered, int) and answered != self.version and obs.violations
                    and self.decodes_in_its_version(agent, answered, result)):
                obs.violations.clear()  # an answer in another version is checked with that version's binding
            if (rule == "init.version.older" and obs.kind == "error" and not obs.violations
                    and dig(obs.message, "error", "code") == UNSUPPORTED_VERSION and self.has_unsupported_version):
                self.set(rule, PASS)  # the schema's own answer when nothing at or below it is supported
            elif obs.kind != "response" or obs.violations:
                self.set(rule, FAIL, f"protocolVersion {version!r}: {short(obs) or obs.message.get('error')}")
            elif (rule == "init.version.older" and answered not in (version, latest)) or (rule == "init.version.newer" and answered != latest):
                self.set(rule, FAIL, f"requested {version}, answered {answered!r} (its latest is {latest})")
            else:
                self.set(rule, PASS)

        await asyncio.gather(*(one(rule, version) for rule, version in cases))

    def decodes_in_its_version(self, agent: AgentProcess, version: int, result: object) -> bool:
        """A multi-version agent answers an older request in that version's shape: decode it with
        the bundled binding of that version (when there is one) rather than the chosen one."""
        from acpgen.kit.bindings import BUNDLED, BindingError, load_binding

        if f"v{version}" not in BUNDLED:
            return False
        try:
            other = load_binding(target=f"v{version}")
        except BindingError:
            return False
        try:
            other.decode("InitializeResponse", result)
        except other.validation_error:
            return False
        agent.other_version = version
        return True

    async def capability_scenario(self) -> None:
        """A client that advertises neither fs nor terminal: the agent must not use them."""
        if self.version >= 2:
            for rule in ("capabilities.fs", "capabilities.terminal"):
                self.set(rule, SKIP, "v1 capabilities (v2 has no fs methods; its terminal methods differ)")
            return
        client = Client(self.client_capabilities(False), self.workdir)
        agent = await self.spawn(client)
        try:
            init = await self.initialize(agent, self.version, full=False)
            if init.kind != "response":
                raise Closed("initialize failed")
            obs = await agent.request("session/new", {"cwd": str(self.workdir), "mcpServers": []})
            if auth_required(obs):
                for rule in ("capabilities.fs", "capabilities.terminal"):
                    self.set(rule, BLOCKED, "blocked by auth: session/new answered -32000")
                return
            result = obs.message.get("result") if obs.kind == "response" else None
            session_id = result.get("sessionId") if isinstance(result, dict) else None
            if not isinstance(session_id, str):
                raise Closed("session/new failed")
            self.sessions.add(session_id)
            client.permission = "allow"
            await agent.request("session/prompt", {"sessionId": session_id, "prompt": [
                {"type": "text", "text": self.prompt_text}]})
        except (Closed, Timeout) as exc:
            for rule in ("capabilities.fs", "capabilities.terminal"):
                self.set(rule, SKIP, f"could not run a turn without capabilities: {exc}")
            return
        finally:
            await agent.close_stdin(2)
        for rule, prefix in (("capabilities.fs", "fs/"), ("capabilities.terminal", "terminal/")):
            used = sorted({o.method or "" for o in client.requests if (o.method or "").startswith(prefix)})
            self.set(rule, FAIL if used else PASS, f"called {', '.join(used)} though not advertised" if used else "")

    async def stress_scenario(self) -> None:
        """Its own connection: three sessions prompted at once, then a 1 MiB prompt."""
        await self.initialized.wait()
        if self.report.stopped or self.version >= 2:
            return
        client = Client(self.client_capabilities(True), self.workdir, permission="allow")
        agent = await self.spawn(client)
        try:
            await self.initialize(agent, self.version)
            opened = [await agent.request("session/new", {"cwd": str(self.workdir), "mcpServers": []}) for _ in range(3)]
            ids = [dig(o.message, "result", "sessionId") for o in opened]
            if not all(isinstance(i, str) for i in ids):
                blocked = any(auth_required(o) for o in opened)
                for rule in ("stress.concurrent_sessions", "stress.large_prompt"):
                    self.set(rule, BLOCKED if blocked else SKIP, "blocked by auth: session/new answered -32000" if blocked
                             else "session/new gave no session (session.new says why)")
                return
            self.sessions.update(ids)
            since = len(agent.received.observations)
            answers = await asyncio.gather(*(agent.request("session/prompt", {"sessionId": i, "prompt": [
                {"type": "text", "text": f"{self.prompt_text} (session {n + 1} of 3)"}]}) for n, i in enumerate(ids)))
            ended = [a for a in answers if a.kind == "response" and isinstance(dig(a.message, "result", "stopReason"), str)]
            strays = [o for o in agent.received.observations[since:] if o.method == "session/update"
                      and dig(o.message, "params", "sessionId") not in ids]
            if len(ended) == 3 and not strays:
                self.set("stress.concurrent_sessions", PASS)
            else:
                bad = next((a for a in answers if a not in ended), None)
                self.set("stress.concurrent_sessions", FAIL, f"{len(ended)} of 3 turns ended" + (
                    f"; {str(bad.message)[:160]}" if bad is not None else "") + (
                    f"; {len(strays)} update(s) named another session" if strays else ""))
            big = {"type": "text", "text": "Please ignore this filler. " + "x" * LARGE_PROMPT}
            obs = await agent.request("session/prompt", {"sessionId": ids[0], "prompt": [big]})
            if obs.kind == "response" and isinstance(dig(obs.message, "result", "stopReason"), str):
                self.set("stress.large_prompt", PASS)
            else:
                self.set("stress.large_prompt", FAIL, f"answered {str(obs.message)[:200]}")
        except (Closed, Timeout) as exc:
            left = [r for r in ("stress.concurrent_sessions", "stress.large_prompt") if r not in self.results]
            for rule in left[:1]:  # the step that broke
                self.set(rule, FAIL, f"{exc}\n{agent.stderr_text()[-300:]}")
            for rule in left[1:]:
                self.set(rule, SKIP, f"not reached: {exc}")
        finally:
            await agent.close_stdin(2)

    def tool_call_checks(self) -> None:
        unknown = [note for agent in self.processes for note in unknown_tool_call_updates(agent.received.observations)]
        self.set("updates.tool_call_known", FAIL if unknown else PASS, "\n".join(unknown[:5]))

    def extra_checks(self) -> None:
        """Checks over every run that only a version's script adds."""

    def whole_run_checks(self) -> None:
        noise = [n for agent in self.processes for n in agent.received.noise]
        self.set("stdout.clean", FAIL if noise else PASS,
                 "\n".join(f"non-JSON-RPC output: {n[:120]!r}" for n in noise[:5]))
        bad_updates: list[str] = []
        bad: list[str] = []
        tolerated: list[str] = []
        for agent in self.processes:
            if agent.other_version is not None:
                continue  # it speaks another version on this connection (checked above with that binding)
            for obs in agent.received.observations:
                if obs.violations:
                    bad.append(short(obs))
                tolerated += [note.render() for note in obs.tolerated]
                if obs.method == "session/update" and obs.kind == "notification":
                    params = obs.message.get("params")
                    sid = params.get("sessionId") if isinstance(params, dict) else None
                    if obs.violations:
                        bad_updates.append(short(obs))
                    elif sid not in self.sessions:
                        bad_updates.append(f"session/update for unknown session {sid!r}")
        self.set("messages.valid", FAIL if bad else PASS, "\n".join(bad[:8]))
        self.set("messages.strict", FAIL if tolerated else PASS, "\n".join(tolerated[:5]))
        self.set("updates.valid", FAIL if bad_updates else PASS, "\n".join(bad_updates[:8]))
        if self.version < 2:
            self.tool_call_checks()


def rule_catalogue() -> list[tuple[str, Rule]]:
    """Every rule the conform commands judge, with the side it is about ("agent", "agent v2",
    "client", "client v2"): the stable ids --skip and waiver files name."""
    from acpgen.kit.conform_agent_v2 import V2_RULES
    from acpgen.kit.conform_client import RULES as CLIENT_RULES
    from acpgen.kit.conform_client import RULES_V2 as CLIENT_RULES_V2

    rows: list[tuple[str, Rule]] = [("agent", r) for r in RULES]
    rows += [("agent v2", r) for r in V2_RULES]
    rows += [("client", r) for r in CLIENT_RULES]
    rows += [("client v2", r) for r in CLIENT_RULES_V2 if r not in CLIENT_RULES]
    return rows


def all_agent_rule_ids() -> set[str]:
    return {rule.id for side, rule in rule_catalogue() if side.startswith("agent")}


async def conform_agent(binding: Binding, command: list[str], timeout: float,
                        options: AgentOptions | None = None) -> Report:
    if binding.protocol_version >= 2:
        from acpgen.kit.conform_agent_v2 import AgentConformV2

        return await AgentConformV2(binding, command, timeout, options).run()
    return await AgentConform(binding, command, timeout, options).run()
