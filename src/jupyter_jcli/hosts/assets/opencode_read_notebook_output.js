// Managed by jupyter-jcli: `j-cli setup opencode` writes this file, `j-cli setup opencode --remove` deletes it.
//
// OpenCode custom tool `read_notebook_output` (the file name is the tool name): the same one-tool
// contract as jupyter-jcli's read-only MCP server `jcli-notebook-output`.
//   - without output_index: list a cell's saved outputs  -> `j-cli -j notebook outputs PATH --cell N`
//   - with output_index:    read one physical output     -> `j-cli -j notebook output PATH --cell N --output K ...`
// The result is the saved-output protocol JSON, as text. A raster read returns the JSON without the
// base64 (`selected.delivered_as: "image_content"`) plus the image as an attachment. A failure throws
// an Error whose message is the error JSON (`{"status": "error", "code": ...}`): a non-zero exit or
// output that is not that JSON is never reported as success.
import { tool } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"

const JCLI = "__JCLI_ARGV__"
const TIMEOUT_MS = 120000
const MAX_STDOUT_BYTES = 64 * 1024 * 1024
const RASTER_MIME_TYPES = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"])

function errorJson(code, message, details) {
  const doc = { schema_version: 1, status: "error", code, message }
  if (details) doc.details = details
  return JSON.stringify(doc)
}

// @include read_call.js

function jcliArgs(args) {
  const { argv, problem } = readCall(args)
  if (problem) throw new Error(errorJson("USAGE_ERROR", problem.message, problem.details))
  return argv
}

function run(argv, cwd, signal) {
  return new Promise((resolve, reject) => {
    const child = spawn(JCLI[0], [...JCLI.slice(1), ...argv], { cwd, stdio: ["ignore", "pipe", "pipe"], signal })
    const out = []
    const err = []
    let size = 0
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS)
    child.stdout.on("data", (chunk) => {
      size += chunk.length
      if (size > MAX_STDOUT_BYTES) child.kill("SIGKILL")
      else out.push(chunk)
    })
    child.stderr.on("data", (chunk) => err.push(chunk))
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(new Error(errorJson("INTERNAL_ERROR", `Could not run j-cli: ${error.message}`, { command: JCLI[0] })))
    })
    child.on("close", (code, sig) => {
      clearTimeout(timer)
      resolve({ exitCode: code, signal: sig, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
    })
  })
}

function parse(result) {
  let doc
  try {
    doc = JSON.parse(result.stdout)
  } catch {
    doc = undefined
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
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

export default tool({
  description:
    "Read saved outputs of a Jupyter notebook cell (.ipynb, or a .py paired with one) without executing anything. " +
    "List a cell's outputs first (no output_index), then read the one you need (output_index; optional mime_type, " +
    "supported_mime_types, and offset/limit to page long text).",
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
    const cwd = (context && (context.directory || context.worktree)) || process.cwd()
    const doc = parse(await run(jcliArgs(args), cwd, context && context.abort))
    const selected = doc.selected
    if (selected && selected.encoding === "base64" && RASTER_MIME_TYPES.has(selected.mime_type)) {
      const { data, ...rest } = selected
      const provenance = { ...doc, selected: { ...rest, delivered_as: "image_content" } }
      return {
        title: `${args.file_path} cell ${args.cell_index} output ${args.output_index}`,
        output: JSON.stringify(provenance),
        metadata: {},
        attachments: [{ type: "file", mime: selected.mime_type, url: `data:${selected.mime_type};base64,${data}` }],
      }
    }
    return JSON.stringify(doc)
  },
})
