// Sheaf's built-in OAuth authorization server, end to end, with the
// official TypeScript MCP SDK as the client (what claude.ai does, with this
// script submitting the consent form as the vault's owner would):
//
//   discovery (a 401 naming the protected resource metadata, then the
//   authorization server's metadata), dynamic client registration, the
//   consent form (owner key, read scope, one folder), the token (PKCE),
//   tool calls within the approved folder only, a refresh (the SDK's own,
//   after its access token is refused), revocation, and a 401 with
//   resource_metadata afterwards. With SHEAF_CIMD_URL set, the same with a
//   client identified by its metadata document instead of registering.
//
//   SHEAF_HTTP_URL=http://127.0.0.1:PORT/mcp SHEAF_OWNER_KEY=sheaf_... \
//   SHEAF_FOLDER=Projects [SHEAF_CIMD_URL=https://...] node oauth-builtin.mjs
//
// A Go test (cmd/sheaf, functions/mcp) starts the server and runs this
// script. The last line is "N passed, M failed"; the exit code is non-zero
// when any check failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const url = new URL(process.env.SHEAF_HTTP_URL ?? "");
const ownerKey = process.env.SHEAF_OWNER_KEY ?? "";
const folder = process.env.SHEAF_FOLDER ?? "Projects";
const cimdUrl = process.env.SHEAF_CIMD_URL ?? "";
const question = process.env.SHEAF_QUESTION ?? "";
const redirectUrl = "https://claude.ai/api/mcp/auth_callback";

let passed = 0;
let failed = 0;

async function check(label, fn) {
  try {
    const detail = await fn();
    passed++;
    console.log(`ok    ${label}${detail ? ` (${detail})` : ""}`);
  } catch (err) {
    failed++;
    console.log(`FAIL  ${label}: ${err?.stack ?? err}`);
  }
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

function recordingFetch(log) {
  return async (input, init) => {
    const res = await fetch(input, init);
    log.push({
      url: String(input instanceof Request ? input.url : input),
      method: init?.method ?? "GET",
      status: res.status,
      wwwAuthenticate: res.headers.get("www-authenticate"),
    });
    return res;
  };
}

// consent plays the vault's owner: it opens the authorization URL, reads
// the consent page and submits it with the owner key, read access and one
// folder, and returns the code the redirect carries.
async function consent(authUrl) {
  const page = await fetch(authUrl, { redirect: "manual" });
  const html = await page.text();
  assert(page.status === 200, `consent page: ${page.status} ${html.slice(0, 300)}`);
  assert(/frame-ancestors 'none'/.test(page.headers.get("content-security-policy") ?? ""), "consent page can be framed");
  const request = /name="request" value="([0-9a-f]+)"/.exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const cookie = (page.headers.getSetCookie?.() ?? [page.headers.get("set-cookie")]).map((c) => c.split(";")[0]).join("; ");
  assert(request && csrf && cookie.includes("sheaf_csrf_"), "no form fields or cookie on the consent page");
  const form = new URLSearchParams({ request, csrf, owner_key: ownerKey, scope: "read", folders: `${folder}/**`, action: "approve" });
  const origin = new URL(authUrl).origin;
  const res = await fetch(new URL("authorize", authUrl), {
    method: "POST", redirect: "manual", body: form,
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin },
  });
  assert(res.status === 303, `consent: ${res.status} ${(await res.text()).slice(0, 300)}`);
  const back = new URL(res.headers.get("location"));
  assert(back.href.startsWith(redirectUrl), `answered at ${back.href}`);
  assert(back.searchParams.get("state") === "builtin-state", "state not echoed");
  assert(back.searchParams.get("iss") === origin + new URL(authUrl).pathname.replace(/\/oauth\/authorize$/, ""), `iss ${back.searchParams.get("iss")}`);
  return back.searchParams.get("code");
}

