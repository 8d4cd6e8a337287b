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
//   new-words  callTool with two words of the vault not searched before in
//              the run (common ones: its most frequent words after the
//              bench's own), so nothing the server caches can serve it: a
//              search of words the server has not seen since it started or
//              since the vault last changed
// with, for each, the mean CPU time a call cost the server (its threads'
// time from /proc, Linux only) and this client (process.cpuUsage), and the
// mean size of a response (JSON bytes, and of its text copy). The first
// three lanes take turns over the queries, so a busy moment of a shared
// machine hits them alike.
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
if (!fs.existsSync(vault)) {
  console.error(`no vault at ${vault}: make bench-search generates one (sheaf gen ${vault} --notes 10000)`);
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
const names = Object.keys(lanes);
const times = { callTool: [], request: [], raw: [], again: [], "new-words": [] };
const cpu = { client: {}, server: {} }; // CPU ms summed per lane
for (const lane of [...names, "again", "new-words"]) cpu.client[lane] = cpu.server[lane] = 0;

// serverCPU is the CPU time (ms) the server's threads have used so far:
// what a call costs in the server, whatever else the machine is doing.
const serverPid = transport.pid;
function serverCPU() {
  let ns = 0;
  try {
    for (const t of fs.readdirSync(`/proc/${serverPid}/task`)) {
      try {
        ns += Number(fs.readFileSync(`/proc/${serverPid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
      } catch {} // a thread that just ended
    }
  } catch {
    return NaN; // no /proc (not Linux)
  }
  return ns / 1e6;
}
// timed runs one call, adding its wall time and the client's and the
// server's CPU time to lane's figures.
async function timed(lane, call, args) {
  const s0 = serverCPU();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await call(args);
  times[lane].push(performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu.client[lane] += (c.user + c.system) / 1000;
  cpu.server[lane] += serverCPU() - s0;
  return r;
}

let bytes = 0, textBytes = 0;
// The lanes take turns over the same queries (so that a busy moment of a
// shared machine hits them alike): query i goes to lane i % 3. A pair of
// words comes back only after 20 other searches, more than the server's
// ranking cache keeps (8), so these three time searches not made just before.
const query = (i) => ({ query: `${words[i % words.length]} ${words[(i * 7 + 3) % words.length]}` });
for (let i = 0; i < n * names.length; i++) {
  const lane = names[i % names.length];
  const r = await timed(lane, lanes[lane], query(i));
  const res = r.result ?? r;
  if (res.isError) throw new Error(`search failed: ${JSON.stringify(res).slice(0, 300)}`);
  if (lane === "raw") {
    bytes += JSON.stringify(r).length;
    textBytes += (res.content ?? []).reduce((s, c) => s + (c.text?.length ?? 0), 0);
  }
}
// again: callTool with the search just made, as when paging or asking the
// same thing twice (the ranking comes from the cache).
for (let i = 0; i < n; i++) {
  await lanes.callTool(query(i));
  await timed("again", lanes.callTool, query(i));
}
// new-words: pairs of the vault's most frequent words after the bench's
// own, each searched once.
const counts = new Map();
let files = 0;
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (files >= 2000 || e.name.startsWith(".")) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith(".md")) {
      files++;
      const seen = new Set(fs.readFileSync(p, "utf8").toLowerCase().match(/[a-z]{4,}/g) ?? []);
      for (const w of seen) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
})(path.resolve(vault));
const fresh = [...counts.entries()].filter(([w]) => !words.some((b) => w.startsWith(b) || b.startsWith(w)))
  .sort((a, b) => b[1] - a[1]).map(([w]) => w);
const prefixed = (w, i) => fresh.slice(0, i).some((o) => w.startsWith(o) || o.startsWith(w));
const unique = fresh.filter((w, i) => !prefixed(w, i)).slice(0, 2 * n); // bare words match as prefixes
for (let i = 0; i + 1 < unique.length; i += 2) {
  await timed("new-words", lanes.callTool, { query: `${unique[i]} ${unique[i + 1]}` });
}
await client.close();

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};
for (const [lane, xs] of Object.entries(times)) {
  const per = (ms) => (ms / xs.length).toFixed(2);
  console.log(`${lane.padEnd(9)} p50 ${pct(xs, 50).toFixed(2)} ms  p95 ${pct(xs, 95).toFixed(2)} ms  ` +
    `CPU per call: server ${per(cpu.server[lane])} ms, client ${per(cpu.client[lane])} ms  (n=${xs.length})`);
}
console.log(`response ${Math.round(bytes / n)} bytes, of which text ${Math.round(textBytes / n)} bytes`);
