#!/usr/bin/env node
// ACP agent peer serving v1 and v2 from one process with the official TypeScript SDK's
// AgentProtocolRouter (@agentclientprotocol/sdk 2.4.0: `agentProtocolRouter().withV1(..).withV2(..)`).
//
//   node ts_router_agent.mjs [--only v1|v2]     # ACP on stdin/stdout, log on stderr
//
// --only v1 / --only v2 connects that version's agent app directly, without the router.
// Both agents play one turn with a CANCEL_WINDOW_MS pause after the first chunk (where a
// session/cancel lands), a tool call, a permission request and the tool call's outcome:
// - v1: agent_message_chunk, tool_call, session/request_permission, tool_call_update,
//   agent_message_chunk; the prompt answers stopReason end_turn or cancelled.
// - v2: the prompt answers its messageId at once; user_message, state_update running,
//   agent_message_chunk, tool_call_update (pending), session/request_permission,
//   tool_call_update (completed), agent_message_chunk, state_update idle with stopReason
//   end_turn or cancelled.
// The SDK validates the params it receives; the agents validate the client's answers to their
// permission requests with the SDK's zod schemas (an invalid one fails the turn with -32603).
// Every agent-side event goes to stderr as "[ts_router_agent] ..." (the tests read the
// protocol version each connection was routed to from "routed v1" / "routed v2").
import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const z1 = await import(new URL("../schema/zod.gen.js", import.meta.resolve("@agentclientprotocol/sdk")).href);
const z2 = await import(new URL("../schema/zod.gen.js", import.meta.resolve("@agentclientprotocol/sdk/experimental/v2")).href);

const TIMEOUT_MS = Number(process.env.PEER_TIMEOUT_S ?? 120) * 1000;
const CANCEL_WINDOW_MS = 200;
const log = (...parts) => process.stderr.write(`[ts_router_agent] ${parts.join(" ")}\n`);
setTimeout(() => { log(`no end of input after ${TIMEOUT_MS} ms, exiting`); process.exit(3); }, TIMEOUT_MS).unref();

const args = process.argv.slice(2);
const only = args[0] === "--only" ? args[1] : null;

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

function checked(sdk, schema, value, what) {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    log(`invalid ${what}: ${issues}`);
    throw sdk.RequestError.internalError({ details: `invalid ${what} from client: ${issues}` });
  }
  return result.data;
}

const text = (t) => ({ type: "text", text: t });
const options = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

// -- v1 ------------------------------------------------------------------------------------------
const v1Sessions = new Map();
const v1App = v1.agent({ name: "ts_router_agent_v1" })
  .onRequest(v1.methods.agent.initialize, ({ params }) => {
    log(`routed v1 (requested ${params.protocolVersion})`);
    return { protocolVersion: 1, agentCapabilities: { loadSession: false }, agentInfo: { name: "ts_router_agent", version: "0" }, authMethods: [] };
  })
  .onRequest(v1.methods.agent.session.new, () => {
    const sessionId = `ts1-${randomUUID()}`;
    v1Sessions.set(sessionId, { turn: null });
    return { sessionId };
  })
  .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
    const session = v1Sessions.get(params.sessionId);
    if (!session) throw v1.RequestError.sessionNotFound(params.sessionId);
    const turn = new AbortController();
    session.turn = turn;
    const sessionId = params.sessionId;
    const update = (u) => client.notify(v1.methods.client.session.update, { sessionId, update: u });
    await update({ sessionUpdate: "agent_message_chunk", content: text("ts_router_agent v1 got the prompt") });
    await sleep(CANCEL_WINDOW_MS, turn.signal);
    if (turn.signal.aborted) return { stopReason: "cancelled" };
    await update({ sessionUpdate: "tool_call", toolCallId: "call_1", title: "Think", kind: "think", status: "pending" });
    const answer = checked(v1, z1.zRequestPermissionResponse, await client.request(v1.methods.client.session.requestPermission, {
      sessionId, toolCall: { toolCallId: "call_1", title: "Think", kind: "think", status: "pending" }, options,
    }), "session/request_permission result");
    if (turn.signal.aborted || answer.outcome.outcome === "cancelled") return { stopReason: "cancelled" };
    const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow";
    await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: allowed ? "completed" : "failed", content: [{ type: "content", content: text("done") }] });
    await update({ sessionUpdate: "agent_message_chunk", content: text("done") });
    return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn" };
  })
  .onNotification(v1.methods.agent.session.cancel, ({ params }) => {
    v1Sessions.get(params.sessionId)?.turn?.abort();
  });

// -- v2 ------------------------------------------------------------------------------------------
const v2Sessions = new Map();
async function v2Turn(client, sessionId, turn) {
  const update = (u) => client.notify(v2.methods.client.session.update, { sessionId, update: u });
  const messageId = `ts2-msg-${randomUUID()}`;
  const idle = (stopReason) => update({ sessionUpdate: "state_update", state: "idle", stopReason });
  try {
    await update({ sessionUpdate: "state_update", state: "running" });
    await update({ sessionUpdate: "agent_message_chunk", messageId, content: text("ts_router_agent v2 got the prompt") });
    await sleep(CANCEL_WINDOW_MS, turn.signal);
    if (turn.signal.aborted) return idle("cancelled");
    await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", title: "Think", kind: "think", status: "pending" });
    const answer = checked(v2, z2.zRequestPermissionResponse, await client.request(v2.methods.client.session.requestPermission, {
      sessionId, title: "Think", subject: { type: "tool_call", toolCall: { toolCallId: "call_1" } }, options,
    }), "session/request_permission result");
    if (turn.signal.aborted || answer.outcome.outcome === "cancelled") return idle("cancelled");
    const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow";
    await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: allowed ? "completed" : "failed", content: [{ type: "content", content: text("done") }] });
    await update({ sessionUpdate: "agent_message_chunk", messageId, content: text("done") });
    return idle(turn.signal.aborted ? "cancelled" : "end_turn");
  } catch (error) {
    log(`v2 turn failed: ${error.message}`);
    return idle("cancelled");
  }
}

const v2App = v2.agent({ name: "ts_router_agent_v2" })
  .onRequest(v2.methods.agent.initialize, ({ params }) => {
    log(`routed v2 (requested ${params.protocolVersion})`);
    return { protocolVersion: 2, info: { name: "ts_router_agent", version: "0" }, capabilities: { session: {} } };
  })
  .onRequest(v2.methods.agent.session.new, () => {
    const sessionId = `ts2-${randomUUID()}`;
    v2Sessions.set(sessionId, { turn: null });
    return { sessionId };
  })
  .onRequest(v2.methods.agent.session.prompt, async ({ params, client }) => {
    const session = v2Sessions.get(params.sessionId);
    if (!session) throw v2.RequestError.sessionNotFound(params.sessionId);
    const messageId = `ts2-user-${randomUUID()}`;
    await client.notify(v2.methods.client.session.update, {
      sessionId: params.sessionId, update: { sessionUpdate: "user_message", messageId, content: params.prompt },
    });
    const turn = new AbortController();
    session.turn = turn;
    void v2Turn(client, params.sessionId, turn);
    return { messageId };
  })
  .onNotification(v2.methods.agent.session.cancel, ({ params }) => {
    v2Sessions.get(params.sessionId)?.turn?.abort();
  });

const stream = v2.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
let connection;
if (only === "v1") connection = v1App.connect(stream);
else if (only === "v2") connection = v2App.connect(stream);
else connection = v2.agentProtocolRouter().withV1(v1App).withV2(v2App).connect(stream);
await connection.closed;
log("input closed, exiting");
process.exit(0);
