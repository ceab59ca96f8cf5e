// Managed by jupyter-jcli: `j-cli setup dsh` writes this file, `j-cli setup dsh --remove` deletes it.
//
// DSH plugin "jupyter-jcli": the `read_notebook_output` tool (the same one-tool contract as the
// read-only MCP server `jcli-notebook-output`) and the notebook guard.
//
// Module shape (ES module):
//   export const name = "jupyter-jcli"
//   export function createPlugin({ shell, cwd?, command? }) -> {
//     name,
//     tools: { read_notebook_output: { name, description, inputSchema, execute(args) } },
//     guard(event) -> Promise<{ decision: "allow" | "deny", rule?, reason? }>,
//   }
//   export default createPlugin
//
// Every command runs through DSH's shell service, never directly:
//   const spec = await shell.resolve({ command, args, cwd, stdin, timeoutMs })   // a command spec
//   const handle = await shell.execute(spec)                                     // started
//   const { exitCode, stdout, stderr } = await handle.result()                   // finished
// Both the tool and the guard await that result; a non-zero exit or output that is not the
// expected JSON document is an error (a thrown JcliPluginError carrying the error JSON), never a
// success.
//
// execute(args) resolves to { json, text, images }: `json` is the saved-output protocol document
// (a raster read without its base64, `selected.delivered_as: "image_content"`), `text` the same
// JSON as text, `images` [{ mime_type, data }] for a raster read. guard(event) sends the host's
// tool-call event ({ tool_name, tool_input }) to `j-cli hook guard --host dsh`, which always answers
// with one JSON line.

export const name = "jupyter-jcli"

const JCLI = "__JCLI_ARGV__"
const TIMEOUT_MS = 120000
const GUARD_TIMEOUT_MS = 10000
const RASTER_MIME_TYPES = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"])

export class JcliPluginError extends Error {
  constructor(errorDocument) {
    super(JSON.stringify(errorDocument))
    this.name = "JcliPluginError"
    this.code = errorDocument.code
    this.document = errorDocument
  }
}

function failure(code, message, details) {
  const doc = { schema_version: 1, status: "error", code, message }
  if (details) doc.details = details
  return new JcliPluginError(doc)
}

const inputSchema = {
  type: "object",
  properties: {
    file_path: { type: "string", description: "Notebook path (.ipynb, or a .py paired with one)." },
    cell_index: { type: "integer", minimum: 0, description: "Physical, zero-based cell index." },
    output_index: { type: "integer", minimum: 0, description: "Physical, zero-based output index; omit to list." },
    mime_type: { type: "string", description: "MIME type to return from a MIME bundle." },
    supported_mime_types: { type: "array", items: { type: "string" }, description: "Only accept these MIME types." },
    offset: { type: "integer", minimum: 0, description: "Text page start, in characters." },
    limit: { type: "integer", minimum: 1, description: "Text page size, in characters." },
  },
  required: ["file_path", "cell_index"],
  additionalProperties: false,
}

// @include read_call.js

function jcliArgs(args) {
  if (typeof args?.file_path !== "string" || args.file_path === "") {
    throw failure("USAGE_ERROR", "'file_path' must be a non-empty string.", { parameter: "file_path" })
  }
  if (!Number.isInteger(args.cell_index)) {
    throw failure("USAGE_ERROR", "'cell_index' is required.", { parameter: "cell_index" })
  }
  const { argv, problem } = readCall(args)
  if (problem) throw failure("USAGE_ERROR", problem.message, problem.details)
  return argv
}

async function runThroughShell(shell, command, argv, { cwd, stdin, timeoutMs }) {
  let result
  try {
    const spec = await shell.resolve({ command: command[0], args: [...command.slice(1), ...argv], cwd, stdin, timeoutMs })
    const handle = await shell.execute(spec)
    result = await handle.result()
  } catch (error) {
    throw failure("INTERNAL_ERROR", `The shell service could not run j-cli: ${error?.message ?? error}`, {
      command: command[0],
    })
  }
  if (result === null || typeof result !== "object") {
    throw failure("INTERNAL_ERROR", "The shell service returned no result.", {})
  }
  let doc
  try {
    doc = JSON.parse(String(result.stdout ?? ""))
  } catch {
    doc = undefined
  }
  return { result, doc: doc !== null && typeof doc === "object" && !Array.isArray(doc) ? doc : undefined }
}

export function createPlugin({ shell, cwd, command = JCLI } = {}) {
  if (!shell || typeof shell.resolve !== "function" || typeof shell.execute !== "function") {
    throw new TypeError("createPlugin needs DSH's shell service ({ resolve, execute })")
  }

  async function readNotebookOutput(args) {
    const { result, doc } = await runThroughShell(shell, command, jcliArgs(args), { cwd, timeoutMs: TIMEOUT_MS })
    if (doc === undefined) {
      throw failure("INTERNAL_ERROR", "j-cli did not answer with one JSON document.", {
        exit_code: result.exitCode,
        stderr: String(result.stderr ?? "").slice(0, 2000),
      })
    }
    if (result.exitCode !== 0 || doc.status !== "ok") {
      if (doc.status === "error" && typeof doc.code === "string") throw new JcliPluginError(doc)
      throw failure("INTERNAL_ERROR", `j-cli exited with status ${result.exitCode}.`, { exit_code: result.exitCode })
    }
    const selected = doc.selected
    if (selected && selected.encoding === "base64" && RASTER_MIME_TYPES.has(selected.mime_type)) {
      const { data, ...rest } = selected
      const json = { ...doc, selected: { ...rest, delivered_as: "image_content" } }
      return { json, text: JSON.stringify(json), images: [{ mime_type: selected.mime_type, data }] }
    }
    return { json: doc, text: JSON.stringify(doc), images: [] }
  }

  async function guard(event) {
    const { result, doc } = await runThroughShell(shell, command, ["hook", "guard", "--host", "dsh"], {
      cwd,
      stdin: JSON.stringify(event ?? {}),
      timeoutMs: GUARD_TIMEOUT_MS,
    })
    if (result.exitCode !== 0 || doc === undefined || (doc.decision !== "allow" && doc.decision !== "deny")) {
      throw failure("INTERNAL_ERROR", "The j-cli guard did not answer with a decision.", {
        exit_code: result.exitCode,
        stderr: String(result.stderr ?? "").slice(0, 2000),
      })
    }
    return doc.decision === "deny" ? { decision: "deny", rule: doc.rule, reason: doc.reason } : { decision: "allow" }
  }

  return {
    name,
    tools: {
      read_notebook_output: {
        name: "read_notebook_output",
        description:
          "Read saved outputs of a Jupyter notebook cell without executing anything. List a cell's outputs " +
          "first (no output_index), then read the one you need.",
        inputSchema,
        execute: readNotebookOutput,
      },
    },
    guard,
  }
}

export default createPlugin
