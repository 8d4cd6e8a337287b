// Smoke test of a built sheaf binary with the official TypeScript MCP SDK.
//
//   node smoke.mjs
//
// Environment:
//   SHEAF_BIN        server binary (default: ../../bin/sheaf beside this file)
//   SHEAF_VAULT      vault to serve over stdio (default: ../sample-vault)
//   SHEAF_HTTP_URL   also run the checks over Streamable HTTP against this URL
//                    (e.g. http://127.0.0.1:8787/mcp); the server must already run
//   SHEAF_HTTP_TOKEN bearer token for the HTTP endpoint, if it needs one
//   SHEAF_SMOKE_WAIT_MS how long to retry an empty search while the server
//                    indexes in the background (default 20000)
//
// The last line of output is "N passed, M failed"; the exit code is non-zero
// when any check failed.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { assert, callTool, check, codeOf, results, sleep, textOf } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = process.env.SHEAF_BIN
  ? path.resolve(process.env.SHEAF_BIN)
  : path.resolve(here, "../../bin/sheaf");
const vault = process.env.SHEAF_VAULT
  ? path.resolve(process.env.SHEAF_VAULT)
  : path.resolve(here, "../sample-vault");
const waitMs = Number(process.env.SHEAF_SMOKE_WAIT_MS ?? 20000);
const requiredTools = ["get_vault_info", "search", "read_note", "list_notes"];

