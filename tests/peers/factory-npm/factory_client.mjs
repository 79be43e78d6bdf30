// A client on acp-factory 0.1.14 (npm; a library over the TS SDK 0.18): registers the agent given on
// the command line as a custom agent, spawns it (permissionMode auto-approve, its own fs handlers),
// opens a session in --cwd and runs one prompt, optionally cancelling after the first update.
//
//     node factory_client.mjs [--cancel] --cwd DIR --prompt TEXT -- AGENT_CMD [ARGS...]
//
// Prints one JSON line: {"updates": [...sessionUpdate kinds], "errors": [...]} and exits 0 when it ran.
import { AgentFactory } from "acp-factory";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const options = argv.slice(0, split);
const [command, ...args] = argv.slice(split + 1);
const value = (name, fallback) => {
  const at = options.indexOf(name);
  return at >= 0 ? options[at + 1] : fallback;
};
const cancel = options.includes("--cancel");
const summary = { updates: [], errors: [] };

const timer = setTimeout(() => {
  summary.errors.push("timeout: the run did not finish within 60 s");
  console.log(JSON.stringify(summary));
  process.exit(1);
}, 60000);

try {
  AgentFactory.register("under-test", { command, args, env: {} });
  const agent = await AgentFactory.spawn("under-test", { permissionMode: "auto-approve" });
  try {
    const session = await agent.createSession(value("--cwd", process.cwd()));
    for await (const update of session.prompt(value("--prompt", "read README.md"))) {
      summary.updates.push(update.sessionUpdate);
      if (cancel && summary.updates.length === 1) {
        await session.cancel();
      }
    }
  } finally {
    await agent.close();
  }
} catch (error) {
  summary.errors.push(String(error && error.stack ? error.stack : error).slice(0, 2000));
}
clearTimeout(timer);
console.log(JSON.stringify(summary));
process.exit(0);
