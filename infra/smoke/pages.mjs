// Reads one note by pages with the official TypeScript MCP SDK and checks
// that the pages, concatenated, are the file byte for byte, and that the
// session survives (a call after the last page still answers).
//
//   node pages.mjs NOTE_PATH_IN_VAULT FILE_ON_DISK
//
// Environment: SHEAF_BIN, SHEAF_VAULT (served over stdio), or SHEAF_HTTP_URL
// (and SHEAF_HTTP_TOKEN) to use a running server over Streamable HTTP.
// Prints one JSON line: {pages, bytes, maxFrame, ok}; exits non-zero on a
// mismatch.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [notePath, filePath] = process.argv.slice(2);
const want = readFileSync(filePath);

let transport;
if (process.env.SHEAF_HTTP_URL) {
  const headers = process.env.SHEAF_HTTP_TOKEN ? { Authorization: `Bearer ${process.env.SHEAF_HTTP_TOKEN}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(process.env.SHEAF_HTTP_URL), { requestInit: { headers } });
} else {
  transport = new StdioClientTransport({
    command: process.env.SHEAF_BIN,
    args: ["serve", "--vault", process.env.SHEAF_VAULT, "--log-level", "warn"],
    env: getDefaultEnvironment(),
    stderr: "inherit",
  });
}
const client = new Client({ name: "sheaf-pages", version: "1" });
await client.connect(transport);

const parts = [];
let offset = 0;
let pages = 0;
let maxFrame = 0;
let hash = null;
for (;;) {
  const res = await client.callTool({ name: "read_note", arguments: { path: notePath, offset } }, undefined, { timeout: 120000 });
  if (res.isError) throw new Error(`read_note at ${offset}: ${JSON.stringify(res.content)}`);
  maxFrame = Math.max(maxFrame, Buffer.byteLength(JSON.stringify(res)));
  const sc = res.structuredContent;
  if (sc.offset !== offset) throw new Error(`page at ${offset} says offset ${sc.offset}`);
  if (hash !== null && sc.content_hash !== hash) throw new Error(`content_hash changed between pages`);
  hash = sc.content_hash;
  const text = JSON.parse(res.content[0].text);
  if (text.content !== sc.content) throw new Error(`text copy differs from structuredContent at ${offset}`);
  parts.push(Buffer.from(sc.content, "utf8"));
  pages++;
  if (sc.next_offset === null) break;
  if (sc.next_offset <= offset) throw new Error(`next_offset ${sc.next_offset} does not advance from ${offset}`);
  offset = sc.next_offset;
}
const got = Buffer.concat(parts);
const info = await client.callTool({ name: "get_vault_info", arguments: {} });
await client.close();
const ok = got.equals(want) && !info.isError;
console.log(JSON.stringify({ pages, bytes: got.length, want: want.length, maxFrame, ok }));
process.exit(ok ? 0 : 1);