// runChecks runs the same checks over one connected client.
async function runChecks(transportName, client) {
  const t = (label) => `[${transportName}] ${label}`;

  await check(t("tools/list has the core tools"), async () => {
    const names = new Set();
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const tool of page.tools) names.add(tool.name);
      cursor = page.nextCursor;
    } while (cursor);
    const missing = requiredTools.filter((n) => !names.has(n));
    assert(missing.length === 0, `missing tools: ${missing.join(", ")}`);
    return `${names.size} tools`;
  });

  await check(t("get_vault_info"), async () => {
    const res = await callTool(client, "get_vault_info", {});
    assert(!res.isError, `isError: ${textOf(res)}`);
    const info = res.structuredContent;
    assert(info && typeof info === "object", "no structuredContent");
    assert(typeof info.noteCount === "number", `noteCount is ${JSON.stringify(info.noteCount)}`);
    return `noteCount=${info.noteCount}`;
  });

  let hitPath;
  await check(t('search {query: "garden"}'), async () => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const res = await callTool(client, "search", { query: "garden" });
      assert(!res.isError, `isError: ${textOf(res)}`);
      const items = res.structuredContent?.items;
      assert(Array.isArray(items), "structuredContent.items is not an array");
      if (items.length > 0) {
        hitPath = items[0].path;
        assert(typeof hitPath === "string" && hitPath !== "", "first item has no path");
        return `${items.length} items, first ${hitPath}`;
      }
      // The handshake never waits for indexing: retry while the index fills.
      if (Date.now() >= deadline) throw new Error(`no items after ${waitMs} ms`);
      await sleep(250);
    }
  });

  await check(t("read_note on a search hit"), async () => {
    assert(hitPath, "no path from search");
    const res = await callTool(client, "read_note", { path: hitPath });
    assert(!res.isError, `isError: ${textOf(res)}`);
    const note = res.structuredContent;
    assert(note && typeof note.content === "string", "structuredContent.content is not a string");
    assert(note.content.length > 0, "content is empty");
    assert(note.path === hitPath, `path ${JSON.stringify(note.path)} != ${JSON.stringify(hitPath)}`);
    return `${note.content.length} chars`;
  });

  await check(t('read_note {path: "../etc/passwd"} is path-invalid'), async () => {
    const res = await callTool(client, "read_note", { path: "../etc/passwd" });
    assert(res.isError === true, `isError is ${JSON.stringify(res.isError)}`);
    const kind = res.kind; // the spec puts kind at the top level of the result
    assert(kind === "path-invalid", `kind is ${JSON.stringify(kind)}`);
    assert(!textOf(res).includes("root:"), "error text leaks file content");
    return `kind=${kind}`;
  });

  await check(t("an unknown tool is a tool result of kind unsupported"), async () => {
    const res = await callTool(client, "no_such_tool", {});
    assert(res.isError === true && res.kind === "unsupported" && res.reason === "unknown-tool",
      `got ${JSON.stringify(res).slice(0, 300)}`);
    return `kind=${res.kind}`;
  });

  await check(t("tools/call with a malformed name is JSON-RPC -32602"), async () => {
    let code;
    try {
      await client.request({ method: "tools/call", params: { name: 5 } }, CallToolResultSchema);
    } catch (err) {
      code = err?.code;
    }
    assert(code === -32602, `code ${code}`);
    return `code=${code}`;
  });

  await check(t("ingest_file files a source note under sources/"), async () => {
    const content_base64 = Buffer.from(`# Smoke source ${transportName}\n\nFiled by the TypeScript SDK.\n`).toString("base64");
    const res = await callTool(client, "ingest_file", { name: `smoke-${transportName}.md`, content_base64 });
    assert(!res.isError, `isError: ${textOf(res)}`);
    const sc = res.structuredContent;
    assert(sc.path.startsWith("sources/") && sc.duplicate === false && sc.content_type === "text/markdown", JSON.stringify(sc));
    const bad = await callTool(client, "ingest_file", { name: "x.md", content_base64: "!!" });
    assert(bad.isError === true && bad.kind === "args-invalid" && bad.reason === "base64-invalid", JSON.stringify(bad).slice(0, 300));
    return sc.path;
  });

  await check(t("resources/list, resources/read of a note, prompts/get"), async () => {
    const list = await client.listResources();
    const note = list.resources.find((r) => r.mimeType === "text/markdown");
    assert(note && note.uri.startsWith("sheaf://"), `no note resource: ${JSON.stringify(list).slice(0, 300)}`);
    const read = await client.readResource({ uri: note.uri });
    assert(read.contents.length === 1 && typeof read.contents[0].text === "string", JSON.stringify(read).slice(0, 300));
    const p = await client.getPrompt({ name: "capture_source", arguments: { url: "https://example.com/a" } });
    assert(p.messages[0].content.text.includes("ingest_url"), JSON.stringify(p).slice(0, 300));
    return `${list.resources.length} resources, read ${note.uri}`;
  });

  await check(t("resources/read and prompts/get errors carry their JSON-RPC codes"), async () => {
    const vault = (await client.listResources()).resources[0].uri.split("/")[2];
    // -32002, or -32602 for protocol 2026-07-28 and later (SEP-2164).
    const missing = await codeOf(() => client.readResource({ uri: `sheaf://${vault}/No%20such%20note.md` }));
    assert(missing.code === -32002 || missing.code === -32602, `missing note: ${JSON.stringify(missing)}`);
    assert(!missing.message.includes("sheaf-rpc") && !missing.message.includes("/tmp/"), `missing note message: ${missing.message}`);
    const dotdot = await codeOf(() => client.readResource({ uri: `sheaf://${vault}/Projects/../../x.md` }));
    assert(dotdot.code === -32602, `a .. path: ${JSON.stringify(dotdot)}`);
    const prompt = await codeOf(() => client.getPrompt({ name: "capture_source", arguments: {} }));
    assert(prompt.code === -32602, `a prompt without its argument: ${JSON.stringify(prompt)}`);
    return `missing ${missing.code}, .. ${dotdot.code}, prompt ${prompt.code}`;
  });

  await check(t("write_note, then read it back; again is note-exists; a stale overwrite is proposal-stale"), async () => {
    const path = "Smoke/Written by the TypeScript SDK.md";
    const content = "# Written\n\nby the TypeScript SDK\n";
    const w = await callTool(client, "write_note", { path, content });
    assert(!w.isError, `isError: ${textOf(w)}`);
    const r = await callTool(client, "read_note", { path });
    assert(!r.isError && r.structuredContent.content === content, `read back: ${textOf(r)}`);
    assert(r.structuredContent.content_hash === w.structuredContent.content_hash, "content_hash differs from the write's");
    const again = await callTool(client, "write_note", { path, content });
    assert(again.isError === true && again.kind === "note-exists", `again: ${JSON.stringify(again.kind)}`);
    const stale = await callTool(client, "write_note", { path, content: "x", mode: "overwrite", expected_hash: "0".repeat(64) });
    assert(stale.isError === true && stale.kind === "proposal-stale" && stale.current_hash === w.structuredContent.content_hash,
      `stale overwrite: ${JSON.stringify([stale.kind, stale.current_hash])}`);
    return `content_hash=${w.structuredContent.content_hash.slice(0, 12)}…`;
  });

  await check(t("note history: an overwrite in a transaction, its versions listed, the old one read back byte for byte, undone"), async () => {
    const path = "Smoke/History by the TypeScript SDK.md";
    const v1 = "# History\r\n\r\nfirst, café\r\n";
    const v2 = "# History\n\nsecond";
    const tx = `smoke-${transportName}-${Date.now()}`;
    const w1 = await callTool(client, "write_note", { path, content: v1 });
    assert(!w1.isError, `create: ${textOf(w1)}`);
    const w2 = await callTool(client, "write_note", { path, content: v2, mode: "overwrite", expected_hash: w1.structuredContent.content_hash, transaction_id: tx });
    assert(!w2.isError, `overwrite: ${textOf(w2)}`);
    const h = await callTool(client, "note_history", { path });
    const vs = h.structuredContent?.versions ?? [];
    assert(!h.isError && vs.length === 2 && vs[0].op === "overwrite" && vs[0].transaction_id === tx && vs[1].op === "write",
      `note_history: ${textOf(h).slice(0, 400)}`);
    const old = await callTool(client, "read_note", { path, version: vs[1].id });
    assert(!old.isError && old.structuredContent.content === v1, `read_note version: ${textOf(old).slice(0, 300)}`);
    const undo = await callTool(client, "undo_transaction", { transaction: tx });
    assert(!undo.isError, `undo_transaction: ${textOf(undo)}`);
    const now = await callTool(client, "read_note", { path });
    assert(now.structuredContent.content === v1, `after undo: ${JSON.stringify(now.structuredContent.content)}`);
    return `${vs.length} versions, undone`;
  });

  // A call the client cancels (its signal aborts: the SDK sends
  // notifications/cancelled) must leave the session working.
  await check(`[${transportName}] cancel a long await_directives, then call again`, async () => {
    const started = Date.now();
    let aborted = false;
    try {
      await client.callTool({ name: "await_directives", arguments: { cursor: 1, timeout_ms: 20000 } }, undefined,
        { signal: AbortSignal.timeout(300) });
    } catch (err) {
      aborted = true;
    }
    assert(aborted, "the cancelled await_directives did not fail");
    const took = Date.now() - started;
    assert(took < 5000, `the cancelled call took ${took} ms to return`);
    for (let i = 0; i < 2; i++) {
      const res = await callTool(client, "get_vault_info", {});
      assert(!res.isError && res.structuredContent?.noteCount > 0, `call ${i + 1} after the cancel: ${JSON.stringify(res).slice(0, 200)}`);
    }
    return `returned after ${took} ms; the session still answers`;
  });
}

