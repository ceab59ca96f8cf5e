// Calls MCP tools through the official TypeScript SDK's Client over stdio (or over streamable
// HTTP), the client inside Claude Code, Cursor, VS Code and the MCP Inspector, and reports what
// each call gave. Run by tests/hosts/test_hosts_ts_client.py and test_hosts_ts_http.py:
//   node ts_sdk_client.mjs PLAN.json
// env JCLI_MCP_SDK_DIR: the npm prefix holding @modelcontextprotocol/sdk.
//
// PLAN: {"servers": [{"name", "command", "args", "cwd", "env", "calls": [
//   {"label", "tool", "arguments"}]}]}; a server with "url" (and "headers") is reached by the
// SDK's StreamableHTTPClientTransport instead of being spawned. An argument value {"$from": LABEL, "pointer": "/a/0/b"}
// is replaced by that JSON pointer into the structuredContent of the earlier call LABEL.
// Before its calls, each server's tools are listed (as a host does; the SDK then validates
// every result against the tool's outputSchema).
//
// A server the client cannot connect to reports {"name", "connect_error": {"code", "message"}}.
// Report on stdout: {"servers": [{"name", "tools": [{"name", "has_output_schema"}], "calls": [
//   {"label", "tool", "threw": false, "is_error", "has_structured_content",
//    "structured_content", "content": [{"type", "text"?, "mime_type"?, "data_length"?}]}
//   | {"label", "tool", "threw": true, "error_code", "message"}]}]}
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"

const CALL_TIMEOUT_MS = 180000

const sdk = createRequire(join(process.env.JCLI_MCP_SDK_DIR, "package.json"))
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js")
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js")
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js")

function pointerInto(value, pointer) {
  let here = value
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~")
    if (here === null || typeof here !== "object" || !(key in here)) {
      throw new Error(`pointer ${pointer} does not resolve`)
    }
    here = here[key]
  }
  return here
}

function resolveArguments(args, earlier) {
  const out = {}
  for (const [key, value] of Object.entries(args ?? {})) {
    const isRef = value !== null && typeof value === "object" && !Array.isArray(value) && "$from" in value
    if (!isRef) {
      out[key] = value
      continue
    }
    const source = earlier.get(value.$from)
    if (!source || source.structured_content === undefined) {
      throw new Error(`call ${value.$from} gave no structured content to refer to`)
    }
    out[key] = pointerInto(source.structured_content, value.pointer)
  }
  return out
}

function describeBlock(block) {
  if (block.type === "text") return { type: "text", text: block.text }
  if (block.type === "image") return { type: "image", mime_type: block.mimeType, data_length: block.data.length }
  return { type: block.type }
}

function transportFor(server) {
  if (server.url) {
    return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} } })
  }
  return new StdioClientTransport({
    command: server.command,
    args: server.args,
    cwd: server.cwd,
    env: server.env,
    stderr: "inherit",
  })
}

async function runServer(server) {
  const client = new Client({ name: "jcli-ts-sdk-test", version: "1.0.0" }, { capabilities: {} })
  try {
    await client.connect(transportFor(server))
  } catch (error) {
    return { name: server.name, connect_error: { code: error?.code ?? null, message: String(error?.message ?? error) } }
  }
  const report = { name: server.name, tools: [], calls: [] }
  const earlier = new Map()
  try {
    const listed = await client.listTools()
    report.tools = listed.tools.map((tool) => ({ name: tool.name, has_output_schema: tool.outputSchema !== undefined }))
    for (const call of server.calls) {
      const entry = { label: call.label, tool: call.tool }
      try {
        const result = await client.callTool(
          { name: call.tool, arguments: resolveArguments(call.arguments, earlier) },
          undefined,
          { timeout: CALL_TIMEOUT_MS },
        )
        Object.assign(entry, {
          threw: false,
          is_error: result.isError === true,
          has_structured_content: result.structuredContent !== undefined,
          structured_content: result.structuredContent,
          content: result.content.map(describeBlock),
        })
      } catch (error) {
        Object.assign(entry, { threw: true, error_code: error?.code ?? null, message: String(error?.message ?? error) })
      }
      earlier.set(call.label, entry)
      report.calls.push(entry)
    }
  } finally {
    await client.close()
  }
  return report
}

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"))
const servers = []
for (const server of plan.servers) servers.push(await runServer(server))
process.stdout.write(JSON.stringify({ servers }))
