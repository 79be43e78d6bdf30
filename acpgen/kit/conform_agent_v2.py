"""`acpgen conform agent --protocol v2`: the v2 draft's prompt lifecycle, scripted.

In v2 a `session/prompt` is answered as soon as the user message is inserted (`messageId`); the
turn reports itself through `session/update`s: a `user_message` with the same id, `state_update`
`running` (or `requires_action` while blocked on the user) and finally `idle`, whose `stopReason`
says how it ended. `session/cancel` ends the foreground work with idle `cancelled`; a permission
request still pending is no longer waited for (and SHOULD be withdrawn with `$/cancel_request`).
The v1 rules that have no meaning in v2 (the prompt result's stop reason, fs/terminal client
methods, session/load) are replaced by the rules below, each named for its v2 section; the
protocol-level rules (versions, JSON-RPC, stdout, exit) are shared with v1."""

from __future__ import annotations

import asyncio
from typing import Any

from acpgen.kit.conform_agent import (
    CONTENT,
    LIST,
    PNG_1PX,
    RPC,
    RULES,
    SCHEMA,
    STARTUP,
    WAV_EMPTY,
    AgentConform,
    Client,
    R,
    short,
)
from acpgen.kit.harness import AgentProcess, Closed, Timeout
from acpgen.kit.observe import Observation, dig
from acpgen.kit.report import FAIL, PASS, SKIP

LIFECYCLE = "v2 Prompt Lifecycle"
ACCEPTED = f"{LIFECYCLE}: Prompt Accepted"
USER_MESSAGE = f"{LIFECYCLE}: User Message"
STATES = f"{LIFECYCLE}: Session States"
STOPS = f"{LIFECYCLE}: Stop Reasons"
V2_CANCEL = f"{LIFECYCLE}: Cancellation"
V2_PERMISSION = "v2 Tool Calls: Requesting Permission"
ELICITATION = "v2 Elicitation"
RESUME = "v2 Session Setup: Current-State Synchronization"
V2_SETUP = "v2 Session Setup"
V2_INIT = "v2 Initialization"
REQUEST_CANCEL = "v2 Cancellation ($/cancel_request)"

V1_ONLY = {"prompt.stop_reason", "cancel.cancelled", "capabilities.fs", "capabilities.terminal", "session.load",
           "cancel_request.answered", "cancel_request.honoured", "auth.advertised", "prompt.text",
           "prompt.resource_link", "prompt.image", "prompt.audio", "prompt.resource", "permission.allow",
           "permission.reject", "permission.cancelled", "session.close", "session.set_mode",
           "session.set_config_option", "updates.tool_call_known", "stress.concurrent_sessions", "stress.large_prompt"}
"""v1 rules that the v2 list replaces (same id where the v2 rule checks the same thing in v2 terms)."""