// withClient connects a fresh client over transport, runs the checks and
// always closes the transport.
async function withClient(transportName, transport) {
  const client = new Client({ name: "sheaf-smoke", version: "0.0.0" });
  const connected = await check(`[${transportName}] connect + initialize`, async () => {
    await client.connect(transport);
    const server = client.getServerVersion();
    return server ? `${server.name} ${server.version}` : "";
  });
  try {
    if (connected) await runChecks(transportName, client);
  } finally {
    await client.close().catch(() => {});
  }
}

async function main() {
  console.log(`sheaf: ${bin}`);
  console.log(`vault: ${vault}`);
  await withClient(
    "stdio",
    new StdioClientTransport({
      command: bin,
      args: ["serve", "--vault", vault],
      // Pass SHEAF_* settings through; the SDK's default keeps only a safe few.
      env: {
        ...getDefaultEnvironment(),
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("SHEAF_"))),
      },
      stderr: "inherit",
    }),
  );

  const url = process.env.SHEAF_HTTP_URL;
  if (url) {
    const token = process.env.SHEAF_HTTP_TOKEN;
    const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
    await withClient("http", new StreamableHTTPClientTransport(new URL(url), { requestInit }));
    // The envelopes the SDK client cannot send: raw JSON-RPC.
    await check("[http] a request without a method is JSON-RPC -32600", async () => {
      const res = await fetch(url, {
        method: "POST",
        headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2 }),
      });
      const body = await res.json();
      assert(body?.error?.code === -32600 && body.id === 2, `${res.status} ${JSON.stringify(body)}`);
      return `code=${body.error.code}`;
    });
  } else {
    console.log("skip  [http] SHEAF_HTTP_URL is not set");
  }
}

try {
  await main();
} catch (err) {
  results.failed++;
  console.log(`FAIL  smoke run: ${err?.stack ?? err}`);
}
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed > 0 ? 1 : 0);
