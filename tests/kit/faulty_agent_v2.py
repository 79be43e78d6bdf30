#!/usr/bin/env python3
"""examples/agent_v2.py with one v2 fault switched on by its argument, for `acpgen conform agent
--protocol v2` to catch. Without an argument it is the example agent.

    python faulty_agent_v2.py [FAULT]
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "generated"))

import acp_v2 as acp  # noqa: E402 (from generated/, put on the path above)

spec = importlib.util.spec_from_file_location("example_agent_v2", ROOT / "examples" / "agent_v2.py")
assert spec is not None and spec.loader is not None
example = importlib.util.module_from_spec(spec)
sys.modules["example_agent_v2"] = example
spec.loader.exec_module(example)

FAULTS = {
    "late_message_id": "answers session/prompt only once the turn has ended",
    "no_user_message": "never echoes the prompt as a user_message update",
    "no_running": "never reports the running state (straight from idle to idle)",
    "no_idle": "never reports idle at the end of a turn",
    "cancel_end_turn": "a cancelled turn ends with stopReason end_turn",
    "waits_after_cancel": "keeps waiting for a permission answer after session/cancel",
    "resume_no_state": "answers session/resume without a state_update",
    "elicits": "sends elicitation/create to a client that did not advertise elicitation",
    "close_no_idle": "session/close during a turn drops the turn without its idle cancelled update",
}
FAULT = sys.argv[1] if len(sys.argv) > 1 else ""
if FAULT and FAULT not in FAULTS:
    sys.exit(f"unknown fault {FAULT!r}; one of {', '.join(FAULTS)}")


class FaultyV2Agent(example.ExampleV2Agent):  # type: ignore[misc, name-defined]
    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        answer: acp.PromptResponse = await super().session_prompt(params)
        session = self.sessions[params.session_id]
        if FAULT == "late_message_id" and session.turn is not None:
            await asyncio.wait({session.turn})
        return answer

    async def update(self, session_id: str, update: acp.SessionUpdate) -> None:
        if FAULT == "no_user_message" and isinstance(update, acp.UserMessageSessionUpdate):
            return
        await super().update(session_id, update)

    async def state(self, session_id: str, state: acp.StateUpdate) -> None:
        if FAULT == "no_running" and isinstance(state, (acp.RunningStateUpdateVariant, acp.RequiresActionStateUpdateVariant)):
            return
        if FAULT == "no_idle" and isinstance(state, acp.IdleStateUpdateVariant):
            return
        if (FAULT == "cancel_end_turn" and isinstance(state, acp.IdleStateUpdateVariant)
                and isinstance(state.idle_state_update, acp.CancelledIdleStateUpdate)):
            state = example.idle(acp.EndTurnIdleStateUpdate())
        await super().state(session_id, state)

    async def work(self, session_id: str, words: str) -> None:
        if FAULT == "elicits":
            await self.conn.elicitation_create(acp.decode("CreateElicitationRequest", {
                "mode": "url", "sessionId": session_id, "elicitationId": "faulty-1",
                "url": "https://example.com/sign-in", "message": "Sign in, please"}))
        await super().work(session_id, words)

    def __init__(self, conn: acp.AgentSideConnection) -> None:
        super().__init__(conn)
        if FAULT == "waits_after_cancel":
            ask = conn.session_request_permission

            async def stubborn(params: acp.RequestPermissionRequest) -> acp.RequestPermissionResponse:
                pending = asyncio.ensure_future(ask(params))
                while True:  # a session/cancel does not stop the wait for the answer
                    try:
                        answer: acp.RequestPermissionResponse = await asyncio.shield(pending)
                        return answer
                    except asyncio.CancelledError:
                        continue

            conn.session_request_permission = stubborn  # type: ignore[method-assign]

    async def session_resume(self, params: acp.ResumeSessionRequest) -> acp.ResumeSessionResponse:
        if FAULT == "resume_no_state" and isinstance(params.replay_from, acp.StartReplayFrom):
            return acp.ResumeSessionResponse()
        answer: acp.ResumeSessionResponse = await super().session_resume(params)
        return answer

    async def session_close(self, params: acp.CloseSessionRequest) -> acp.CloseSessionResponse:
        if FAULT == "close_no_idle":
            self.session(params.session_id)
            del self.sessions[params.session_id]  # the turn finds its session gone and reports nothing
            self.conn.cancel_session_tasks(params.session_id)
            return acp.CloseSessionResponse()
        answer: acp.CloseSessionResponse = await super().session_close(params)
        return answer


def main() -> None:
    os.environ.setdefault("ACP_EXAMPLE_PAUSE_S", "0.3")
    asyncio.run(acp.run_agent(FaultyV2Agent))


if __name__ == "__main__":
    main()
