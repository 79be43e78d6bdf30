#!/usr/bin/env node
// ACP v1 client peer built on the official TypeScript SDK (@agentclientprotocol/sdk, app API).
//
//   node ts_client.mjs [--cancel] [--cwd DIR] AGENT_CMD [ARGS...]
//
// Spawns the agent, runs initialize -> session/new -> one session/prompt (text "read README.md",
// or $PEER_PROMPT), answers session/request_permission with the first allow option and
// fs/read_text_file from the real file (-32002 if missing), and prints ONE JSON line:
//   {"stopReason", "updates": [sessionUpdate kinds], "permissionRequests", "fsReads", "errors"}
// --cancel: sends session/cancel after the first session/update and expects "cancelled".
// Without --cwd the session cwd is a fresh temp dir holding a README.md (removed afterwards).
// Exit 0 only if the stop reason is the expected one and "errors" is empty.
// PEER_TRACE=1 logs every message to stderr; PEER_TIMEOUT_S (default 20) bounds the whole run.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

// The SDK validates the params of requests/notifications it receives with its generated zod
// schemas, but not the results of its own requests. We run the same schemas over every message
// the agent sends. They are not in the export map; load them next to the resolved entry point.
const zod = await import(new URL("../schema/zod.gen.js", import.meta.resolve("@agentclientprotocol/sdk")).href);
const PARAMS = {
  "session/update": zod.zSessionNotification,
  "session/request_permission": zod.zRequestPermissionRequest,
  "fs/read_text_file": zod.zReadTextFileRequest,
  "fs/write_text_file": zod.zWriteTextFileRequest,
};
const RESULTS = {
  initialize: zod.zInitializeResponse,
  "session/new": zod.zNewSessionResponse,
  "session/prompt": zod.zPromptResponse,
};
const JSONRPC_ERRORS = new Set([-32700, -32600, -32601, -32602, -32603]);

const args = process.argv.slice(2);
let cancelMode = false;
let cwdArg = null;
while (args[0]?.startsWith("--")) {
  const flag = args.shift();
  if (flag === "--cancel") cancelMode = true;
  else if (flag === "--cwd") cwdArg = args.shift();
  else args.length = 0;
}
if (args.length === 0) {
  process.stderr.write("usage: ts_client.mjs [--cancel] [--cwd DIR] AGENT_CMD [ARGS...]\n");
  process.exit(2);
}

const summary = { stopReason: null, updates: [], permissionRequests: 0, fsReads: [], errors: [] };
const errors = summary.errors;
const expected = cancelMode ? "cancelled" : "end_turn";
const trace = process.env.PEER_TRACE ? (dir, m) => process.stderr.write(`[ts_client] ${dir} ${JSON.stringify(m)}\n`) : () => {};
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

// Whatever the SDK itself reports (notifications failing validation, invalid messages,
// responses to unknown ids) goes to console.error; count each report as an error.
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

// Sits between ndJsonStream and the SDK: validates what comes in, notes what goes out.
function tap(stream) {
  const sent = new Map(); // our request id -> method
  const received = new Map(); // agent's request id -> method
  const readable = stream.readable.pipeThrough(new TransformStream({
    transform(msg, controller) {
      trace("<-", msg);
      if ("method" in msg) {
        if ("id" in msg) received.set(msg.id, msg.method);
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
const app = acp.client({ name: "ts_client" })
  .onNotification(acp.methods.client.session.update, ({ params, agent }) => {
    summary.updates.push(params.update.sessionUpdate);
    if (cancelMode && !cancelSent) {
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
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    summary.fsReads.push(params.path);
    let content;
    try {
      content = await fs.readFile(params.path, "utf8");
    } catch (e) {
      if (e.code === "ENOENT") throw acp.RequestError.resourceNotFound(params.path);
      throw acp.RequestError.internalError({ details: e.message });
    }
    if (params.line != null || params.limit != null) {
      const start = Math.max((params.line ?? 1) - 1, 0);
      const lines = content.split(/(?<=\n)/);
      content = lines.slice(start, params.limit != null ? start + params.limit : undefined).join("");
    }
    return { content };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    await fs.writeFile(params.path, params.content, "utf8");
    return {};
  });

async function main() {
  let cwd = cwdArg && path.resolve(cwdArg);
  if (!cwd) {
    tempDir = await fs.mkdtemp(path.join(os.tmpdir(), "acp-peer-"));
    await fs.writeFile(path.join(tempDir, "README.md"), "# peer fixture\nhello from the ACP peer client\n");
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
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
        clientInfo: { name: "ts_client", version: "0" },
      });
      if (init.protocolVersion !== 1) errors.push(`agent answered protocolVersion ${short(init.protocolVersion)}`);
      const session = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      const prompt = process.env.PEER_PROMPT ?? "read README.md";
      const response = await agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: prompt }],
      });
      await new Promise((resolve) => setImmediate(resolve)); // let queued update handlers run
      summary.stopReason = response.stopReason;
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
