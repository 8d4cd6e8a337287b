// The contract of issue #22 through the official TypeScript MCP SDK over
// Streamable HTTP, against a running server (cmd/sheaf's
// TestTypeScriptSDKContract runs it on a folder and on an S3 vault): the
// unknown-tool
// envelope, ingest_url (and its duplicate) and ingest_file, provenance on
// a search hit, the read audit, resources, prompts and completion.
//
//   SHEAF_HTTP_URL=… SHEAF_HTTP_TOKEN=… SHEAF_PAGE_URL=… node contract.mjs
//
// SHEAF_PAGE_URL is an HTML page the server may fetch (started with
// --ingest-allow for its address); its text holds the word "espalier".
// The last line of output is "N passed, M failed"; the exit code is
// non-zero when any check failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { assert, callTool, check, codeOf, results, sleep, textOf } from "./lib.mjs";

const url = process.env.SHEAF_HTTP_URL;
const token = process.env.SHEAF_HTTP_TOKEN;
const pageURL = process.env.SHEAF_PAGE_URL;

async function run(client) {
  await check("an unknown tool is a tool result of kind unsupported", async () => {
    const res = await callTool(client, "no_such_tool", {});
    assert(res.isError === true && res.kind === "unsupported" && res.reason === "unknown-tool",
      `got ${JSON.stringify(res).slice(0, 300)}`);
    return `kind=${res.kind}`;
  });

  let source; // the note ingest_url filed
  await check("ingest_url files the page under sources/ with its provenance; again is a duplicate", async () => {
    const first = await callTool(client, "ingest_url", { url: pageURL });
    assert(!first.isError, `isError: ${textOf(first)}`);
    const sc = first.structuredContent;
    assert(sc.path.startsWith("sources/") && sc.duplicate === false && sc.title === "Espalier guide", `first: ${JSON.stringify(sc)}`);
    const note = await callTool(client, "read_note", { path: sc.path });
    assert(!note.isError, `read_note ${sc.path}: ${textOf(note)}`);
    const fm = note.structuredContent.frontmatter;
    assert(typeof fm.source_url === "string" && fm.source_url.startsWith(new URL(pageURL).origin), `source_url ${JSON.stringify(fm.source_url)}`);
    assert(typeof fm.fetched_at === "string" && !Number.isNaN(Date.parse(fm.fetched_at)), `fetched_at ${JSON.stringify(fm.fetched_at)}`);
    assert(/^sha256:[0-9a-f]{64}$/.test(fm.content_hash), `content_hash ${JSON.stringify(fm.content_hash)}`);
    assert(note.structuredContent.content.includes("espalier"), "the note does not hold the page's text");
    const again = await callTool(client, "ingest_url", { url: pageURL });
    assert(!again.isError && again.structuredContent.duplicate === true && again.structuredContent.path === sc.path,
      `again: ${JSON.stringify(again.structuredContent ?? textOf(again))}`);
    source = { path: sc.path, sourceURL: fm.source_url };
    return sc.path;
  });

  await check("ingest_file with content_base64 files a source note", async () => {
    const content_base64 = Buffer.from("# Medlar notes\n\nMedlars are eaten bletted, in November.\n").toString("base64");
    const res = await callTool(client, "ingest_file", { name: "medlar.md", content_base64 });
    assert(!res.isError, `isError: ${textOf(res)}`);
    const sc = res.structuredContent;
    assert(sc.path.startsWith("sources/") && sc.duplicate === false && sc.content_type === "text/markdown", JSON.stringify(sc));
    const note = await callTool(client, "read_note", { path: sc.path });
    assert(!note.isError && note.structuredContent.frontmatter.source_file === "medlar.md" &&
      note.structuredContent.content.includes("bletted"), `read back: ${textOf(note).slice(0, 300)}`);
    return sc.path;
  });

  await check("a search hit carries its provenance (updated_at, source_url)", async () => {
    assert(source, "no ingested note");
    for (const deadline = Date.now() + 20000; ;) {
      const res = await callTool(client, "search", { query: "espalier" });
      assert(!res.isError, `isError: ${textOf(res)}`);
      const hit = (res.structuredContent.items ?? []).find((i) => i.path === source.path);
      if (hit) {
        assert(typeof hit.updated_at === "string" && !Number.isNaN(Date.parse(hit.updated_at)), `updated_at ${JSON.stringify(hit.updated_at)}`);
        assert(hit.source_url === source.sourceURL, `source_url ${JSON.stringify(hit.source_url)}, want ${source.sourceURL}`);
        assert(hit.is_stale === false, `is_stale ${JSON.stringify(hit.is_stale)}`);
        return `${hit.path} updated ${hit.updated_at}`;
      }
      if (Date.now() >= deadline) throw new Error(`no hit on ${source.path}: ${textOf(res).slice(0, 300)}`);
      await sleep(250);
    }
  });

  await check("read_note accepts agent_id and answers retrieval_count", async () => {
    const counts = [];
    for (let i = 0; i < 2; i++) {
      const res = await callTool(client, "read_note", { path: "Glossary.md", agent_id: "ts-sdk" });
      assert(!res.isError, `isError: ${textOf(res)}`);
      counts.push(res.structuredContent.retrieval_count);
    }
    assert(Number.isInteger(counts[0]) && counts[0] >= 1 && counts[1] === counts[0] + 1, `retrieval_count ${JSON.stringify(counts)}`);
    const long = await callTool(client, "read_note", { path: "Glossary.md", agent_id: "x".repeat(129) });
    assert(long.isError === true && long.kind === "args-invalid", `a 129-byte agent_id: ${JSON.stringify(long).slice(0, 300)}`);
    return `retrieval_count ${counts.join(" then ")}`;
  });

  await check("resources/list, resources/read of a note, of a missing note -32002", async () => {
    const uris = [];
    let cursor;
    for (let pages = 0; pages < 50; pages++) {
      const list = await client.listResources(cursor ? { cursor } : {});
      uris.push(...list.resources.map((r) => r.uri));
      cursor = list.nextCursor;
      if (!cursor) break;
    }
    const vault = uris[0]?.split("/")[2];
    const glossary = `sheaf://${vault}/Glossary.md`;
    assert(uris.includes(glossary), `no ${glossary} among ${uris.length} resources`);
    const read = await client.readResource({ uri: glossary });
    assert(read.contents.length === 1 && read.contents[0].mimeType === "text/markdown" && read.contents[0].text.includes("Glossary"),
      JSON.stringify(read).slice(0, 300));
    const missing = await codeOf(() => client.readResource({ uri: `sheaf://${vault}/No%20such%20note.md` }));
    assert(missing.code === -32002, `missing note: ${JSON.stringify(missing)}`);
    assert(!missing.message.includes("/tmp/") && !missing.message.includes("s3://"), `missing note message: ${missing.message}`);
    return `${uris.length} resources; missing ${missing.code}`;
  });

  await check("prompts/list and prompts/get", async () => {
    const list = await client.listPrompts();
    const names = list.prompts.map((p) => p.name);
    assert(names.includes("find_and_read") && names.includes("capture_source"), `prompts ${JSON.stringify(names)}`);
    const p = await client.getPrompt({ name: "find_and_read", arguments: { question: "When do we prune?", folder: "Projects" } });
    const text = p.messages[0]?.content?.text ?? "";
    assert(text.includes("When do we prune?") && text.includes('"Projects"'), `find_and_read: ${text.slice(0, 300)}`);
    return `${names.length} prompts`;
  });

  await check("completion of a path", async () => {
    const res = await client.complete({ ref: { type: "ref/resource", uri: "sheaf://{vault}/{+path}" }, argument: { name: "path", value: "proj" } });
    const values = res.completion.values;
    assert(values.length > 0 && values.every((v) => v.toLowerCase().includes("proj")), `values ${JSON.stringify(values)}`);
    return `${values.length} values, first ${values[0]}`;
  });
}

try {
  assert(url && pageURL, "set SHEAF_HTTP_URL and SHEAF_PAGE_URL");
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  const client = new Client({ name: "sheaf-smoke-s3", version: "0.0.0" });
  if (await check("connect + initialize", async () => {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
    return client.getServerVersion()?.version ?? "";
  })) {
    try {
      await run(client);
    } finally {
      await client.close().catch(() => {});
    }
  }
} catch (err) {
  results.failed++;
  console.log(`FAIL  run: ${err?.stack ?? err}`);
}
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed > 0 ? 1 : 0);
