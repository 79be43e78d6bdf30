#!/usr/bin/env python3
"""The example agent (agent.py) served remotely on one `/acp` endpoint: WebSocket and Streamable HTTP.

    hypercorn examples/remote_agent:app --bind 127.0.0.1:8000      # HTTP/2 (h2c) and WebSocket
    uvicorn --app-dir examples remote_agent:app --port 8000         # WebSocket (and HTTP/1.1)
    python examples/remote_agent.py --port 8000 [--server uvicorn]  # the same through serve_agent

Each connection gets its own ExampleAgent. Sessions are kept per caller (the identity the app's
`authenticate` hook returned, `identity_of(conn)`), so a client that reconnects as the same caller
resumes its session with session/load, and no caller sees another's. Without ACP_TOKEN every
connection is its own caller (its sessions end with it); with it, every holder of the token is one
caller. The store is bounded and expires: at most MAX_CALLERS callers, MAX_SESSIONS sessions each,
the last MAX_HISTORY updates (MAX_HISTORY_BYTES) per session, STORE_BYTES of history in all, and a
session unused for SESSION_TTL_S seconds is dropped.
Environment: ACP_TOKEN (if set, every request must carry `Authorization: Bearer $ACP_TOKEN`),
ACP_NODE (if set, sent as the cookie `acp-node`, which a sticky load balancer can route on),
ACP_ALLOWED_ORIGINS (comma-separated `Origin` values to accept).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v1 as acp
from acp_v1.asgi import identity_of
from agent import ExampleAgent, Session

MAX_CALLERS = 1024
MAX_SESSIONS = 64
MAX_HISTORY = 512
MAX_HISTORY_BYTES = 1024 * 1024
STORE_BYTES = 64 * 1024 * 1024
SESSION_TTL_S = 3600.0


class History(list[acp.SessionUpdate]):
    """A session's history: its last MAX_HISTORY updates within MAX_HISTORY_BYTES (encoded), counted
    in the store's total while the session is in the store."""

    def __init__(self, store: Store, updates: Iterable[acp.SessionUpdate] = ()) -> None:
        super().__init__()
        self.store: Store | None = store
        self.sizes: deque[int] = deque()
        self.bytes = 0
        for update in updates:
            self.append(update)

    def append(self, update: acp.SessionUpdate) -> None:
        size = len(json.dumps(acp.encode(update)))
        super().append(update)
        self.sizes.append(size)
        self._count(size)
        while len(self) > MAX_HISTORY or self.bytes > MAX_HISTORY_BYTES:
            del self[0]
            self._count(-self.sizes.popleft())
        if self.store is not None:
            self.store.trim()

    def _count(self, delta: int) -> None:
        self.bytes += delta
        if self.store is not None:
            self.store.bytes += delta

    def leave(self) -> None:
        """The session left the store: its bytes no longer count (a running turn may still add)."""
        if self.store is not None:
            self.store.bytes -= self.bytes
            self.store = None


class CallerSessions(dict[str, Session]):
    """One caller's sessions: at most MAX_SESSIONS (a new one evicts the least recently used),
    each dropped after SESSION_TTL_S seconds unused, each with a bounded History."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self.used: OrderedDict[str, float] = OrderedDict()

    def expire(self) -> None:
        now = time.monotonic()
        while self.used and (len(self.used) > MAX_SESSIONS or now - next(iter(self.used.values())) > SESSION_TTL_S):
            self.evict_oldest()

    def evict_oldest(self) -> None:
        session_id, _ = self.used.popitem(last=False)
        self.pop(session_id, None)

    def __setitem__(self, session_id: str, session: Session) -> None:
        self.pop(session_id, None)
        session.history = History(self.store, session.history)
        super().__setitem__(session_id, session)
        self.used[session_id] = time.monotonic()
        self.expire()

    def get(self, session_id: str, default: Session | None = None) -> Session | None:  # type: ignore[override]
        self.expire()
        session = super().get(session_id)
        if session is None:
            return default
        self.used.move_to_end(session_id)
        self.used[session_id] = time.monotonic()
        return session

    def pop(self, session_id: str, *default: Session | None) -> Session | None:  # type: ignore[override]
        self.used.pop(session_id, None)
        session = super().pop(session_id, *default)
        if session is not None and isinstance(session.history, History):
            session.history.leave()
        return session

    def clear(self) -> None:
        while self.used:
            self.evict_oldest()


class Store:
    """Every caller's sessions: at most MAX_CALLERS callers (the least recently connected go
    first) and STORE_BYTES of history in all (the least recently connected caller's least
    recently used session goes first)."""

    def __init__(self) -> None:
        self.callers: OrderedDict[object, CallerSessions] = OrderedDict()
        self.bytes = 0

    def of(self, caller: object) -> CallerSessions:
        sessions = self.callers.pop(caller, None) or CallerSessions(self)
        self.callers[caller] = sessions
        while len(self.callers) > MAX_CALLERS:
            self.callers.popitem(last=False)[1].clear()
        return sessions

    def trim(self) -> None:
        while self.bytes > STORE_BYTES and self.callers:
            caller, sessions = next(iter(self.callers.items()))
            if sessions.used:
                sessions.evict_oldest()
            else:
                del self.callers[caller]


STORE = Store()


TOKEN = os.environ.get("ACP_TOKEN")
NODE = os.environ.get("ACP_NODE")


AUTHENTICATE = acp.bearer_token(TOKEN) if TOKEN else None
COOKIE = ("acp-node", NODE) if NODE else None
ORIGINS = [origin for origin in os.environ.get("ACP_ALLOWED_ORIGINS", "").split(",") if origin]


def make_agent(conn: acp.AgentSideConnection) -> ExampleAgent:
    return ExampleAgent(conn, STORE.of(identity_of(conn)))


app = acp.AcpApp(make_agent, authenticate=AUTHENTICATE, cookie=COOKIE, allowed_origins=ORIGINS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--server", choices=["hypercorn", "uvicorn"], default="hypercorn")
    args = parser.parse_args()
    logging.basicConfig(level=os.environ.get("ACP_EXAMPLE_LOG", "WARNING"), stream=sys.stderr)
    acp.serve_agent(make_agent, host=args.host, port=args.port, server=args.server,
                    authenticate=AUTHENTICATE, cookie=COOKIE, allowed_origins=ORIGINS)


if __name__ == "__main__":
    main()