V2_RULES = [
    R("auth.advertised", "MUST", "auth/login with an advertised agent auth method is answered (result or error)", V2_INIT),
    R("auth.logout", "MUST", "auth/logout is supported when authMethods is non-empty", V2_INIT),
    R("prompt.text", "MUST", "a text prompt is inserted (answered with a messageId) and its turn ends with an idle state_update", f"{CONTENT}; {LIFECYCLE}"),
    R("prompt.resource_link", "MUST", "a resource_link prompt is inserted (baseline content)", CONTENT),
    R("prompt.image", "MUST", "an image prompt is inserted when session.prompt.image is advertised", CONTENT),
    R("prompt.audio", "MUST", "an audio prompt is inserted when session.prompt.audio is advertised", CONTENT),
    R("prompt.resource", "MUST", "an embedded resource prompt is inserted when session.prompt.embeddedContext is advertised", CONTENT),
    R("prompt.unknown_content", "MUST", "a prompt with a content block type the agent does not support is rejected with -32602", CONTENT),
    R("prompt.message_id", "MUST", "session/prompt is answered with the inserted message's id, without waiting for the turn to end (before its idle update)", ACCEPTED),
    R("prompt.user_message", "MUST", "the inserted prompt is echoed as a user_message update with the same messageId", USER_MESSAGE),
    R("state.running", "MUST", "a turn reports running (or requires_action) when its foreground work starts", STATES),
    R("state.idle", "MUST", "a turn's foreground work ends with an idle state_update", STATES),
    R("state.resumes", "MUST", "after requires_action the agent reports running when progress resumes, or idle", STATES),
    R("state.requires_action", "SHOULD", "requires_action is reported while the turn waits on a permission request", STATES),
    R("state.stop_reason", "SHOULD", "the idle update that ends a turn carries a stop reason (end_turn for a completed turn)", STOPS),
    R("cancel.cancelled", "MUST", "session/cancel mid-turn: the turn ends with idle stopReason cancelled, no content or tool call update after it", V2_CANCEL),
    R("cancel.permission", "MUST", "session/cancel while a permission request is pending: the agent stops waiting for it and ends the turn", V2_CANCEL),
    R("cancel.permission_withdrawn", "SHOULD", "... and withdraws that permission request with $/cancel_request", V2_CANCEL),
    R("permission.allow", "MUST", "permission round trip (selected allow): request well-formed, the turn ends with idle", V2_PERMISSION),
    R("permission.reject", "MUST", "permission round trip (selected reject): the turn ends with idle", V2_PERMISSION),
    R("permission.cancelled", "MUST", "permission round trip (outcome cancelled): the turn ends with idle, not end_turn", V2_PERMISSION),
    R("capabilities.elicitation", "MUST", "no elicitation/create to a client that did not advertise elicitation", ELICITATION),
    R("capabilities.auth_terminal", "MUST", "no terminal auth method offered to a client that did not enable auth.terminal", V2_INIT),
    R("capabilities.client_methods", "SHOULD", "the agent calls only methods a v2 client has (no v1 fs/* or terminal/*)", SCHEMA),
    R("session.resume", "MUST", "session/resume (baseline with `session`) sends a state_update before its answer", RESUME),
    R("session.resume.bad_cursor", "MUST", "session/resume with an unsupported replayFrom cursor is rejected with -32602", V2_SETUP),
    R("session.close", "MUST", "session/close answers a known session; nothing more is sent for it afterwards", V2_SETUP),
    R("session.close.cancels", "MUST", "session/close during a turn: idle stopReason cancelled is sent before the close answer", V2_SETUP),
    R("session.delete", "MUST", "session/delete (when advertised) is answered and the session leaves session/list", LIST),
    R("cancel_request.answered", "MUST", "$/cancel_request for an already-answered prompt gets no second answer; the session keeps working", f"{REQUEST_CANCEL}; {RPC} §5"),
]
RULES_V2 = [r for r in RULES if r.id not in V1_ONLY] + V2_RULES
EXTRA_V2 = [r.id for r in V2_RULES]
UNKNOWN_BLOCK = {"type": "_acpgen_unknown_block", "payload": "acpgen conform: a content type nobody advertises"}
CONTENT_UPDATES = {"agent_message_chunk", "agent_message", "agent_thought_chunk", "agent_thought", "tool_call_update",
                   "tool_call", "plan", "terminal_update"}


def pos(agent: AgentProcess, obs: Observation) -> int:
    """Where `obs` is among what the agent sent (by identity: equal messages are different lines)."""
    return next(i for i, o in enumerate(agent.received.observations) if o is obs)


def update_of(obs: Observation) -> dict[str, Any]:
    update = dig(obs.message, "params", "update")
    return update if isinstance(update, dict) else {}


class V2Client(Client):
    """The scripted v2 client: the main one advertises elicitation, the capability run's nothing
    (never terminal auth); it can hold a permission request unanswered until the script lets it go."""

    def __init__(self, conform: AgentConformV2, capabilities: dict[str, Any] | None = None) -> None:
        super().__init__(capabilities or {}, conform.workdir)
        self.hold = False
        self.held: dict[str, asyncio.Future[None]] = {}

    async def handle(self, agent: AgentProcess, obs: Observation) -> tuple[object, dict[str, Any] | None]:
        if obs.method == "session/request_permission" and self.hold:
            self.requests.append(obs)
            release: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.held[str(obs.id)] = release
            await release
            return {"outcome": {"outcome": "cancelled"}}, None
        if obs.method in ("fs/read_text_file", "fs/write_text_file") or (obs.method or "").startswith("terminal/"):
            self.requests.append(obs)
            return None, {"code": -32601, "message": "Method not found", "data": {"method": obs.method}}
        if obs.method == "elicitation/create":
            self.requests.append(obs)
            return {"action": "decline"}, None
        return await super().handle(agent, obs)

    def release_all(self) -> None:
        for future in self.held.values():
            if not future.done():
                future.set_result(None)


