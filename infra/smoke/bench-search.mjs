// Times `search` through the official TypeScript MCP SDK client, as a
// desktop client runs it: spawns `sheaf serve` over stdio on a vault,
// waits for the index, then runs N searches and prints the p50 and p95 of
// three ways of calling, each on the same queries:
//   callTool   what desktop clients call (validates structuredContent
//              against the tool's output schema)
//   request    the same call without that validation (CallToolResultSchema)
//   raw        the Zod parse skipped too: the response as the transport
//              delivers it (time spent in sheaf plus the pipe)
//   again      callTool repeating the search just made (served from the
//              server's ranking cache)
// and the mean size of a response (JSON bytes, and of its text copy).
//
//   SHEAF_BIN=bin/sheaf SHEAF_VAULT=/path/to/vault node bench-search.mjs
//
// Environment: SHEAF_BIN, SHEAF_VAULT (required), SHEAF_STATE (a --state
// folder, default a temporary one), SHEAF_BENCH_N (default 200).

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const bin = path.resolve(process.env.SHEAF_BIN ?? "bin/sheaf");
const vault = process.env.SHEAF_VAULT;
if (!vault) {
  console.error("set SHEAF_VAULT");
  process.exit(2);
}
const state = process.env.SHEAF_STATE ?? fs.mkdtempSync(path.join(os.tmpdir(), "sheaf-bench-state-"));
const n = Number(process.env.SHEAF_BENCH_N ?? 200);
const words = ["note", "project", "meeting", "idea", "research", "plan", "review", "design", "test", "data",
  "garden", "travel", "book", "music", "health", "budget", "team", "launch", "draft", "summary"];

const transport = new StdioClientTransport({
  command: bin,
  args: ["serve", "--vault", path.resolve(vault), "--state", state, "--no-watch", "--log-level", "error"],
  env: getDefaultEnvironment(),
  stderr: "inherit",
});
const client = new Client({ name: "sheaf-bench", version: "0.0.0" });
await client.connect(transport);
await client.listTools(); // as clients do: caches the output schemas callTool validates against

// Wait for the first index pass: an answer that says it is partial does not count.
for (const start = Date.now(); ; ) {
  const r = await client.callTool({ name: "get_vault_info", arguments: {} });
  const info = r.structuredContent ?? {};
  if (JSON.stringify(info).includes('"ready"') || Date.now() - start > 600000) break;
  await new Promise((res) => setTimeout(res, 200));
}

// The raw lane: the transport's messages, before the client parses them.
let rawId = 1 << 30;
const pending = new Map();
const onmessage = transport.onmessage;
transport.onmessage = (msg) => {
  if (msg.id !== undefined && pending.has(msg.id)) {
    pending.get(msg.id)(msg);
    pending.delete(msg.id);
    return;
  }
  onmessage?.(msg);
};
function raw(args) {
  const id = rawId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    transport.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "search", arguments: args } });
  });
}

const lanes = {
  callTool: (args) => client.callTool({ name: "search", arguments: args }),
  request: (args) => client.request({ method: "tools/call", params: { name: "search", arguments: args } }, CallToolResultSchema),
  raw,
};
const times = { callTool: [], request: [], raw: [], again: [] };
let bytes = 0, textBytes = 0;
// One lane after the other over the same queries: a pair of words comes
// back only after more other searches than the server's ranking cache
// keeps (8), so these three time searches not made before.
const query = (i) => ({ query: `${words[i % words.length]} ${words[(i * 7 + 3) % words.length]}` });
for (const [lane, call] of Object.entries(lanes)) {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await call(query(i));
    times[lane].push(performance.now() - t0);
    const res = r.result ?? r;
    if (res.isError) throw new Error(`search failed: ${JSON.stringify(res).slice(0, 300)}`);
    if (lane === "raw") {
      bytes += JSON.stringify(r).length;
      textBytes += (res.content ?? []).reduce((s, c) => s + (c.text?.length ?? 0), 0);
    }
  }
}
// again: callTool with the search just made, as when paging or asking the
// same thing twice (the ranking comes from the cache).
for (let i = 0; i < n; i++) {
  await lanes.callTool(query(i));
  const t0 = performance.now();
  await lanes.callTool(query(i));
  times.again.push(performance.now() - t0);
}
await client.close();

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};
for (const [lane, xs] of Object.entries(times)) {
  console.log(`${lane.padEnd(9)} p50 ${pct(xs, 50).toFixed(2)} ms  p95 ${pct(xs, 95).toFixed(2)} ms  (n=${xs.length})`);
}
console.log(`response ${Math.round(bytes / n)} bytes, of which text ${Math.round(textBytes / n)} bytes`);
