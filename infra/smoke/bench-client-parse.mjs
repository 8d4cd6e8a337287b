// Times what the official TypeScript SDK client does with one `search`
// response once it has arrived, step by step: JSON.parse of the line, the
// transport's JSON-RPC parse, the CallToolResultSchema parse (Zod) and the
// output-schema validation (AJV, compiled once at listTools), each the
// mean of many repeats on the same response. It shows how much of a call
// the response's size and shape cost the client (see docs/benchmarks.md).
//
//   SHEAF_BIN=bin/sheaf SHEAF_VAULT=/path/to/vault SHEAF_STATE=/path node bench-client-parse.mjs [query]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const vault = process.env.SHEAF_VAULT;
if (!vault || !fs.existsSync(vault)) {
  console.error("set SHEAF_VAULT to a vault folder");
  process.exit(2);
}
const state = process.env.SHEAF_STATE ?? fs.mkdtempSync(path.join(os.tmpdir(), "sheaf-bench-state-"));
const transport = new StdioClientTransport({
  command: path.resolve(process.env.SHEAF_BIN ?? "bin/sheaf"),
  args: ["serve", "--vault", path.resolve(vault), "--state", state, "--no-watch", "--log-level", "error"],
  env: getDefaultEnvironment(),
  stderr: "inherit",
});
const client = new Client({ name: "sheaf-bench-parse", version: "0.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const schema = tools.find((t) => t.name === "search").outputSchema;
for (const start = Date.now(); ; ) { // wait for the first index pass
  const r = await client.callTool({ name: "get_vault_info", arguments: {} });
  if (JSON.stringify(r.structuredContent ?? {}).includes('"ready"') || Date.now() - start > 600000) break;
  await new Promise((res) => setTimeout(res, 200));
}
const res = await client.request({ method: "tools/call", params: { name: "search", arguments: { query: process.argv[2] ?? "note project" } } }, CallToolResultSchema);
await client.close();

const line = JSON.stringify({ jsonrpc: "2.0", id: 5, result: res });
const validate = new AjvJsonSchemaValidator().getValidator(schema);
function time(name, f, n = 2000) {
  for (let i = 0; i < 200; i++) f();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f();
  console.log(`${name.padEnd(40)} ${(((performance.now() - t0) / n) * 1000).toFixed(1)} µs`);
}
console.log(`response ${line.length} bytes, ${res.structuredContent.items.length} hits, text copy ${res.content[0].text.length} bytes`);
time("JSON.parse of the line", () => JSON.parse(line));
time("the transport's parse (JSON + JSON-RPC)", () => JSONRPCMessageSchema.parse(JSON.parse(line)));
time("CallToolResultSchema.parse (Zod)", () => CallToolResultSchema.parse(res));
time("output schema validation (AJV)", () => validate(res.structuredContent));
