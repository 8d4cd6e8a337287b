// OAuth end to end with the official TypeScript MCP SDK: the client meets a
// 401, reads the protected resource metadata named in WWW-Authenticate,
// discovers the authorization server, gets a token for the server's
// resource and calls tools with it. Two grants, as hosted agents use them:
//
//   client credentials (machine to machine, ClientCredentialsProvider), and
//   authorization code with PKCE after dynamic client registration (what
//   claude.ai and other remote MCP clients do), with the test authorization
//   server approving at once and this script following its redirect.
//
//   SHEAF_HTTP_URL=http://127.0.0.1:PORT/mcp SHEAF_OAUTH_ISSUER=http://127.0.0.1:PORT2 \
//   SHEAF_OAUTH_CLIENT_ID=m2m SHEAF_OAUTH_CLIENT_SECRET=... node oauth.mjs
//
// A Go test (cmd/sheaf, functions/mcp) starts the authorization server and
// the Sheaf endpoint and runs this script. The last line of output is
// "N passed, M failed"; the exit code is non-zero when any check failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const url = new URL(process.env.SHEAF_HTTP_URL ?? "");
const issuer = process.env.SHEAF_OAUTH_ISSUER ?? "";
const clientId = process.env.SHEAF_OAUTH_CLIENT_ID ?? "";
const clientSecret = process.env.SHEAF_OAUTH_CLIENT_SECRET ?? "";

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

// recordingFetch logs every request the SDK makes, so the checks can see
// the 401, the metadata fetch and the token request.
function recordingFetch(log) {
  return async (input, init) => {
    const res = await fetch(input, init);
    log.push({
      url: String(input instanceof Request ? input.url : input),
      method: init?.method ?? "GET",
      status: res.status,
      wwwAuthenticate: res.headers.get("www-authenticate"),
      auth: new Headers(init?.headers).get("authorization"),
    });
    return res;
  };
}

// useTools lists the tools and calls two of them with the session's token.
async function useTools(client) {
  const { tools } = await client.listTools();
  assert(tools.some((t) => t.name === "get_vault_info"), "no get_vault_info in tools/list");
  const info = await client.callTool({ name: "get_vault_info", arguments: {} });
  assert(!info.isError, `get_vault_info failed: ${JSON.stringify(info)}`);
  assert(info.structuredContent?.noteCount > 0, `noteCount ${info.structuredContent?.noteCount}`);
  const notes = await client.callTool({ name: "list_notes", arguments: {} });
  assert(!notes.isError, `list_notes failed: ${JSON.stringify(notes)}`);
  return `${tools.length} tools, ${info.structuredContent.noteCount} notes`;
}

// checkDiscovery asserts the SDK found the metadata through the 401.
function checkDiscovery(log) {
  const first = log.find((e) => e.url === url.href);
  assert(first?.status === 401, `first request to the endpoint: ${first?.status}`);
  const m = /resource_metadata="([^"]+)"/.exec(first.wwwAuthenticate ?? "");
  assert(m, `401 WWW-Authenticate without resource_metadata: ${first.wwwAuthenticate}`);
  const prm = log.find((e) => e.url === m[1]);
  assert(prm?.status === 200, `metadata ${m[1]} fetched: ${prm?.status}`);
  const token = log.find((e) => e.url.startsWith(issuer) && e.url.endsWith("/token"));
  assert(token?.status === 200, `token request: ${token?.status}`);
  // (The SDK's GET for a standalone event stream answers 405: this server
  // does not stream.)
  const authed = log.filter((e) => e.url === url.href && e.method === "POST" && e.auth?.startsWith("Bearer "));
  assert(authed.length > 0 && authed.every((e) => e.status < 400), `calls with the token: ${authed.map((e) => e.status)}`);
}

await check("client credentials: 401 -> metadata -> token -> tools", async () => {
  const log = [];
  const provider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: issuer });
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: recordingFetch(log) });
  const client = new Client({ name: "sheaf-oauth-smoke", version: "1" });
  await client.connect(transport);
  const detail = await useTools(client);
  checkDiscovery(log);
  await client.close();
  return detail;
});

// interactiveProvider is an OAuthClientProvider for the authorization code
// flow whose "browser" follows the authorization server's redirect itself.
function interactiveProvider(codeBox) {
  const redirectUrl = "http://127.0.0.1:9/callback";
  let client, tokens, verifier, discovery;
  return {
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() {
      return { client_name: "sheaf-oauth-smoke", redirect_uris: [redirectUrl], grant_types: ["authorization_code"],
        response_types: ["code"], token_endpoint_auth_method: "none" };
    },
    state: () => "smoke-state",
    clientInformation: () => client,
    saveClientInformation: (c) => { client = c; },
    tokens: () => tokens,
    saveTokens: (t) => { tokens = t; },
    saveCodeVerifier: (v) => { verifier = v; },
    codeVerifier: () => verifier,
    discoveryState: () => discovery,
    saveDiscoveryState: (d) => { discovery = d; },
    async redirectToAuthorization(authUrl) {
      const res = await fetch(authUrl, { redirect: "manual" });
      assert(res.status === 302, `authorize: ${res.status} ${await res.text()}`);
      const back = new URL(res.headers.get("location"));
      assert(back.searchParams.get("state") === "smoke-state", "state not echoed");
      assert(authUrl.searchParams.get("resource") === url.href, `resource indicator ${authUrl.searchParams.get("resource")}`);
      codeBox.code = back.searchParams.get("code");
    },
  };
}

await check("authorization code + PKCE + dynamic registration: 401 -> metadata -> code -> token -> tools", async () => {
  const log = [];
  const codeBox = {};
  const provider = interactiveProvider(codeBox);
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: recordingFetch(log) });
  let client = new Client({ name: "sheaf-oauth-smoke", version: "1" });
  try {
    await client.connect(transport);
    throw new Error("connected without authorizing");
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  assert(codeBox.code, "no authorization code");
  await transport.finishAuth(codeBox.code);
  transport = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: recordingFetch(log) });
  client = new Client({ name: "sheaf-oauth-smoke", version: "1" });
  await client.connect(transport);
  const detail = await useTools(client);
  checkDiscovery(log);
  assert(log.some((e) => e.url.endsWith("/register") && e.status === 201), "no dynamic client registration");
  await client.close();
  return detail;
});

await check("a token for another resource is refused", async () => {
  const res = await fetch(process.env.SHEAF_OAUTH_FOREIGN_TOKEN_URL ?? url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
      authorization: `Bearer ${process.env.SHEAF_OAUTH_FOREIGN_TOKEN ?? "x.y.z"}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert(res.status === 401, `status ${res.status}`);
  assert(/error="invalid_token"/.test(res.headers.get("www-authenticate") ?? ""), res.headers.get("www-authenticate"));
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
