"""`acpgen replay TRACE -- CMD ...`: play a recorded session's client side against an agent again.

The trace is what `acpgen inspect --trace` wrote. The client's requests and notifications are sent
again in their recorded order (request ids are the harness's own; session ids the agent hands out
are mapped from the recorded ones), and each is sent only once the agent has sent as many messages
of each kind as it had at that point of the recording, so a `session/cancel` still lands after the
first update. The agent's requests are answered with the recorded answers. At the end, every
answer, notification and request of the agent is compared in shape (keys and JSON types, not
values) with its recorded counterpart."""

from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict, deque
from pathlib import Path
from typing import Any

from acpgen.kit.bindings import Binding
from acpgen.kit.harness import AgentProcess, Closed
from acpgen.kit.observe import TO_AGENT, TO_CLIENT, Observation, Observer, dig

ID_KEYS = ("sessionId",)
MAX_DIFFERENCES = 50


class ReplayError(Exception):
    """The trace cannot be replayed (unreadable, or has no client messages)."""


def load_trace(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(direction, message) for each JSON-RPC object in the trace, in order."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read the trace: {exc.strerror or exc}") from None
    out: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            direction, raw = record["dir"], record["line"]
        except (ValueError, KeyError, TypeError):
            raise ReplayError(f"line {number} is not a trace record (expected {{\"dir\", \"line\", ...}})") from None
        if direction not in (TO_AGENT, TO_CLIENT):
            continue
        try:
            message = json.loads(raw)
        except ValueError:
            continue  # noise stays in the trace for the reader; it is not replayed
        if isinstance(message, dict):
            out.append((direction, message))
    if not any(d == TO_AGENT and "method" in m for d, m in out):
        raise ReplayError("the trace holds no client requests or notifications to replay")
    return out


def shape(value: object) -> object:
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null"


def compare(recorded: object, replayed: object, path: str, out: list[str]) -> None:
    """Append one line per place where the two values differ in shape."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed)):
            sub = f"{path}.{key}" if path else key
            if key not in replayed:
                out.append(f"{sub}: recorded, missing now")
            elif key not in recorded:
                out.append(f"{sub}: new (not in the recording)")
            else:
                compare(recorded[key], replayed[key], sub, out)
    elif isinstance(recorded, list) and isinstance(replayed, list):
        if len(recorded) != len(replayed):
            out.append(f"{path}: {len(recorded)} items recorded, {len(replayed)} now")
        for index, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
            compare(a, b, f"{path}[{index}]", out)
    elif shape(recorded) != shape(replayed):
        out.append(f"{path}: recorded {describe(recorded)}, now {describe(replayed)}")


def describe(value: object) -> str:
    found = shape(value)
    return found if isinstance(found, str) else ("an object" if isinstance(value, dict) else "an array")


def key_of(message: dict[str, Any]) -> str:
    """A message's kind for syncing and pairing: method (plus the update kind for session/update)."""
    method = str(message.get("method"))
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if isinstance(update, dict) and "sessionUpdate" in update:
        return f"{method}:{update['sessionUpdate']}"
    return method


