// End-to-end client for `helikon mcp`, written with the official TypeScript
// SDK (@modelcontextprotocol/sdk). The Go test TestTypeScriptSDKDrivesHelikonMCP
// runs it as
//
//   node e2e.mjs HELIKON_BINARY ARGS_JSON PLAN_JSON
//
// where ARGS_JSON is the argument list of the helikon binary and PLAN_JSON is
// {"elicit": "accept"|"decline"|"", "calls": [{"name", "arguments",
// "cancelOnProgress", "sleepArg"}]}: a call with cancelOnProgress is aborted
// at its first progress notification, and with sleepArg the script then
// checks (before closing the session) that no "sleep ARG" process is left.
// It prints one JSON object with what it saw; the Go test makes the
// assertions.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readdirSync, readFileSync } from 'node:fs';

// sleeping reports whether a process runs "sleep ARG".
function sleeping(arg) {
  const want = `sleep\0${arg}\0`;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1') === want) return true;
    } catch {}
  }
  return false;
}

// waitGone polls until no process runs "sleep ARG"; the deadline is a
// failure timeout, not a speed check.
async function waitGone(arg) {
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    if (!sleeping(arg)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

const [bin, argsJSON, planJSON] = process.argv.slice(2);
const plan = JSON.parse(planJSON);

const capabilities = plan.elicit ? { elicitation: { form: {} } } : {};
const client = new Client({ name: 'helikon-e2e', version: '1.0.0' }, { capabilities });
const elicitations = [];
if (plan.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push(req.params.message);
    return { action: plan.elicit, content: { approve: plan.elicit === 'accept' } };
  });
}

const transport = new StdioClientTransport({ command: bin, args: JSON.parse(argsJSON), stderr: 'inherit' });
await client.connect(transport);

const out = {
  server: client.getServerVersion(),
  tools: (await client.listTools()).tools,
  calls: [],
  elicitations,
};

for (const c of plan.calls) {
  const ac = new AbortController();
  let progress = 0;
  let sawSleep = false;
  const opts = { signal: ac.signal, timeout: 120000 };
  if (c.cancelOnProgress) {
    opts.onprogress = () => {
      progress++;
      // With sleepArg, cancel only once the sleep is seen running.
      if (c.sleepArg && !sleeping(c.sleepArg)) return;
      sawSleep = Boolean(c.sleepArg);
      ac.abort(new Error('cancelled by the test'));
    };
  }
  try {
    const result = await client.callTool({ name: c.name, arguments: c.arguments }, undefined, opts);
    out.calls.push({ result, progress });
  } catch (e) {
    out.calls.push({ error: String(e?.message ?? e), progress });
  }
  const last = out.calls[out.calls.length - 1];
  if (c.sleepArg) {
    last.sawSleep = sawSleep;
    last.sleepGone = await waitGone(c.sleepArg);
  }
}

await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
