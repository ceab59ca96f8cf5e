// Managed by jupyter-jcli: `j-cli setup dsh` writes this file, `j-cli setup dsh --remove` deletes it.
//
// DSH plugin "jupyter-jcli": the `read_notebook_output` tool (the same one-tool contract as the
// read-only MCP server `jcli-notebook-output`) and the notebook guard. Plain JavaScript (also valid
// TypeScript: DSH loads it from `.dsh/plugins/jcli.ts`, registered by the row `jcli-hooks` of
// `.dsh/cordis.yml`).
//
// Module shape (a Cordis plugin, as DSH composes them):
//   export const name = "jupyter-jcli"
//   export const inject = ["shell"]                   // the services it needs
//   export function apply(ctx, config = { hooks: true, tools: true, executable?, timeoutMs? })
//
// What it uses of ctx:
//   ctx.shell.resolve(request) -> spec; await ctx.shell.execute(spec) -> handle;
//     await handle.result() -> { exitCode, signal, timedOut, aborted, stdout: { text, truncated }, stderr: { text } }
//     request: { command (one POSIX shell command line), workdir?, stdin?, timeoutMs, stdoutMaxBytes?, signal?, sandboxPolicy? }
//   ctx.get("tools").register(tool)          (through ctx.inject(["tools"], ...) when the host has it)
//   ctx.get("attachments").saveImage({ data, mediaType }) -> { attachmentId, mediaType, bytes, width, height }
//   ctx.get("sandboxPolicy").resolve({ session? }) when the shell confines commands (ctx.shell.sandboxMode)
//   ctx.on("tools/pre-execute", (exec, next) -> decision)   exec: { callId, name, arguments, agent?, signal }
//   ctx.logger.warn(message)
//
// The tool resolves to the saved-output protocol document (a raster read: its base64 saved as a
// host attachment, `selected.delivered_as: "image_content"` and `selected.attachment`); its
// output.render gives the model the JSON as text (and the image). A failure throws a
// JcliPluginError whose message is the error JSON ({"status": "error", "code": ...}): a non-zero
// exit or output that is not that JSON is never a success.
//
// The guard: a shell, edit or patch tool call goes to `j-cli hook guard --host dsh` (stdin: the
// call as a hook event; stdout: one JSON line {"decision": "allow"|"deny", "reason"}); a deny
// answers { kind: "deny", reason } without calling next(). The guard fails open: when it cannot
// answer, the call goes ahead (next()) and the failure is logged and shown to the agent.

export const name = "jupyter-jcli"
export const inject = ["shell"]

const JCLI = "__JCLI_ARGV__"
const GUARDED_TOOLS = new Set("__GUARDED_TOOLS__")
const READ_TIMEOUT_MS = 120000
const GUARD_TIMEOUT_MS = 10000
const MAX_TIMEOUT_MS = 600000
const MAX_STDOUT_BYTES = 64 * 1024 * 1024
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

function abortError() {
  const error = new Error("jupyter-jcli: the call was cancelled")
  error.name = "AbortError"
  return error
}

const parameters = {
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
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw failure("USAGE_ERROR", "The arguments must be an object.", {})
  }
  const unknown = Object.keys(args).filter((key) => !(key in parameters.properties))
  if (unknown.length > 0) throw failure("USAGE_ERROR", `Unknown arguments: ${unknown.join(", ")}.`, { parameters: unknown })
  if (typeof args.file_path !== "string" || args.file_path === "") {
    throw failure("USAGE_ERROR", "'file_path' must be a non-empty string.", { parameter: "file_path" })
  }
  if (!Number.isInteger(args.cell_index)) {
    throw failure("USAGE_ERROR", "'cell_index' is required.", { parameter: "cell_index" })
  }
  const { argv, problem } = readCall(args)
  if (problem) throw failure("USAGE_ERROR", problem.message, problem.details)
  return argv
}

