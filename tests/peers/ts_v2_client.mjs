#!/usr/bin/env node
// ACP v2 client peer built on the official TypeScript SDK's v2 API
// (@agentclientprotocol/sdk/experimental/v2, app API).
//
//   node ts_v2_client.mjs [--cancel] [--all-methods] [--cwd DIR] AGENT_CMD [ARGS...]
//
// Spawns the agent, runs initialize (protocolVersion 2) -> session/new -> one session/prompt
// (text "read README.md", or $PEER_PROMPT), answers session/request_permission with the first
// allow option, collects session/update until an idle state_update, and prints ONE JSON line:
//   {"protocolVersion", "messageId", "stopReason", "updates": [sessionUpdate kinds, state_update as
//    "state_update:<state>"], "permissionRequests", "methods": {method: "ok" | error code}, "errors"}
// --cancel: sends session/cancel after the first agent_message_chunk; expects stopReason "cancelled"
//   on the idle state_update and the prompt still answered with its messageId.
// --all-methods: also auth/login, session/list, session/set_config_option before the prompt, and
//   tool_call/cancel, terminal/cancel (both expected -32602), session/resume (a state_update must
//   arrive before its answer), session/close, session/delete, auth/logout after it.
// Every message the agent sends is validated with the SDK's v2 zod schemas (params by method,
// results by the method of the request they answer); the SDK validates the params it receives.
// Exit 0 only if the stop reason is the expected one and "errors" is empty.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const zod = await import(new URL("../schema/zod.gen.js", import.meta.resolve("@agentclientprotocol/sdk/experimental/v2")).href);
const PARAMS = {
  "session/update": zod.zUpdateSessionNotification,
  "session/request_permission": zod.zRequestPermissionRequest,
  "elicitation/create": zod.zCreateElicitationRequest,
  "elicitation/complete": zod.zCompleteElicitationNotification,
  "$/cancel_request": zod.zCancelRequestNotification,
};
const RESULTS = {
  initialize: zod.zInitializeResponse,
  "auth/login": zod.zLoginAuthResponse,
  "auth/logout": zod.zLogoutAuthResponse,
  "session/new": zod.zNewSessionResponse,
  "session/list": zod.zListSessionsResponse,
  "session/resume": zod.zResumeSessionResponse,
  "session/close": zod.zCloseSessionResponse,
  "session/delete": zod.zDeleteSessionResponse,
  "session/set_config_option": zod.zSetSessionConfigOptionResponse,
  "session/prompt": zod.zPromptResponse,
  "tool_call/cancel": zod.zCancelToolCallResponse,
  "terminal/cancel": zod.zCancelTerminalResponse,
};
const JSONRPC_ERRORS = new Set([-32700, -32600, -32601, -32602, -32603]);

const args = process.argv.slice(2);
let cancelMode = false;
let allMethods = false;
let cwdArg = null;
while (args[0]?.startsWith("--")) {
  const flag = args.shift();
  if (flag === "--cancel") cancelMode = true;
  else if (flag === "--all-methods") allMethods = true;
  else if (flag === "--cwd") cwdArg = args.shift();
  else args.length = 0;
}
if (args.length === 0) {
  process.stderr.write("usage: ts_v2_client.mjs [--cancel] [--all-methods] [--cwd DIR] AGENT_CMD [ARGS...]\n");
  process.exit(2);
}

const summary = {
  protocolVersion: null, messageId: null, stopReason: null, updates: [], permissionRequests: 0, methods: {}, errors: [],
};
const errors = summary.errors;
const expected = cancelMode ? "cancelled" : "end_turn";
const trace = process.env.PEER_TRACE ? (dir, m) => process.stderr.write(`[ts_v2_client] ${dir} ${JSON.stringify(m)}\n`) : () => {};
const short = (v) => JSON.stringify(v).slice(0, 500);
let child = null;
let tempDir = null;

function finish() {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(summary) + "\n");
  process.exit(errors.length === 0 && summary.stopReason === expected ? 0 : 1);
}
const timeoutS = Number(process.env.PEER_TIMEOUT_S ?? 20);
setTimeout(() => {
  errors.push(`timeout: run did not finish within ${timeoutS} s`);
  child?.kill("SIGKILL");
  finish();
}, timeoutS * 1000).unref();

const consoleError = console.error;
console.error = (...parts) => {
  errors.push(`sdk: ${parts.map((p) => (typeof p === "string" ? p : short(p))).join(" ")}`);
  consoleError(...parts);
};

function check(schema, value, what) {
  const result = schema?.safeParse(value);
  if (result && !result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    errors.push(`invalid ${what}: ${issues.join("; ")}`);
  }
}

function tap(stream) {
  const sent = new Map();
  const received = new Map();
  const readable = stream.readable.pipeThrough(new TransformStream({
    transform(msg, controller) {
      trace("<-", msg);
      if ("method" in msg) {
        if ("id" in msg) received.set(msg.id, msg.method);
        if (!(msg.method in PARAMS) && !msg.method.startsWith("_")) errors.push(`unknown method from agent: ${msg.method}`);
        check(PARAMS[msg.method], msg.params ?? {}, `${msg.method} params`);
      } else if (!sent.has(msg.id)) {
        errors.push(`response with unknown id ${short(msg.id)}`);
      } else if ("result" in msg) {
        check(RESULTS[sent.get(msg.id)], msg.result, `${sent.get(msg.id)} result`);
      }
      controller.enqueue(msg);
    },
  }));
  const writable = new WritableStream({
    async write(msg) {
      trace("->", msg);
      if ("method" in msg && "id" in msg) sent.set(msg.id, msg.method);
      if (!("method" in msg) && JSONRPC_ERRORS.has(msg.error?.code)) {
        errors.push(`answered agent's ${received.get(msg.id)} with error ${short(msg.error)}`);
      }
      const writer = stream.writable.getWriter();
      try { await writer.write(msg); } finally { writer.releaseLock(); }
    },
  });
  return { readable, writable };
}