// provider is an OAuthClientProvider whose "browser" is consent().
function provider(metadataUrl) {
  const box = { tokens: undefined };
  let client, verifier, discovery;
  const p = {
    box,
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() {
      return { client_name: "sheaf-builtin-smoke", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"], token_endpoint_auth_method: "none" };
    },
    state: () => "builtin-state",
    clientInformation: () => client,
    saveClientInformation: (c) => { client = c; },
    tokens: () => box.tokens,
    saveTokens: (t) => { box.tokens = t; },
    saveCodeVerifier: (v) => { verifier = v; },
    codeVerifier: () => verifier,
    discoveryState: () => discovery,
    saveDiscoveryState: (d) => { discovery = d; },
    async redirectToAuthorization(authUrl) {
      assert(authUrl.searchParams.get("resource") === url.href, `resource indicator ${authUrl.searchParams.get("resource")}`);
      assert(authUrl.searchParams.get("code_challenge_method") === "S256", "no S256 PKCE");
      box.code = await consent(authUrl);
    },
  };
  if (metadataUrl) p.clientMetadataUrl = metadataUrl;
  return p;
}

// connect runs the SDK's flow: a 401, authorization, then a session.
async function connect(p, log) {
  let transport = new StreamableHTTPClientTransport(url, { authProvider: p, fetch: recordingFetch(log) });
  let client = new Client({ name: "sheaf-builtin-smoke", version: "1" });
  try {
    await client.connect(transport);
    throw new Error("connected without authorizing");
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  assert(p.box.code, "no authorization code");
  await transport.finishAuth(p.box.code);
  transport = new StreamableHTTPClientTransport(url, { authProvider: p, fetch: recordingFetch(log) });
  client = new Client({ name: "sheaf-builtin-smoke", version: "1" });
  await client.connect(transport);
  return client;
}

// withinFolder checks that the session sees and reads only the folder.
async function withinFolder(client) {
  const notes = await client.callTool({ name: "list_notes", arguments: { limit: 500 } });
  assert(!notes.isError, `list_notes: ${JSON.stringify(notes)}`);
  const paths = (notes.structuredContent?.items ?? []).map((n) => n.path);
  assert(paths.length > 0, "list_notes: nothing in the approved folder");
  assert(paths.every((p) => p.startsWith(`${folder}/`)), `list_notes outside ${folder}/: ${paths.filter((p) => !p.startsWith(`${folder}/`))}`);
  const inside = await client.callTool({ name: "read_note", arguments: { path: paths[0] } });
  assert(!inside.isError, `read_note inside: ${JSON.stringify(inside)}`);
  const outside = await client.callTool({ name: "read_note", arguments: { path: "Glossary.md" } });
  assert(outside.isError && outside.kind === "folder-not-allowed", `read_note outside: ${JSON.stringify(outside)}`);
  const write = await client.callTool({ name: "write_note", arguments: { path: `${folder}/new.md`, content: "x", mode: "create" } });
  assert(write.isError && write.kind === "insufficient-scope", `write_note with read: ${JSON.stringify(write)}`);
  let asked = "";
  if (question) {
    // What a person's question becomes: a search, answered from the folder.
    const res = await client.callTool({ name: "search", arguments: { query: question } });
    const hits = (res.structuredContent?.items ?? []).map((h) => h.path);
    assert(!res.isError && hits.length > 0, `search ${question}: ${JSON.stringify(res)}`);
    assert(hits.every((p) => p.startsWith(`${folder}/`)), `search ${question} outside ${folder}/: ${hits}`);
    asked = `; "${question}" found ${hits[0]}`;
  }
  return `${paths.length} notes, all under ${folder}/${asked}`;
}

async function rawCall(token) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
}

async function asMetadata() {
  const res = await fetch(new URL("/.well-known/oauth-authorization-server", url));
  return res.json();
}

let dcr;
await check("registration: 401 -> metadata -> register -> consent -> token -> tools within the folder", async () => {
  const log = [];
  dcr = provider();
  const client = await connect(dcr, log);
  const first = log.find((e) => e.url === url.href);
  assert(first?.status === 401 && /resource_metadata="[^"]+"/.test(first.wwwAuthenticate ?? ""), `first call: ${first?.status} ${first?.wwwAuthenticate}`);
  assert(log.some((e) => e.url.includes("/.well-known/oauth-authorization-server") && e.status === 200), "no authorization server metadata");
  assert(log.some((e) => e.url.endsWith("/oauth/register") && e.status === 201), "no dynamic client registration");
  assert(log.some((e) => e.url.endsWith("/oauth/token") && e.status === 200), "no token");
  const detail = await withinFolder(client);
  await client.close();
  return detail;
});

await check("refresh: a refused access token makes the SDK refresh, rotating the refresh token", async () => {
  const old = dcr.box.tokens;
  assert(old?.refresh_token, "no refresh token");
  dcr.box.tokens = { ...old, access_token: "not.a.token" };
  const log = [];
  const transport = new StreamableHTTPClientTransport(url, { authProvider: dcr, fetch: recordingFetch(log) });
  const client = new Client({ name: "sheaf-builtin-smoke", version: "1" });
  await client.connect(transport);
  assert(log.some((e) => e.url.endsWith("/oauth/token") && e.status === 200), "no refresh request");
  assert(dcr.box.tokens.refresh_token !== old.refresh_token, "the refresh token was not rotated");
  const detail = await withinFolder(client);
  await client.close();
  // The spent refresh token is refused.
  const md = await asMetadata();
  const replay = await fetch(md.token_endpoint, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: old.refresh_token, client_id: dcr.clientInformation().client_id }) });
  const body = await replay.json();
  assert(replay.status === 400 && body.error === "invalid_grant", `replayed refresh token: ${replay.status} ${JSON.stringify(body)}`);
  return detail;
});

await check("revocation: the grant ends; the next call gets a 401 naming the resource metadata", async () => {
  // The replay above revoked the grant already; authorize afresh.
  dcr = provider();
  const client = await connect(dcr, []);
  await withinFolder(client);
  await client.close();
  const md = await asMetadata();
  const res = await fetch(md.revocation_endpoint, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: dcr.box.tokens.refresh_token, token_type_hint: "refresh_token", client_id: dcr.clientInformation().client_id }) });
  assert(res.status === 200, `revoke: ${res.status}`);
  const after = await rawCall(dcr.box.tokens.access_token);
  const wa = after.headers.get("www-authenticate") ?? "";
  assert(after.status === 401 && /resource_metadata="[^"]+"/.test(wa) && /error="invalid_token"/.test(wa), `after revocation: ${after.status} ${wa}`);
});

if (cimdUrl) {
  await check("client ID metadata document: no registration, the URL is the client id", async () => {
    const md = await asMetadata();
    assert(md.client_id_metadata_document_supported === true, "metadata does not offer client ID metadata documents");
    const log = [];
    const p = provider(cimdUrl);
    const client = await connect(p, log);
    assert(!log.some((e) => e.url.endsWith("/oauth/register")), "registered although a metadata document was offered");
    assert(p.clientInformation().client_id === cimdUrl, `client id ${p.clientInformation().client_id}`);
    const detail = await withinFolder(client);
    await client.close();
    return detail;
  });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
