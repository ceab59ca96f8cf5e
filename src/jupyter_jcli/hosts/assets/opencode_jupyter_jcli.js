// Managed by jupyter-jcli: `j-cli setup opencode` writes this file, `j-cli setup opencode --remove` deletes it.
//
// OpenCode plugin "jupyter-jcli" (a local plugin: OpenCode loads every *.js / *.ts file of
// .opencode/plugins/ and ~/.config/opencode/plugins/ and calls each exported function with
// { client, directory, worktree, ... }; every export must be such a function, so this file has one).
// It returns two hooks:
//
// - tool.read_notebook_output: the same one-tool contract as the read-only MCP server
//   `jcli-notebook-output` (`j-cli -j notebook outputs|output`). It asks OpenCode's `read`
//   permission for the notebook (and `external_directory` outside the worktree), as OpenCode's own
//   read tool does, then returns { title, output, metadata }: `output` is the saved-output protocol
//   JSON; a raster read leaves the base64 out (`selected.delivered_as: "image_content"`) and
//   attaches the image. A failure throws an Error whose message is the error JSON
//   ({"status": "error", "code": ...}); a non-zero exit or output that is not that JSON is never a
//   success.
// - tool.execute.before: the notebook guard. A shell, edit or patch tool call goes to
//   `j-cli hook guard --host dsh` (one JSON line: {"decision": "allow"|"deny", "reason"}); a deny
//   throws, which is how OpenCode blocks a call, with the reason the model reads. The guard fails
//   open: when it cannot answer, the call goes ahead and the failure is logged.
import { tool } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"
import path from "node:path"

const JCLI = "__JCLI_ARGV__"
const GUARDED_TOOLS = new Set("__GUARDED_TOOLS__")
const READ_TIMEOUT_MS = 120000
const GUARD_TIMEOUT_MS = 10000
const MAX_STDOUT_BYTES = 64 * 1024 * 1024
const MAX_STDERR_BYTES = 256 * 1024
const RASTER_MIME_TYPES = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"])

function errorJson(code, message, details) {
  const doc = { schema_version: 1, status: "error", code, message }
  if (details) doc.details = details
  return JSON.stringify(doc)
}

// @include read_call.js

// Run j-cli with bounded output and time: { exitCode, signal, stdout, stderr }.
function run(argv, { cwd, stdin, signal, timeoutMs }) {
  return new Promise((resolve, reject) => {
    let child
    try {
      child = spawn(JCLI[0], [...JCLI.slice(1), ...argv], { cwd, stdio: ["pipe", "pipe", "pipe"], signal })
    } catch (error) {
      reject(error)
      return
    }
    const out = []
    const err = []
    let outBytes = 0
    let errBytes = 0
    let overflow = false
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.stdout.on("data", (chunk) => {
      outBytes += chunk.length
      if (outBytes > MAX_STDOUT_BYTES) {
        overflow = true
        child.kill("SIGKILL")
      } else out.push(chunk)
    })
    child.stderr.on("data", (chunk) => {
      errBytes += chunk.length
      if (errBytes <= MAX_STDERR_BYTES) err.push(chunk)
    })
    child.stdin.on("error", () => {}) // j-cli may exit before reading all of stdin
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code, sig) => {
      clearTimeout(timer)
      resolve({
        exitCode: code,
        signal: sig,
        overflow,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      })
    })
    child.stdin.end(stdin ?? "")
  })
}

// @include json_object.js

async function readDocument(args, cwd, abort) {
  const { argv, problem } = readCall(args)
  if (problem) throw new Error(errorJson("USAGE_ERROR", problem.message, problem.details))
  let result
  try {
    result = await run(argv, { cwd, signal: abort, timeoutMs: READ_TIMEOUT_MS })
  } catch (error) {
    throw new Error(errorJson("INTERNAL_ERROR", `Could not run j-cli: ${error?.message ?? error}`, { command: JCLI[0] }))
  }
  const doc = jsonObject(result.stdout)
  if (doc === undefined) {
    throw new Error(
      errorJson("INTERNAL_ERROR", "j-cli did not answer with one JSON document.", {
        exit_code: result.exitCode,
        signal: result.signal,
        stderr: result.stderr.slice(0, 2000),
      }),
    )
  }
  if (result.exitCode !== 0 || doc.status !== "ok") {
    if (doc.status === "error" && typeof doc.code === "string") throw new Error(JSON.stringify(doc))
    throw new Error(errorJson("INTERNAL_ERROR", `j-cli exited with status ${result.exitCode}.`, { exit_code: result.exitCode }))
  }
  return doc
}