let cancelSent = false;
let onIdle = null; // resolves the current wait for an idle state_update
const app = acp.client({ name: "ts_v2_client" })
  .onNotification(acp.methods.client.session.update, ({ params, agent }) => {
    const u = params.update;
    summary.updates.push(u.sessionUpdate === "state_update" ? `state_update:${u.state}` : u.sessionUpdate);
    if (u.sessionUpdate === "state_update" && u.state === "idle") onIdle?.(u);
    if (cancelMode && !cancelSent && u.sessionUpdate === "agent_message_chunk") {
      cancelSent = true;
      agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId })
        .catch((e) => errors.push(`sending session/cancel failed: ${e.message}`));
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    summary.permissionRequests += 1;
    const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always");
    if (cancelSent || !allow) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

function waitIdle(ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { onIdle = null; resolve(null); }, ms);
    onIdle = (u) => { clearTimeout(timer); onIdle = null; resolve(u); };
  });
}

async function call(agent, method, params, expectCode) {
  try {
    const result = await agent.request(method, params);
    summary.methods[method] = "ok";
    if (expectCode !== undefined) errors.push(`${method}: expected error ${expectCode}, got ${short(result)}`);
    return result;
  } catch (e) {
    summary.methods[method] = e.code ?? e.message;
    if (e.code !== expectCode) errors.push(`${method}: ${e.name}: ${e.message}${e.data !== undefined ? ` ${short(e.data)}` : ""}`);
    return undefined;
  }
}

async function main() {
  let cwd = cwdArg && path.resolve(cwdArg);
  if (!cwd) {
    tempDir = await fs.mkdtemp(path.join(os.tmpdir(), "acp-peer-"));
    await fs.writeFile(path.join(tempDir, "README.md"), "# peer fixture\nhello from the ACP v2 peer client\n");
    cwd = tempDir;
  }
  child = spawn(args[0], args.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
    child.on("error", (e) => { errors.push(`cannot start agent: ${e.message}`); resolve({ code: null }); });
  });
  const stream = tap(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  try {
    await app.connectWith(stream, async (agent) => {
      const init = await agent.request(acp.methods.agent.initialize, {
        protocolVersion: 2, info: { name: "ts_v2_client", version: "0" }, capabilities: {},
      });
      summary.protocolVersion = init.protocolVersion;
      if (init.protocolVersion !== 2) errors.push(`agent answered protocolVersion ${short(init.protocolVersion)}`);
      if (allMethods && (init.authMethods ?? []).length > 0) {
        await call(agent, acp.methods.agent.auth.login, { methodId: init.authMethods[0].methodId });
      }
      const session = await agent.request(acp.methods.agent.session.new, { cwd });
      const sessionId = session.sessionId;
      if (allMethods) {
        const listed = await call(agent, acp.methods.agent.session.list, {});
        if (listed && !listed.sessions.some((s) => s.sessionId === sessionId)) errors.push("session/list misses the new session");
        const option = (session.configOptions ?? []).find((o) => o.type === "select");
        if (option) {
          const value = option.options.map((o) => o.value).find((v) => v !== option.currentValue) ?? option.currentValue;
          const set = await call(agent, acp.methods.agent.session.setConfigOption, {
            sessionId, configId: option.configId, type: "id", value,
          });
          if (set && set.configOptions.find((o) => o.configId === option.configId)?.currentValue !== value) {
            errors.push("session/set_config_option did not change the value");
          }
        }
      }
      const idle = waitIdle(timeoutS * 1000);
      const prompt = process.env.PEER_PROMPT ?? "read README.md";
      const response = await agent.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: "text", text: prompt }],
      });
      summary.messageId = response.messageId;
      const end = await idle;
      summary.stopReason = end?.stopReason ?? null;
      if (allMethods) {
        await call(agent, acp.methods.agent.toolCall.cancel, { sessionId, toolCallId: "call_1" }, -32602);
        await call(agent, acp.methods.agent.terminal.cancel, { sessionId, terminalId: "term_1" }, -32602);
        const before = summary.updates.length;
        await call(agent, acp.methods.agent.session.resume, { sessionId, cwd });
        if (!summary.updates.slice(before).some((u) => u.startsWith("state_update"))) {
          errors.push("session/resume answered before a state_update");
        }
        await call(agent, acp.methods.agent.session.close, { sessionId });
        await call(agent, acp.methods.agent.session.delete, { sessionId });
        if (summary.methods["auth/login"] === "ok") await call(agent, acp.methods.agent.auth.logout, {});
        const after = await call(agent, acp.methods.agent.session.list, {});
        if (after && after.sessions.some((s) => s.sessionId === sessionId)) errors.push("session/list still has the deleted session");
      }
      await new Promise((resolve) => setImmediate(resolve));
    });
  } catch (e) {
    errors.push(`${e.name}: ${e.message}${e.data !== undefined ? ` ${short(e.data)}` : ""}`);
  }
  if (!child.stdin.destroyed) child.stdin.end();
  const exit = await Promise.race([exited, new Promise((r) => setTimeout(r, 3000, null))]);
  if (exit === null) {
    errors.push("agent did not exit within 3 s of its stdin closing");
    child.kill("SIGKILL");
  } else if (exit.code !== 0 && exit.code !== null || exit.signal) {
    errors.push(`agent exited with ${exit.code ?? exit.signal}`);
  }
  finish();
}

await main();