class Replay:
    def __init__(self, binding: Binding, trace: list[tuple[str, dict[str, Any]]], timeout: float) -> None:
        self.binding = binding
        self.trace = trace
        self.timeout = timeout
        self.differences: list[str] = []
        self.lines: list[tuple[float, str, bytes]] = []
        """Every line of the replayed session (time, direction, bytes), for --html."""
        self.ids: dict[str, str] = {}  # recorded session id -> new one
        self.answers: dict[str, deque[tuple[dict[str, Any], dict[str, Any] | None]]] = defaultdict(deque)
        self.replayed_requests: dict[str, list[dict[str, Any]]] = defaultdict(list)
        recorded_agent_requests: dict[object, dict[str, Any]] = {}
        for direction, message in trace:
            if direction == TO_CLIENT and "method" in message and "id" in message:
                recorded_agent_requests[json.dumps(message["id"])] = message
        for direction, message in trace:
            if direction == TO_AGENT and "method" not in message and "id" in message:
                request = recorded_agent_requests.get(json.dumps(message["id"]))
                if request is not None:
                    self.answers[str(request["method"])].append((request, message))

    def differ(self, where: str, lines: list[str]) -> None:
        for line in lines:
            if len(self.differences) < MAX_DIFFERENCES:
                self.differences.append(f"{where}: {line}")

    def remap(self, value: object, table: dict[str, str]) -> object:
        if isinstance(value, dict):
            return {k: (table.get(v, v) if k in ID_KEYS and isinstance(v, str) else self.remap(v, table))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self.remap(item, table) for item in value]
        return value

    def learn_ids(self, recorded: object, replayed: object) -> None:
        if isinstance(recorded, dict) and isinstance(replayed, dict):
            for key, value in recorded.items():
                new = replayed.get(key)
                if key in ID_KEYS and isinstance(value, str) and isinstance(new, str):
                    self.ids[value] = new
                else:
                    self.learn_ids(value, new)
        elif isinstance(recorded, list) and isinstance(replayed, list):
            for a, b in zip(recorded, replayed, strict=False):
                self.learn_ids(a, b)

    async def on_request(self, agent: AgentProcess, obs: Observation) -> tuple[object, dict[str, Any] | None]:
        method = obs.method or ""
        self.replayed_requests[method].append(obs.message)
        if not self.answers[method]:
            self.differ(f"agent request {method}", ["not in the recording (answered with an error)"])
            return None, {"code": -32603, "message": "acpgen replay: no recorded answer for this request"}
        request, answer = self.answers[method].popleft()
        back = {new: old for old, new in self.ids.items()}
        lines: list[str] = []
        compare(request.get("params"), self.remap(obs.message.get("params"), back), "params", lines)
        self.differ(f"agent request {method}", lines)
        assert answer is not None
        if "error" in answer:
            return None, answer["error"]
        return self.remap(answer.get("result"), self.ids), None

    def received_counts(self, agent: AgentProcess) -> Counter[str]:
        return Counter(key_of(o.message) for o in agent.received.observations
                       if o.kind in ("request", "notification", "response", "error") and isinstance(o.message, dict)
                       and "method" in o.message)

    async def run(self, command: list[str]) -> list[str]:
        agent = AgentProcess(Observer(self.binding), self.on_request, self.timeout)
        loop = asyncio.get_running_loop()
        started = loop.time()
        agent.on_line = lambda direction, line: self.lines.append((loop.time() - started, direction, line))
        await agent.start(command)
        pending: list[tuple[dict[str, Any], dict[str, Any] | None, asyncio.Future[Observation]]] = []
        recorded_answers = {json.dumps(m["id"]): m for d, m in self.trace
                            if d == TO_CLIENT and "method" not in m and "id" in m}
        expected: Counter[str] = Counter()
        by_recorded_id: dict[str, asyncio.Future[Observation]] = {}
        answered: list[asyncio.Future[Observation]] = []  # answers the recording had by now
        try:
            for direction, message in self.trace:
                if direction == TO_CLIENT:
                    if "method" in message:
                        expected[key_of(message)] += 1
                    elif json.dumps(message.get("id")) in by_recorded_id:
                        answered.append(by_recorded_id[json.dumps(message.get("id"))])
                    continue
                if "method" not in message:
                    continue  # answers to the agent's requests come from on_request
                await self.sync(agent, expected, answered, pending)
                params = self.remap(message.get("params"), self.ids)
                if "id" in message:
                    future = await agent.start_request(str(message["method"]), params)
                    by_recorded_id[json.dumps(message["id"])] = future
                    pending.append((message, recorded_answers.get(json.dumps(message["id"])), future))
                else:
                    await agent.notify(str(message["method"]), params)
            await self.sync(agent, expected, answered, pending)
            await self.finish(pending)
            self.compare_notifications(agent)
        except Closed as exc:
            self.differ("connection", [str(exc)])
        finally:
            await agent.close_stdin(5)
            await agent.kill()
        return self.differences

    async def sync(self, agent: AgentProcess, expected: Counter[str],
                   answered: list[asyncio.Future[Observation]], pending: list[Any]) -> None:
        """Wait until the agent caught up with the recording at this point: as many messages of
        each kind, and the answers the recording had received by then."""
        def caught_up() -> bool:
            got = self.received_counts(agent)
            return all(got[k] >= n for k, n in expected.items()) and all(f.done() for f in answered)

        if not await agent.wait_for(caught_up, self.timeout):
            got = self.received_counts(agent)
            missing = {k: n - got[k] for k, n in expected.items() if got[k] < n}
            self.differ("agent messages", [f"{k}: {n} fewer than recorded" for k, n in sorted(missing.items())])
            expected.clear()
            expected.update({k: got[k] for k in got})
            answered[:] = [f for f in answered if f.done()]
        await self.settle(pending)

    async def settle(self, pending: list[Any]) -> None:
        for message, recorded, future in pending:
            if future.done() and not getattr(future, "_acpgen_seen", False):
                future._acpgen_seen = True
                self.compare_answer(message, recorded, future.result())

    async def finish(self, pending: list[Any]) -> None:
        for message, recorded, future in pending:
            if getattr(future, "_acpgen_seen", False):
                continue
            try:
                obs = await asyncio.wait_for(asyncio.shield(future), self.timeout)
            except asyncio.TimeoutError:
                self.differ(f"{message['method']} (recorded id {json.dumps(message['id'])})",
                            [f"no answer within {self.timeout:g} s"])
                continue
            future._acpgen_seen = True
            self.compare_answer(message, recorded, obs)

    def compare_answer(self, request: dict[str, Any], recorded: dict[str, Any] | None, obs: Observation) -> None:
        where = f"answer to {request['method']} (recorded id {json.dumps(request['id'])})"
        if recorded is None:
            return  # the recording ended before this answer
        now = obs.message
        if ("error" in recorded) != ("error" in now):
            was = "an error" if "error" in recorded else "a result"
            self.differ(where, [f"recorded {was}, now {'an error' if 'error' in now else 'a result'}: "
                                f"{json.dumps(now.get('error', now.get('result')))[:200]}"])
            return
        if "error" in recorded:
            if dig(recorded, "error", "code") != dig(now, "error", "code"):
                self.differ(where, [f"error code {dig(recorded, 'error', 'code')} recorded, "
                                    f"{dig(now, 'error', 'code')} now"])
            return
        self.learn_ids(recorded.get("result"), now.get("result"))
        lines: list[str] = []
        compare(recorded.get("result"), now.get("result"), "result", lines)
        self.differ(where, lines)

    def compare_notifications(self, agent: AgentProcess) -> None:
        recorded: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for direction, message in self.trace:
            if direction == TO_CLIENT and "method" in message and "id" not in message:
                recorded[key_of(message)].append(message)
        now: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for o in agent.received.observations:
            if o.kind == "notification" and isinstance(o.message, dict):
                now[key_of(o.message)].append(o.message)
        for key in sorted(set(recorded) | set(now)):
            a, b = recorded.get(key, []), now.get(key, [])
            if len(a) != len(b):
                self.differ(f"agent notifications {key}", [f"{len(a)} recorded, {len(b)} now"])
            for index, (x, y) in enumerate(zip(a, b, strict=False)):
                lines: list[str] = []
                compare(x.get("params"), y.get("params"), "params", lines)
                self.differ(f"agent notification {key} #{index + 1}", lines)


async def run_replay(binding: Binding, trace_path: Path, command: list[str], timeout: float,
                     html_path: Path | None = None) -> list[str]:
    trace = load_trace(trace_path)
    replay = Replay(binding, trace, timeout)
    differences = await replay.run(command)
    if html_path is not None:
        from acpgen.kit.html_report import records_of, write_html

        write_html(html_path, records_of(replay.lines, Observer(binding)),
                   f"acpgen replay {trace_path.name}: " + " ".join(command), differences or ["no difference in shape"])
    return differences