class AgentConformV2(AgentConform):
    rules = RULES_V2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cwd = str(self.workdir)
        self.logout_pending = False

    def main_client(self) -> Client:
        # The main client advertises elicitation (form and url); the capability run advertises nothing.
        return V2Client(self, {"elicitation": {"form": {}, "url": {}}})

    def release(self, client: Client) -> None:
        if isinstance(client, V2Client):
            client.release_all()

    async def main_scenario(self, agent: AgentProcess, client: Client) -> None:
        assert isinstance(client, V2Client)
        await self.main_v2(agent, client)

    def extra_checks(self) -> None:
        self.client_method_check()

    def session_caps(self) -> dict[str, Any] | None:
        caps = self.agent_caps.get("session")
        return caps if isinstance(caps, dict) else None

    async def main_v2(self, agent: AgentProcess, client: V2Client) -> None:
        result = await self.initialize_main(agent)
        if result is not None:
            self.auth_terminal_check(result)
        await self.auth_v2(agent, result)
        session_id = await self.new_session(agent)
        await self.prompts_v2(agent, client, session_id)
        await self.cancel_v2(agent, client, session_id)
        await self.cancel_permission_v2(agent, client, session_id)
        await self.cancel_request_v2(agent, client, session_id)
        await self.list_and_resume(agent, session_id)
        await self.rpc_checks(agent, session_id)
        await self.settle(agent, session_id)
        await self.close_v2(agent, client)
        await self.delete_v2(agent)

    def auth_terminal_check(self, result: dict[str, Any]) -> None:
        methods = result.get("authMethods")
        methods = methods if isinstance(methods, list) else []
        terminal = [m.get("methodId") for m in methods if isinstance(m, dict) and m.get("type") == "terminal"]
        if terminal:
            self.set("capabilities.auth_terminal", FAIL, f"offered terminal auth {terminal} though auth.terminal was not enabled")
        else:
            self.set("capabilities.auth_terminal", PASS)

    async def auth_v2(self, agent: AgentProcess, result: dict[str, Any] | None) -> None:
        methods = dig(result, "authMethods")
        methods = [m for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
        if not methods:
            self.set("auth.advertised", SKIP, "no auth methods advertised")
            self.set("auth.logout", SKIP, "no auth methods advertised")
            return
        chosen, why = self.auth_choice(methods, "methodId")
        if chosen is None:
            self.set("auth.advertised", SKIP, why)
        else:
            try:
                obs = await agent.request("auth/login", {"methodId": chosen.get("methodId")})
            except Timeout as exc:
                self.set("auth.advertised", SKIP, f"method {chosen.get('methodId')!r}: {exc} (an interactive login? "
                         "choose another with --auth METHOD, or --auth none)")
                return
            if obs.kind == "error" and not obs.violations and dig(obs.message, "error", "code") != -32601:
                self.set("auth.advertised", PASS)  # a well-formed refusal (it may need a user)
            else:
                self.check_answer("auth.advertised", obs)
        if self.options.auth == "none":
            self.set("auth.logout", SKIP, "--auth none")
            return
        self.logout_pending = True  # checked at the end of the script (it may end the login)

    # -- the turn --------------------------------------------------------------------------------

    def updates_since(self, agent: AgentProcess, session_id: str, since: int) -> list[Observation]:
        return self.updates_for(agent, session_id, since)

    def turn_end(self, agent: AgentProcess, session_id: str, since: int) -> Observation | None:
        """The idle state_update that ends the turn started at `since`: the first idle after a
        running/requires_action (or any idle with a stop reason when no running came)."""
        started = False
        for obs in self.updates_since(agent, session_id, since):
            update = update_of(obs)
            if update.get("sessionUpdate") != "state_update":
                continue
            if update.get("state") in ("running", "requires_action"):
                started = True
            elif update.get("state") == "idle" and (started or update.get("stopReason")):
                return obs
        return None

    async def start_prompt(self, agent: AgentProcess, session_id: str, blocks: list[dict[str, Any]]
                           ) -> tuple[asyncio.Future[Observation], int]:
        since = len(agent.received.observations)
        future = await agent.start_request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        return future, since

    async def finish_turn(self, agent: AgentProcess, future: asyncio.Future[Observation], since: int,
                          session_id: str) -> tuple[Observation | None, Observation | None]:
        """Wait for the prompt's answer and the turn's idle update; checks the lifecycle rules.
        An error answer means the message was not inserted: no turn to wait for."""

        def settled() -> bool:
            if not future.done():
                return False
            return future.result().kind != "response" or self.turn_end(agent, session_id, since) is not None

        await agent.wait_for(settled, self.timeout)
        answer = future.result() if future.done() else None
        end = self.turn_end(agent, session_id, since)
        if answer is None:
            if agent.stdout_closed.is_set():
                raise Closed(f"the agent closed its stdout before answering session/prompt{agent.exit_note()}")
            self.set("prompt.message_id", FAIL, f"session/prompt not answered within {self.timeout:g} s")
            raise Timeout(f"no answer to session/prompt within {self.timeout:g} s")
        self.lifecycle(agent, answer, end, since, session_id)
        return answer, end

    def lifecycle(self, agent: AgentProcess, answer: Observation, end: Observation | None, since: int,
                  session_id: str) -> None:
        if answer.kind == "error" and not answer.violations:
            return  # rejected, so not inserted: the rule of the step that sent it says so
        message_id = dig(answer.message, "result", "messageId") if answer.kind == "response" else None
        if answer.kind != "response" or answer.violations or not isinstance(message_id, str):
            self.set("prompt.message_id", FAIL, short(answer) or f"answered {str(answer.message)[:200]}")
        elif end is not None and pos(agent, end) < pos(agent, answer):
            self.set("prompt.message_id", FAIL, "the prompt was answered only after the turn's idle update (it waited for processing)")
        else:
            self.set("prompt.message_id", PASS)
        updates = self.updates_since(agent, session_id, since)
        if isinstance(message_id, str):
            echoed = [u for u in updates if update_of(u).get("sessionUpdate") == "user_message"
                      and update_of(u).get("messageId") == message_id]
            self.set("prompt.user_message", PASS if echoed else FAIL,
                     "" if echoed else f"no user_message update with messageId {message_id!r}")
        states = [update_of(u).get("state") for u in updates if update_of(u).get("sessionUpdate") == "state_update"]
        if end is None:
            self.set("state.idle", FAIL, f"no idle state_update ended the turn within {self.timeout:g} s (states seen: {states})")
            return
        self.set("state.idle", PASS)
        before_end = states[: states.index("idle")] if "idle" in states else states
        if any(s in ("running", "requires_action") for s in before_end):
            self.set("state.running", PASS)
        else:
            self.set("state.running", FAIL, f"the turn went to idle without running/requires_action (states: {states})")
        if "requires_action" in before_end:
            after = [*before_end[before_end.index("requires_action") + 1:], "idle"]
            self.set("state.resumes", PASS if after[0] in ("running", "idle") else FAIL, f"after requires_action: {after}")

    async def turn(self, agent: AgentProcess, client: V2Client, rule: str, session_id: str,
                   blocks: list[dict[str, Any]], permission: str = "allow") -> Observation | None:
        client.permission = permission
        since_requests = len(client.requests)
        future, since = await self.start_prompt(agent, session_id, blocks)
        try:
            answer, end = await self.finish_turn(agent, future, since, session_id)
        except Timeout as exc:
            self.set(rule, FAIL, str(exc))
            return None
        ok = answer is not None and answer.kind == "response" and not answer.violations and end is not None
        self.set(rule, PASS if ok else FAIL, "" if ok else (
            "no idle state_update ended the turn" if answer is not None and answer.kind == "response"
            else f"answered {str(answer.message if answer else None)[:200]}"))
        reason = dig(update_of(end), "stopReason") if end is not None else None
        asked = self.permission_requests(client, since_requests)
        if asked:
            self.permission_state(agent, since, session_id)
            prule = f"permission.{permission}"
            bad = [short(o) for o in asked if o.violations]
            if bad:
                self.set(prule, FAIL, "; ".join(bad))
            elif end is None:
                self.set(prule, FAIL, "the turn did not end with an idle update after the permission answer")
            elif permission == "cancelled" and reason == "end_turn":
                self.set(prule, FAIL, "the turn ended end_turn though the permission was not granted (outcome cancelled)")
            else:
                self.set(prule, PASS)
        if end is not None and permission == "allow":
            if reason is None:
                self.set("state.stop_reason", FAIL, "the idle update ending the turn has no stopReason")
            elif reason != "end_turn":
                self.set("state.stop_reason", FAIL, f"a completed turn ended with stopReason {reason!r}")
            else:
                self.set("state.stop_reason", PASS)
        return answer

    def permission_state(self, agent: AgentProcess, since: int, session_id: str) -> None:
        """Was requires_action reported before the (first) permission request of the turn?"""
        seen = False
        for obs in agent.received.observations[since:]:
            if obs.method == "session/request_permission" and obs.kind == "request":
                self.set("state.requires_action", PASS if seen else FAIL,
                         "" if seen else "a permission request came while the state was still running")
                return
            update = update_of(obs) if obs.method == "session/update" else {}
            if update.get("sessionUpdate") == "state_update":
                seen = update.get("state") == "requires_action"

    async def prompts_v2(self, agent: AgentProcess, client: V2Client, session_id: str) -> None:
        readme = self.workdir / "README.md"
        text = {"type": "text", "text": "Hello from acpgen conform. Please read README.md."}
        await self.turn(agent, client, "prompt.text", session_id, [text], "allow")
        link = {"type": "resource_link", "uri": readme.as_uri(), "name": "README.md", "mimeType": "text/markdown"}
        await self.turn(agent, client, "prompt.resource_link", session_id, [text, link], "reject")
        await self.turn(agent, client, "prompt.text", session_id, [text], "cancelled")
        caps = dig(self.session_caps() or {}, "prompt")
        caps = caps if isinstance(caps, dict) else {}
        extra: dict[str, tuple[str, dict[str, Any]]] = {
            "prompt.image": ("image", {"type": "image", "mimeType": "image/png", "data": PNG_1PX}),
            "prompt.audio": ("audio", {"type": "audio", "mimeType": "audio/wav", "data": WAV_EMPTY}),
            "prompt.resource": ("embeddedContext", {"type": "resource", "resource": {
                "uri": readme.as_uri(), "mimeType": "text/markdown", "text": readme.read_text(encoding="utf-8")}}),
        }
        for rule, (cap, block) in extra.items():
            if caps.get(cap) is not None:
                await self.turn(agent, client, rule, session_id, [text, block], "allow")
            else:
                self.set(rule, SKIP, f"session.prompt.{cap} not advertised")
        since = len(agent.received.observations)
        obs = await agent.request("session/prompt", {"sessionId": session_id, "prompt": [text, UNKNOWN_BLOCK]})
        code = dig(obs.message, "error", "code") if obs.kind == "error" else None
        if code == -32602:
            inserted = [u for u in self.updates_since(agent, session_id, since)
                        if update_of(u).get("sessionUpdate") == "user_message"]
            self.set("prompt.unknown_content", FAIL if inserted else PASS,
                     "rejected, but a user_message update was sent for it" if inserted else "")
        else:
            self.set("prompt.unknown_content", FAIL,
                     f"a {UNKNOWN_BLOCK['type']!r} block was answered {str(obs.message.get('result') or obs.message.get('error'))[:160]}, not -32602")
            if obs.kind == "response":  # it was inserted: let its turn end before the next step
                await agent.wait_for(lambda: self.turn_end(agent, session_id, since) is not None, self.timeout)

    async def first_update(self, agent: AgentProcess, session_id: str, since: int, kinds: set[str]) -> bool:
        return await agent.wait_for(lambda: any(update_of(u).get("sessionUpdate") in kinds
                                                for u in self.updates_since(agent, session_id, since)), self.timeout)

    async def cancel_v2(self, agent: AgentProcess, client: V2Client, session_id: str) -> None:
        client.permission = "allow"
        text = {"type": "text", "text": "Hello from acpgen conform: a turn to cancel."}
        future, since = await self.start_prompt(agent, session_id, [text])
        await self.first_update(agent, session_id, since, CONTENT_UPDATES)
        if self.turn_end(agent, session_id, since) is not None:
            self.set("cancel.cancelled", SKIP, "the turn ended before its first output; nothing to cancel")
            await self.finish_turn(agent, future, since, session_id)
            return
        client.cancelling.add(session_id)
        await agent.notify("session/cancel", {"sessionId": session_id})
        try:
            _, end = await self.finish_turn(agent, future, since, session_id)
        except Timeout as exc:
            self.set("cancel.cancelled", FAIL, str(exc))
            raise
        finally:
            client.cancelling.discard(session_id)
        if end is None:
            self.set("cancel.cancelled", FAIL, "no idle state_update after session/cancel")
            return
        reason = update_of(end).get("stopReason")
        if reason != "cancelled":
            self.set("cancel.cancelled", FAIL, f"expected idle stopReason \"cancelled\", got {reason!r}")
            return
        # content after the idle(cancelled) that belongs to the cancelled turn: wait a moment for stragglers
        await asyncio.sleep(min(0.3, self.timeout / 10))
        observations = agent.received.observations
        late = [update_of(u).get("sessionUpdate") for u in observations[pos(agent, end) + 1:]
                if u.method == "session/update" and dig(u.message, "params", "sessionId") == session_id
                and update_of(u).get("sessionUpdate") in CONTENT_UPDATES]
        self.set("cancel.cancelled", FAIL if late else PASS,
                 f"updates after the idle cancelled: {late}" if late else "")

    async def cancel_permission_v2(self, agent: AgentProcess, client: V2Client, session_id: str) -> None:
        """Cancel while the agent waits for a permission answer the client holds back."""
        client.hold = True
        since_requests = len(client.requests)
        text = {"type": "text", "text": "Hello from acpgen conform: cancel while asking. Please read README.md."}
        future, since = await self.start_prompt(agent, session_id, [text])
        try:
            asked = await agent.wait_for(lambda: bool(self.permission_requests(client, since_requests))
                                         or self.turn_end(agent, session_id, since) is not None, self.timeout)
            if not asked or not self.permission_requests(client, since_requests):
                why = "the turn asked no permission" if asked else f"no permission request within {self.timeout:g} s"
                for rule in ("cancel.permission", "cancel.permission_withdrawn"):
                    self.set(rule, SKIP, why)
                client.release_all()
                if not asked:
                    await agent.notify("session/cancel", {"sessionId": session_id})
                await self.finish_turn(agent, future, since, session_id)
                return
            request = self.permission_requests(client, since_requests)[0]
            await agent.notify("session/cancel", {"sessionId": session_id})
            ended = await agent.wait_for(lambda: self.turn_end(agent, session_id, since) is not None, self.timeout)

            def withdrawn() -> list[Observation]:
                return [o for o in agent.received.observations[since:] if o.method == "$/cancel_request"
                        and o.kind == "notification" and dig(o.message, "params", "requestId") == request.id]

            if ended:  # the withdrawal may trail the idle update a little
                await agent.wait_for(lambda: bool(withdrawn()), min(1.0, self.timeout))
            if ended:
                reason = update_of(self.turn_end(agent, session_id, since) or request).get("stopReason")
                self.set("cancel.permission", PASS if reason == "cancelled" else FAIL,
                         "" if reason == "cancelled" else f"the turn ended with stopReason {reason!r}, expected \"cancelled\"")
            else:
                self.set("cancel.permission", FAIL, f"no idle update within {self.timeout:g} s of session/cancel: "
                         "the agent still waits for the permission answer")
            self.set("cancel.permission_withdrawn", PASS if withdrawn() else FAIL,
                     "" if withdrawn() else f"no $/cancel_request for permission request id {request.id!r}")
        finally:
            client.hold = False
            client.release_all()
        await self.finish_turn(agent, future, since, session_id)

    async def cancel_request_v2(self, agent: AgentProcess, client: V2Client, session_id: str) -> None:
        """In v2 the prompt is answered at insertion: a $/cancel_request for it mid-turn names an
        answered request, which the agent must ignore (no second response)."""
        client.permission = "allow"
        text = {"type": "text", "text": "Hello from acpgen conform: $/cancel_request for an answered prompt."}
        future, since = await self.start_prompt(agent, session_id, [text])
        pending = [k for k, f in agent.waiters.items() if f is future]
        request_id = int(pending[0]) if pending else None
        await agent.wait_for(future.done, self.timeout)
        orphans = len(agent.orphans)
        await agent.notify("$/cancel_request", {"requestId": request_id})
        try:
            await self.finish_turn(agent, future, since, session_id)
        except Timeout as exc:
            self.set("cancel_request.answered", FAIL, str(exc))
            raise
        probe = await agent.request("acpgen/no_such_method", {})
        again = [o for o in agent.orphans[orphans:] if o.id == request_id]
        if again:
            self.set("cancel_request.answered", FAIL, f"a second answer to the prompt: {str(again[0].message)[:200]}")
        elif probe.kind not in ("response", "error"):
            self.set("cancel_request.answered", FAIL, "the connection stopped answering")
        else:
            self.set("cancel_request.answered", PASS)

    async def list_and_resume(self, agent: AgentProcess, session_id: str) -> None:
        caps = self.session_caps()
        if caps is None or "session/list" not in self.binding.agent_methods:
            for rule in ("session.list", "session.list.contains", "session.resume", "session.resume.bad_cursor"):
                self.set(rule, SKIP, "capabilities.session not advertised (no baseline session methods)")
            return
        obs = await agent.request("session/list", {})
        if self.check_answer("session.list", obs):
            sessions = dig(obs.message, "result", "sessions")
            ids = {s.get("sessionId") for s in sessions if isinstance(s, dict)} if isinstance(sessions, list) else set()
            self.set("session.list.contains", PASS if session_id in ids else FAIL,
                     "" if session_id in ids else f"{session_id} is not among {len(ids)} listed sessions")
        since = len(agent.received.observations)
        obs = await agent.request("session/resume", {"sessionId": session_id, "cwd": self.cwd,
                                                     "replayFrom": {"type": "start"}})
        if self.check_answer("session.resume", obs):
            index = pos(agent, obs)
            states = [u for u in self.updates_since(agent, session_id, since)
                      if update_of(u).get("sessionUpdate") == "state_update"
                      and pos(agent, u) < index]
            if not states:
                self.set("session.resume", FAIL, "no state_update before the session/resume answer")
        obs = await agent.request("session/resume", {"sessionId": session_id, "cwd": self.cwd,
                                                     "replayFrom": {"type": "_acpgen_cursor", "at": 3}})
        code = dig(obs.message, "error", "code") if obs.kind == "error" else None
        self.set("session.resume.bad_cursor", PASS if code == -32602 else FAIL,
                 "" if code == -32602 else f"replayFrom {{\"type\": \"_acpgen_cursor\"}} was answered {str(obs.message.get('result') or obs.message.get('error'))[:160]}")

    async def settle(self, agent: AgentProcess, session_id: str) -> None:
        """The bad-line probe's prompt may still be running: let it end before closing."""
        since = max((i for i, o in enumerate(agent.received.observations)
                     if o.method == "session/prompt" and o.kind == "response"), default=0)
        await agent.wait_for(lambda: self.turn_end(agent, session_id, since) is not None, self.timeout)
        if self.logout_pending:
            obs = await agent.request("auth/logout", {})
            self.check_answer("auth.logout", obs)

    async def close_v2(self, agent: AgentProcess, client: V2Client) -> None:
        if self.session_caps() is None or "session/close" not in self.binding.agent_methods:
            self.set("session.close", SKIP, "capabilities.session not advertised")
            self.set("session.close.cancels", SKIP, "capabilities.session not advertised")
            return
        # close an idle session: answered, and nothing more for it
        idle_id = await self.new_session(agent)
        obs = await agent.request("session/close", {"sessionId": idle_id})
        if self.check_answer("session.close", obs):
            await asyncio.sleep(min(0.3, self.timeout / 10))
            after = [o for o in agent.received.observations[pos(agent, obs) + 1:]
                     if dig(o.message, "params", "sessionId") == idle_id]
            if after:
                self.set("session.close", FAIL, f"{len(after)} message(s) for the session after its close answer")
        # close a session with a turn running: idle cancelled before the answer
        busy = await self.new_session(agent)
        client.permission = "allow"
        future, since = await self.start_prompt(agent, busy, [{"type": "text", "text": "A turn to close."}])
        await self.first_update(agent, busy, since, CONTENT_UPDATES)
        if self.turn_end(agent, busy, since) is not None:
            self.set("session.close.cancels", SKIP, "the turn ended before its first output")
            return
        obs = await agent.request("session/close", {"sessionId": busy})
        await agent.wait_for(future.done, self.timeout)
        end = self.turn_end(agent, busy, since)
        if obs.kind != "response":
            self.set("session.close.cancels", FAIL, f"session/close answered {str(obs.message.get('error'))[:160]}")
        elif end is None or pos(agent, end) > pos(agent, obs):
            self.set("session.close.cancels", FAIL, "no idle state_update before the session/close answer")
        elif update_of(end).get("stopReason") != "cancelled":
            self.set("session.close.cancels", FAIL, f"the closed turn ended with stopReason {update_of(end).get('stopReason')!r}")
        else:
            self.set("session.close.cancels", PASS)

    async def delete_v2(self, agent: AgentProcess) -> None:
        caps = self.session_caps()
        if caps is None or caps.get("delete") is None or "session/delete" not in self.binding.agent_methods:
            self.set("session.delete", SKIP, "session.delete not advertised")
            return
        gone = await self.new_session(agent)
        obs = await agent.request("session/delete", {"sessionId": gone})
        if self.check_answer("session.delete", obs):
            listed = await agent.request("session/list", {})
            sessions = dig(listed.message, "result", "sessions")
            ids = {s.get("sessionId") for s in sessions if isinstance(s, dict)} if isinstance(sessions, list) else set()
            if gone in ids:
                self.set("session.delete", FAIL, "the deleted session is still in session/list")

    # -- the capability-less client --------------------------------------------------------------

    async def capability_scenario(self) -> None:
        """A client that advertises no elicitation: one turn on its own connection, which must not
        bring an elicitation/create."""
        client = V2Client(self)
        agent = await self.spawn(client)
        try:
            init = await agent.request("initialize", self.init_params(self.version, full=False),
                                       timeout=self.timeout * STARTUP)
            if init.kind != "response":
                raise Closed("initialize failed")
            obs = await agent.request("session/new", {"cwd": self.cwd})
            session_id = dig(obs.message, "result", "sessionId") if obs.kind == "response" else None
            if not isinstance(session_id, str):
                raise Closed("session/new failed")
            self.sessions.add(session_id)
            future, since = await self.start_prompt(agent, session_id, [
                {"type": "text", "text": "Hello from acpgen conform. Please read README.md."}])
            await agent.wait_for(lambda: future.done() and self.turn_end(agent, session_id, since) is not None, self.timeout)
        except (Closed, Timeout) as exc:
            self.set("capabilities.elicitation", SKIP, f"could not run a turn without capabilities: {exc}")
            return
        finally:
            await agent.close_stdin(2)
        asked = [o for o in client.requests if o.method == "elicitation/create"]
        self.set("capabilities.elicitation", FAIL if asked else PASS,
                 f"sent elicitation/create {len(asked)} time(s) though elicitation was not advertised" if asked else "")

    def client_method_check(self) -> None:
        bad = sorted({o.method or "" for agent in self.processes for o in agent.received.observations
                      if o.kind == "request" and o.method not in self.binding.client_methods})
        self.set("capabilities.client_methods", FAIL if bad else PASS,
                 f"called {', '.join(bad)}, which a v2 client does not have" if bad else "")
