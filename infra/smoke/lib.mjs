// Helpers shared by the TypeScript SDK checks: named steps that count
// passes and failures, assertions, and tool calls that name the tool when
// the SDK throws.

export const results = { passed: 0, failed: 0 };

// check runs one named step; a thrown error fails the step, not the run.
export async function check(label, fn) {
  try {
    const detail = await fn();
    results.passed++;
    console.log(`ok    ${label}${detail ? ` (${detail})` : ""}`);
    return true;
  } catch (err) {
    results.failed++;
    console.log(`FAIL  ${label}: ${err?.message ?? String(err)}`);
    return false;
  }
}

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

export function textOf(result) {
  return (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

// callTool wraps client.callTool so a protocol error or an SDK validation
// error (structuredContent that does not match the tool's outputSchema)
// names the tool in the failure.
export async function callTool(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (err) {
    throw new Error(`${name}(${JSON.stringify(args)}) threw: ${err?.message ?? err}`);
  }
}

// codeOf runs f and returns the JSON-RPC error it threw ({code: 0} when it
// did not throw).
export async function codeOf(f) {
  try {
    await f();
  } catch (e) {
    return { code: e.code, message: String(e.message) };
  }
  return { code: 0 };
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
