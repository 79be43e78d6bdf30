"""An agent process for the runtime load tests: `python tests/load_agent.py MODE`.

MODE picks what the agent does wrong or slowly:
- `stuck`: `session/prompt` never returns (a flood of prompts fills every slot), `initialize`
  answers at once; `session/cancel`'s handler never returns either (shutdown must not wait for it).
- `print`: `initialize` prints to stdout before answering (run_agent must keep it off the protocol).
- `noisy`: not a run_agent agent: writes a log line and escape codes to stdout before each frame,
  answering `initialize` by hand (a careless agent, for the client-side tests).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v1 as acp


class LoadAgent(acp.Agent):
    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        if self.mode == "print":
            print("hello from a careless agent")
            print(json.dumps({"jsonrpc": "2.0", "id": 12345, "result": {}}))
        return acp.InitializeResponse(
            protocol_version=acp.negotiate_protocol_version(params.protocol_version),
            agent_capabilities=acp.AgentCapabilities(),
            auth_methods=[],
        )

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def session_cancel(self, params: acp.CancelNotification) -> None:
        await asyncio.Event().wait()


def noisy() -> None:
    out = sys.stdout.buffer
    out.write(b"Starting agent v1.2.3...\n")
    out.flush()
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        frame = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        out.write(b"[info] got " + message["method"].encode() + b"\n")
        out.write(b"\x1b[2J\x1b[H" + frame + b"\n")
        out.flush()


def main() -> None:
    mode = sys.argv[1]
    if mode == "noisy":
        noisy()
        return
    asyncio.run(acp.run_agent(LoadAgent(mode), limits=acp.ConnectionLimits(shutdown_grace=0.5)))


if __name__ == "__main__":
    main()