// One word for a POSIX shell, whatever it holds.
function quote(word) {
  const text = String(word)
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`
}

function outputText(output) {
  if (typeof output === "string") return output
  return typeof output?.text === "string" ? output.text : ""
}

function jsonObject(text) {
  try {
    const value = JSON.parse(text)
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined
  } catch {
    return undefined
  }
}

function service(ctx, key) {
  const found = typeof ctx.get === "function" ? ctx.get(key) : undefined
  return found ?? ctx[key]
}

function settings(config) {
  const input = config ?? {}
  if (typeof input !== "object" || Array.isArray(input)) throw new TypeError("jupyter-jcli: config must be a mapping")
  const executable = input.executable ?? JCLI
  const command = typeof executable === "string" ? [executable] : executable
  if (!Array.isArray(command) || command.length === 0 || command.some((word) => typeof word !== "string" || word === "")) {
    throw new TypeError("jupyter-jcli: executable must be a non-empty string")
  }
  const timeoutMs = input.timeoutMs ?? READ_TIMEOUT_MS
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new TypeError(`jupyter-jcli: timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`)
  }
  const hooks = input.hooks ?? true
  const tools = input.tools ?? true
  if (typeof hooks !== "boolean" || typeof tools !== "boolean") throw new TypeError("jupyter-jcli: hooks and tools must be booleans")
  return { command, timeoutMs, hooks, tools }
}

export function apply(ctx, config) {
  const { command, timeoutMs, hooks, tools } = settings(config)
  if (!ctx?.shell || typeof ctx.shell.resolve !== "function" || typeof ctx.shell.execute !== "function") {
    throw new TypeError("jupyter-jcli needs DSH's shell service (ctx.shell: resolve, execute)")
  }
  const policies = service(ctx, "sandboxPolicy")
  if (ctx.shell.sandboxMode !== undefined && typeof policies?.resolve !== "function") {
    throw new Error("jupyter-jcli: the shell confines commands but ctx.sandboxPolicy is missing")
  }
  const warn = (message) => {
    try {
      ctx.logger?.warn?.(message)
    } catch {
      // a log that cannot be written changes nothing
    }
  }

  // Run `j-cli ARGV` through DSH's shell service: { exitCode, signal, timedOut, aborted, stdout, stderr, truncated }.
  async function runJcli(argv, { agent, signal, stdin, limitMs }) {
    if (signal?.aborted) throw abortError()
    const request = { command: [...command, ...argv].map(quote).join(" "), timeoutMs: limitMs, stdoutMaxBytes: MAX_STDOUT_BYTES }
    if (signal) request.signal = signal
    if (stdin !== undefined) request.stdin = stdin
    const cwd = agent?.session?.header?.cwd
    if (typeof cwd === "string") request.workdir = cwd
    if (typeof policies?.resolve === "function") {
      request.sandboxPolicy = policies.resolve(agent?.session ? { session: agent.session } : {})
    }
    const spec = await ctx.shell.resolve(request)
    const handle = await ctx.shell.execute(spec)
    const result = await handle.result()
    if (result?.aborted || signal?.aborted) throw abortError()
    if (result === null || typeof result !== "object") throw new Error("the shell service returned no result")
    return {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut === true,
      truncated: result.stdout?.truncated === true,
      stdout: outputText(result.stdout),
      stderr: outputText(result.stderr),
    }
  }

  async function readNotebookOutput(args, run) {
    const argv = jcliArgs(args)
    let result
    try {
      result = await runJcli(argv, { agent: run?.agent, signal: run?.signal, limitMs: timeoutMs })
    } catch (error) {
      if (error?.name === "AbortError") throw error
      throw failure("INTERNAL_ERROR", `The shell service could not run j-cli: ${error?.message ?? error}`, { command: command[0] })
    }
    if (result.timedOut) throw failure("INTERNAL_ERROR", `j-cli did not answer within ${timeoutMs} ms.`, { timeout_ms: timeoutMs })
    if (result.truncated) throw failure("INTERNAL_ERROR", "j-cli answered more than the shell service kept.", {})
    const doc = jsonObject(result.stdout) ?? jsonObject(result.stderr)
    if (doc === undefined) {
      throw failure("INTERNAL_ERROR", "j-cli did not answer with one JSON document.", {
        exit_code: result.exitCode ?? null,
        stderr: result.stderr.slice(0, 2000),
      })
    }
    if (result.exitCode !== 0 || doc.status !== "ok") {
      if (doc.status === "error" && typeof doc.code === "string") throw new JcliPluginError(doc)
      throw failure("INTERNAL_ERROR", `j-cli exited with status ${result.exitCode}.`, { exit_code: result.exitCode ?? null })
    }
    const selected = doc.selected
    if (!(selected && selected.encoding === "base64" && RASTER_MIME_TYPES.has(selected.mime_type))) return doc
    const attachments = service(ctx, "attachments")
    if (typeof attachments?.saveImage !== "function") {
      throw failure("MIME_NOT_SUPPORTED", `This host cannot show ${selected.mime_type} (it has no attachment service); read another MIME type.`, {
        mime_type: selected.mime_type,
        available_mime_types: doc.available_mime_types ?? [],
      })
    }
    const { data, ...rest } = selected
    const attachment = await attachments.saveImage({ data: Uint8Array.from(Buffer.from(data, "base64")), mediaType: selected.mime_type })
    return { ...doc, selected: { ...rest, delivered_as: "image_content", attachment } }
  }

  // What the model sees: the JSON as text; a saved image after it.
  function render(_args, value) {
    const attachment = value?.selected?.attachment
    if (!attachment) return [{ type: "text", text: JSON.stringify(value) }]
    const { attachment: _saved, ...selected } = value.selected
    return [
      { type: "text", text: JSON.stringify({ ...value, selected }) },
      { type: "image", attachment },
    ]
  }

  const tool = {
    name: "read_notebook_output",
    description:
      "Read saved outputs of a Jupyter notebook cell without executing anything. List a cell's outputs " +
      "first (no output_index), then read the one you need.",
    parameters,
    output: { schema: {}, render },
    isConcurrencySafe: () => true,
    execute: readNotebookOutput,
  }

  if (tools) {
    const register = (scope) => {
      const registry = service(scope, "tools")
      if (typeof registry?.register !== "function") {
        warn("jupyter-jcli: DSH has no tools service; read_notebook_output was not registered")
        return
      }
      registry.register(tool)
    }
    if (typeof ctx.inject === "function") ctx.inject(["tools"], register)
    else register(ctx)
  }

  if (!hooks) return

  async function guard(exec) {
    const session = exec.agent?.session
    const event = {
      hook_event_name: "PreToolUse",
      session_id: session?.header?.id ?? session?.id ?? "",
      cwd: session?.header?.cwd ?? process.cwd(),
      tool_name: exec.name,
      tool_input: exec.arguments,
      tool_use_id: String(exec.callId ?? ""),
    }
    let result
    try {
      result = await runJcli(["hook", "guard", "--host", "dsh"], {
        agent: exec.agent,
        signal: exec.signal,
        stdin: JSON.stringify(event),
        limitMs: GUARD_TIMEOUT_MS,
      })
    } catch (error) {
      if (error?.name === "AbortError") throw error
      return { failed: `the guard could not run (${error?.message ?? error})` }
    }
    const doc = jsonObject(result.stdout.trim())
    if (result.exitCode !== 0 || doc === undefined || (doc.decision !== "allow" && doc.decision !== "deny")) {
      const status = result.timedOut ? "timed out" : `exit ${result.exitCode ?? result.signal}`
      return { failed: `the guard gave no decision (${status}): ${result.stderr.trim().slice(0, 500)}` }
    }
    return doc
  }

  ctx.on("tools/pre-execute", async (exec, next) => {
    if (!GUARDED_TOOLS.has(String(exec?.name).toLowerCase())) return next()
    const verdict = await guard(exec)
    if (verdict.decision === "deny") return { kind: "deny", reason: verdict.reason || "Blocked by jupyter-jcli." }
    if (verdict.failed) {
      const text = `jupyter-jcli: ${verdict.failed}; the call was allowed.`
      warn(text)
      try {
        exec.agent?.inject?.({
          id: `jupyter-jcli-${Date.now()}`,
          role: "user",
          content: [{ type: "text", text }],
          source: { kind: "jupyter-jcli" },
        })
      } catch {
        // the diagnostic is also in the log
      }
    }
    if (exec.signal?.aborted) throw abortError()
    return next()
  })
}
