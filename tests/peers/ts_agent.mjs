#!/usr/bin/env node
// ACP v1 agent peer built on the official TypeScript SDK (@agentclientprotocol/sdk, app API).
// Speaks newline-delimited JSON-RPC on stdin/stdout; logs only to stderr.
//
// One prompt turn: agent_message_chunk, tool_call (pending), session/request_permission,
// fs/read_text_file (only if the client advertised fs.readTextFile), tool_call_update
// (completed or failed, with content), agent_message_chunk with what was read (or the error),
// stopReason "end_turn". A session/cancel during the turn makes it return "cancelled"; the
// turn waits CANCEL_WINDOW_MS after the first chunk so that a cancel can land.
// The file read is "README.md" in the session cwd, or X if the prompt text is "read X".
import { randomUUID } from "node:crypto";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

// The SDK parses incoming request/notification params with its generated zod schemas but does not
// validate the *responses* it receives, so the agent checks those with the same schemas.
// They are not in the package's export map; load them next to the resolved entry point.
const sdkEntry = import.meta.resolve("@agentclientprotocol/sdk");
const zod = await import(new URL("../schema/zod.gen.js", sdkEntry).href);

const TIMEOUT_MS = Number(process.env.PEER_TIMEOUT_S ?? 120) * 1000;
const CANCEL_WINDOW_MS = 200;
const log = (...parts) => process.stderr.write(`[ts_agent] ${parts.join(" ")}\n`);

setTimeout(() => {
  log(`no end of input after ${TIMEOUT_MS} ms, exiting`);
  process.exit(3);
}, TIMEOUT_MS).unref();

let clientCapabilities = {};
const sessions = new Map(); // sessionId -> { cwd, turn: AbortController | null }

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

function checked(schema, value, what) {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw acp.RequestError.internalError({ details: `invalid ${what} from client: ${issues}` });
  }
  return result.data;
}

async function runTurn({ params, client }) {
  const session = sessions.get(params.sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
  const turn = new AbortController();
  session.turn = turn;
  const cancelled = () => turn.signal.aborted;
  const sessionId = params.sessionId;
  const update = (u) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
  const text = (t) => ({ type: "text", text: t });

  const promptText = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ").trim();
  const file = /^read\s+(\S+)/.exec(promptText)?.[1] ?? "README.md";
  const target = path.resolve(session.cwd, file);

  await update({ sessionUpdate: "agent_message_chunk", content: text(`ts_agent got: ${promptText}`) });
  await sleep(CANCEL_WINDOW_MS, turn.signal);
  if (cancelled()) return { stopReason: "cancelled" };

  const toolCallId = "call_1";
  await update({
    sessionUpdate: "tool_call", toolCallId, title: `Read ${file}`, kind: "read", status: "pending",
    locations: [{ path: target }], rawInput: { path: target },
  });

  const permission = checked(zod.zRequestPermissionResponse, await client.request(
    acp.methods.client.session.requestPermission,
    {
      sessionId,
      toolCall: { toolCallId, title: `Read ${file}`, kind: "read", status: "pending" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    },
  ), "session/request_permission result");
  if (cancelled() || permission.outcome.outcome === "cancelled") return { stopReason: "cancelled" };

  let status = "completed";
  let body;
  if (permission.outcome.outcome !== "selected" || permission.outcome.optionId !== "allow") {
    status = "failed";
    body = `permission denied (${JSON.stringify(permission.outcome)})`;
  } else if (!clientCapabilities.fs?.readTextFile) {
    status = "failed";
    body = "client did not advertise fs.readTextFile";
  } else {
    let read;
    try {
      read = await client.request(acp.methods.client.fs.readTextFile, { sessionId, path: target });
    } catch (error) {
      if (!(error instanceof acp.RequestError)) throw error; // e.g. connection closed
      status = "failed";
      body = `read failed: ${error.code} ${error.message}`;
    }
    if (read !== undefined) body = checked(zod.zReadTextFileResponse, read, "fs/read_text_file result").content;
  }
  if (cancelled()) return { stopReason: "cancelled" };

  await update({
    sessionUpdate: "tool_call_update", toolCallId, status,
    content: [{ type: "content", content: text(body) }],
  });
  await update({ sessionUpdate: "agent_message_chunk", content: text(`${file}: ${body}`) });
  return { stopReason: cancelled() ? "cancelled" : "end_turn" };
}

const app = acp.agent({ name: "ts_agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    clientCapabilities = params.clientCapabilities ?? {};
    return {
      protocolVersion: 1,
      agentCapabilities: { loadSession: false },
      agentInfo: { name: "ts_agent", version: "0" },
      authMethods: [],
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = `ts-${randomUUID()}`;
    sessions.set(sessionId, { cwd: params.cwd, turn: null });
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async (ctx) => {
    try {
      return await runTurn(ctx);
    } finally {
      const session = sessions.get(ctx.params.sessionId);
      if (session) session.turn = null;
    }
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log(`session/cancel for ${params.sessionId}`);
    sessions.get(params.sessionId)?.turn?.abort();
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
log("input closed, exiting");
process.exit(0);