// OpenCode's own read tool asks `external_directory` for a file outside the worktree, then `read`.
async function askToRead(context, file) {
  const root = context.worktree || context.directory
  const relative = path.relative(root, file)
  if (root && root !== "/" && (relative.startsWith("..") || path.isAbsolute(relative))) {
    const glob = path.join(path.dirname(file), "*")
    await context.ask({
      permission: "external_directory",
      patterns: [glob],
      always: [glob],
      metadata: { filepath: file, parentDir: path.dirname(file) },
    })
  }
  await context.ask({ permission: "read", patterns: [file], always: ["*"], metadata: {} })
}

const readNotebookOutput = tool({
  description:
    "Read saved outputs of a Jupyter notebook cell (.ipynb, or a .py paired with one) without executing anything. " +
    "List a cell's outputs first (no output_index), then read the one you need (output_index; optional mime_type, " +
    "supported_mime_types, and offset/limit to page long text). Answers with the saved-output JSON (provenance " +
    "in `source`); a raster image comes as an attachment.",
  args: {
    file_path: tool.schema.string().describe("Notebook path (.ipynb, or a .py paired with one), relative to the project."),
    cell_index: tool.schema.number().int().min(0).describe("Physical, zero-based cell index."),
    output_index: tool.schema
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Physical, zero-based output index; omit to list the cell's outputs."),
    mime_type: tool.schema.string().optional().describe("MIME type to return from a MIME bundle."),
    supported_mime_types: tool.schema.array(tool.schema.string()).optional().describe("Only accept these MIME types."),
    offset: tool.schema.number().int().min(0).optional().describe("Text page start, in characters."),
    limit: tool.schema.number().int().min(1).optional().describe("Text page size, in characters."),
  },
  async execute(args, context) {
    const cwd = context.directory || process.cwd()
    if (typeof args.file_path === "string" && args.file_path !== "") {
      await askToRead(context, path.resolve(cwd, args.file_path))
    }
    const doc = await readDocument(args, cwd, context.abort)
    const listing = args.output_index === undefined || args.output_index === null
    const title = listing
      ? `${args.file_path} cell ${args.cell_index}: outputs`
      : `${args.file_path} cell ${args.cell_index} output ${args.output_index}`
    const metadata = { source: doc.source }
    if (listing) metadata.output_count = doc.output_count
    else metadata.output_type = doc.output_type
    const selected = doc.selected
    if (selected && selected.encoding === "base64" && RASTER_MIME_TYPES.has(selected.mime_type)) {
      const { data, ...rest } = selected
      const provenance = { ...doc, selected: { ...rest, delivered_as: "image_content" } }
      return {
        title,
        output: JSON.stringify(provenance),
        metadata: { ...metadata, mime_type: selected.mime_type },
        attachments: [{ type: "file", mime: selected.mime_type, url: `data:${selected.mime_type};base64,${data}` }],
      }
    }
    if (selected && typeof selected.mime_type === "string") metadata.mime_type = selected.mime_type
    return { title, output: JSON.stringify(doc), metadata }
  },
})

// The tool input the guard reads: OpenCode's apply_patch carries its patch as `patchText`.
function guardInput(name, args) {
  if (name === "apply_patch" && typeof args.patchText === "string") return { ...args, patch: args.patchText }
  return args
}

export const JupyterJcliPlugin = async ({ client, directory }) => {
  const root = directory || process.cwd()

  async function log(level, message, extra) {
    try {
      await client?.app?.log?.({ body: { service: "jupyter-jcli", level, message, extra } })
    } catch {
      // a log that cannot be written must not change the guard's decision
    }
  }

  async function guard(input, args) {
    const name = String(input.tool)
    const cwd = name === "bash" && typeof args.workdir === "string" ? path.resolve(root, args.workdir) : root
    const event = {
      hook_event_name: "PreToolUse",
      session_id: input.sessionID,
      tool_use_id: input.callID,
      cwd,
      tool_name: name,
      tool_input: guardInput(name, args),
    }
    let result
    try {
      result = await run(["hook", "guard", "--host", "dsh"], { cwd: root, stdin: JSON.stringify(event), timeoutMs: GUARD_TIMEOUT_MS })
    } catch (error) {
      await log("warn", `jupyter-jcli guard could not run; the call was allowed: ${error?.message ?? error}`)
      return
    }
    const doc = jsonObject(result.stdout.trim())
    if (result.exitCode !== 0 || doc === undefined || (doc.decision !== "allow" && doc.decision !== "deny")) {
      await log("warn", "jupyter-jcli guard gave no decision; the call was allowed", {
        exit_code: result.exitCode,
        stderr: result.stderr.slice(0, 2000),
      })
      return
    }
    if (doc.decision === "deny") throw new Error(doc.reason || "Blocked by jupyter-jcli.")
  }

  return {
    tool: { read_notebook_output: readNotebookOutput },
    "tool.execute.before": async (input, output) => {
      if (!GUARDED_TOOLS.has(String(input?.tool).toLowerCase())) return
      const args = output?.args !== null && typeof output?.args === "object" ? output.args : {}
      await guard(input, args)
    },
  }
}
