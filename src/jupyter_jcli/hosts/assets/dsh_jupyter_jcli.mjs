// Managed by jupyter-jcli: `j-cli setup dsh` writes this file, `j-cli setup dsh --remove` deletes it.
//
// DSH plugin "jcli-dsh" (jupyter-jcli 0.9.7's name and contract): the `read_notebook_output` tool (the same one-tool contract as the
// read-only MCP server `jcli-notebook-output`) and the notebook guard. Plain JavaScript (also valid
// TypeScript: DSH loads it from `.dsh/plugins/jcli.ts`, registered by the row `jcli-hooks` of
// `.dsh/cordis.yml`).
//
// Module shape (a Cordis plugin, as DSH composes them):
//   export const name = "jcli-dsh"                   // jupyter-jcli 0.9.7's plugin name
//   export const inject = ["shell"]                   // the services it needs
//   export function apply(ctx, config = { hooks: true, tools: true, executable?, timeoutMs?, diagnosticMaxChars? })
//
// What it uses of ctx:
//   ctx.shell.resolve(request) -> spec; await ctx.shell.execute(spec) -> handle;
//     await handle.result() -> { exitCode, signal, timedOut, aborted, stdout: { text, truncated }, stderr: { text } }
//     request: { command (one POSIX shell command line), workdir?, stdin?, timeoutMs, stdoutMaxBytes?, signal?, sandboxPolicy? }
//   ctx.get("tools").register(tool)          (through ctx.inject(["tools"], ...) when the host has it)
//   ctx.get("attachments").saveImage({ data, mediaType }) -> { attachmentId, mediaType, bytes, width, height }
//   ctx.get("sandboxPolicy").resolve({ session? }) when the shell confines commands (ctx.shell.sandboxMode)
//   ctx.on("tools/pre-execute", (exec, next) -> decision)   exec: { callId, name, arguments, agent?, signal }
//   ctx.on("tools/post-execute", (exec, result, next) -> decision)   decision.additionalContexts: messages
//   ctx.logger.warn(message)
//
// The tool resolves to the saved-output protocol document (a raster read: its base64 saved as a
// host attachment, `selected.delivered_as: "image_content"` and `selected.attachment`). Its
// output.render gives the model 0.9.7's text shape: a listing as one JSON text
// {provenance, outputs: [{index, type, mime, name?, ename?, evalue?}]}; a read as the payload
// (raw text, compact JSON, stream text, error JSON, or the image) then one JSON text
// {provenance, output: {type, mime?, available?, name?, page?}}. A failure throws a
// JcliPluginError whose message is the error JSON ({"status": "error", "code": ...}): a non-zero
// exit or output that is not that JSON is never a success.
//
// The guard, routed as 0.9.7's plugin routes it: `bash` runs `j-cli _hooks notebook-exec-guard
// --platform dsh` then `python-run-guard`; `edit`/`write` of a `.ipynb`, or of a `.py` beside
// one, runs `pair-drift-guard-pre` (and `pair-drift-guard-post` after a paired `.py`: it never
// decides), any other file none; the other shell, edit and patch tools and NotebookEdit run our
// `j-cli hook guard --host dsh` (stdout: one JSON line {"decision": "allow"|"deny", "reason"}).
// stdin: the call as a Claude-shaped hook event. `_hooks` exit 2 (reason: stderr, else the
// structured deny on stdout) or exit 0 with a structured deny answers { kind: "deny", reason }
// without calling next(). The guard fails open: when it cannot answer, the call goes ahead and a
// diagnostic (at most diagnosticMaxChars, source {kind: "jcli-dsh"}) is logged and injected (pre)
// or prepended to the downstream decision's additionalContexts (post).

import { statSync } from "node:fs"
import { extname, resolve as resolvePath } from "node:path"

export const name = "jcli-dsh"
export const inject = ["shell"]

const JCLI = "__JCLI_ARGV__"
const GUARDED_TOOLS = new Set("__GUARDED_TOOLS__")
const READ_TIMEOUT_MS = 120000
const GUARD_TIMEOUT_MS = 10000
const DIAGNOSTIC_MAX_CHARS = 2000
const MAX_DIAGNOSTIC_CHARS = 16000
const GENERIC_DENY = "j-cli denied this tool call"
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

// Where a read came from, as the model sees it: path, cell (and output); the requested path and
// cell when a paired script was mapped onto its notebook.
function provenance(source, withOutput) {
  if (source === null || typeof source !== "object") return {}
  const where = { path: source.path, cell: source.cell_index }
  if (withOutput) where.output = source.output_index
  if (typeof source.mapping === "string" && source.mapping !== "direct") {
    where.requested = { path: source.requested_path, cell: source.requested_cell_index, mapping: source.mapping }
  }
  return where
}

// @include json_object.js

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
  const timeoutMs = input.timeoutMs
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)) {
    throw new TypeError(`jupyter-jcli: timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`)
  }
  const diagnosticMaxChars = input.diagnosticMaxChars ?? DIAGNOSTIC_MAX_CHARS
  if (!Number.isInteger(diagnosticMaxChars) || diagnosticMaxChars < 1 || diagnosticMaxChars > MAX_DIAGNOSTIC_CHARS) {
    throw new TypeError(`jupyter-jcli: diagnosticMaxChars must be an integer from 1 to ${MAX_DIAGNOSTIC_CHARS}`)
  }
  const hooks = input.hooks ?? true
  const tools = input.tools ?? true
  if (typeof hooks !== "boolean" || typeof tools !== "boolean") throw new TypeError("jupyter-jcli: hooks and tools must be booleans")
  return {
    command,
    readTimeoutMs: timeoutMs ?? READ_TIMEOUT_MS,
    guardTimeoutMs: timeoutMs ?? GUARD_TIMEOUT_MS,
    diagnosticMaxChars,
    hooks,
    tools,
  }
}

export function apply(ctx, config) {
  const { command, readTimeoutMs: timeoutMs, guardTimeoutMs, diagnosticMaxChars, hooks, tools } = settings(config)
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
    if (result.timedOut) throw failure("INTERNAL_ERROR", `j-cli timed out: no answer within ${timeoutMs} ms.`, { timeout_ms: timeoutMs })
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

  // What the model sees (jupyter-jcli 0.9.7's text shape): a listing is one JSON text of its
  // provenance and outputs; a read is the payload itself (raw text, compact JSON, the stream's
  // text, the error as JSON, or the saved image) followed by one JSON text of its provenance and
  // output facts (type, mime, the other MIME types, the stream's name, the page when truncated).
  function render(_args, value) {
    if (Array.isArray(value?.outputs)) {
      const outputs = value.outputs.map((entry) => {
        if (entry === null || typeof entry !== "object") return entry
        const row = { index: entry.output_index, type: entry.output_type, mime: Array.isArray(entry.available_mime_types) ? entry.available_mime_types : [] }
        if (entry.output_type === "stream") row.name = entry.name
        if (entry.output_type === "error") Object.assign(row, { ename: entry.ename, evalue: entry.evalue })
        return row
      })
      return [{ type: "text", text: JSON.stringify({ provenance: provenance(value.source, false), outputs }) }]
    }
    const selected = value?.selected && typeof value.selected === "object" ? value.selected : undefined
    const stream = value?.stream && typeof value.stream === "object" ? value.stream : undefined
    const available = Array.isArray(value?.available_mime_types) ? value.available_mime_types : []
    const facts = { type: value?.output_type }
    if (selected) facts.mime = selected.mime_type
    if (available.length > 1) facts.available = available
    if (stream) facts.name = stream.name
    const paged = selected ?? stream
    if (paged?.truncated === true) {
      facts.page = { offset: paged.offset, returned: paged.returned_characters, total: paged.total_characters }
      if (paged.next_offset !== undefined) facts.page.next_offset = paged.next_offset
    }
    const metadata = { type: "text", text: JSON.stringify({ provenance: provenance(value?.source, true), output: facts }) }
    if (selected?.attachment) return [{ type: "image", attachment: selected.attachment }, metadata]
    if (selected && selected.encoding === "json") return [{ type: "text", text: JSON.stringify(selected.data) }, metadata]
    if (selected && typeof selected.data === "string") return [{ type: "text", text: selected.data }, metadata]
    if (stream && typeof stream.data === "string") return [{ type: "text", text: stream.data }, metadata]
    if (value?.error && typeof value.error === "object") return [{ type: "text", text: JSON.stringify(value.error) }, metadata]
    return [metadata]
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

  const clip = (text) => (text.length <= diagnosticMaxChars ? text : `${text.slice(0, diagnosticMaxChars - 3)}...`)
  const context = (text) => ({
    id: `jcli-dsh-${Date.now()}-${Math.random().toString(16).slice(2)}`,
    role: "user",
    content: [{ type: "text", text }],
    source: { kind: "jcli-dsh" },
  })
  const throwIfAborted = (signal) => {
    if (signal?.aborted) throw abortError()
  }

  // One guard process for `exec`: `j-cli _hooks NAME --platform dsh` (jupyter-jcli 0.9.7's hook
  // contract: exit 0 no decision, or a structured deny on stdout; exit 2 a deny, its reason on
  // stderr; anything else a failure), or `j-cli hook guard --host dsh` (ours: one JSON decision)
  // for the tools the reference's plugin does not route. Answers { deny }, { ok, context } or
  // { failed: diagnostic }; throws AbortError when the call was cancelled.
  async function runGuard(exec, hook, event) {
    const session = exec.agent?.session
    const payload = {
      session_id: session?.header?.id ?? session?.id ?? "",
      cwd: session?.header?.cwd ?? process.cwd(),
      hook_event_name: event,
      tool_name: exec.name,
      tool_input: exec.arguments,
      tool_use_id: String(exec.callId ?? ""),
    }
    const label = hook ?? "hook guard"
    const argv = hook ? ["_hooks", hook, "--platform", "dsh"] : ["hook", "guard", "--host", "dsh"]
    let result
    try {
      throwIfAborted(exec.signal)
      result = await runJcli(argv, { agent: exec.agent, signal: exec.signal, stdin: JSON.stringify(payload), limitMs: guardTimeoutMs })
    } catch (error) {
      if (error?.name === "AbortError" || exec.signal?.aborted) throw abortError()
      return { failed: clip(`jcli-dsh: ${label} failed (no exit code); error: ${error?.message ?? error}`) }
    }
    const stdout = result.stdout.trim()
    const stderr = result.stderr.trim()
    const doc = jsonObject(stdout)
    if (!hook) {
      if (result.exitCode === 0 && (doc?.decision === "deny" || doc?.decision === "allow")) {
        return doc.decision === "deny" ? { deny: doc.reason || "Blocked by jupyter-jcli." } : { ok: true }
      }
    } else {
      const specific = doc?.hookSpecificOutput
      const structuredDeny =
        specific?.permissionDecision === "deny"
          ? (typeof specific.permissionDecisionReason === "string" && specific.permissionDecisionReason.trim()) || GENERIC_DENY
          : undefined
      const added = typeof specific?.additionalContext === "string" ? specific.additionalContext.trim() : ""
      if (result.exitCode === 0) {
        if (event === "PreToolUse") return structuredDeny ? { deny: clip(structuredDeny) } : { ok: true }
        return { ok: true, context: added ? clip(added) : undefined }
      }
      if (event === "PreToolUse" && result.exitCode === 2) {
        return { deny: clip(stderr || structuredDeny || `j-cli ${hook} denied this tool call`) }
      }
    }
    // A failure: its status, the stderr (without the line that repeats the hook's own context),
    // the context or the stdout.
    const status =
      result.exitCode !== undefined && result.exitCode !== null
        ? `exit code ${result.exitCode}`
        : result.signal
          ? `signal ${result.signal}`
          : result.timedOut
            ? "timed out"
            : "no exit code"
    const added = typeof doc?.hookSpecificOutput?.additionalContext === "string" ? doc.hookSpecificOutput.additionalContext.trim() : ""
    const repeated = added ? `${hook}: ${added}` : ""
    let own = stderr
    if (repeated && own === repeated) own = ""
    else if (repeated && own.endsWith(`\n${repeated}`)) own = own.slice(0, -(repeated.length + 1)).trimEnd()
    const pieces = [`jcli-dsh: ${label} failed (${status})`]
    if (own) pieces.push(`stderr: ${own}`)
    if (added && own !== stderr) pieces.push(added)
    else if (stdout) pieces.push(`stdout: ${stdout}`)
    return { failed: clip(pieces.join("; ")) }
  }

  // Which edit/write calls reach the pair guards (as jupyter-jcli 0.9.7's plugin routes them,
  // without starting a process for the rest): a malformed call (the guard reports it), a
  // `.ipynb` before the edit, a `.py` whose paired `.ipynb` exists (or cannot be checked), each
  // resolved against the session folder and the call's workdir.
  function needsPairGuard(exec, phase) {
    const args = exec.arguments
    if (args === null || typeof args !== "object" || Array.isArray(args)) return true
    const cwd = exec.agent?.session?.header?.cwd ?? process.cwd()
    if (typeof cwd !== "string") return true
    if (args.workdir !== undefined && typeof args.workdir !== "string") return true
    const target = args.file_path
    if (typeof target !== "string" || target.trim() === "" || target.includes("\0")) return true
    const file = resolvePath(cwd, args.workdir || ".", target)
    const suffix = extname(file)
    if (suffix === ".ipynb") return phase === "pre"
    if (suffix !== ".py") return false
    try {
      statSync(`${file.slice(0, -3)}.ipynb`)
      return true
    } catch (error) {
      return !(error?.code === "ENOENT" || error?.code === "ENOTDIR")
    }
  }

  function report(exec, diagnostic) {
    warn(diagnostic)
    try {
      exec.agent?.inject?.(context(diagnostic))
    } catch (error) {
      warn(`jcli-dsh: the guard diagnostic could not be shown to the agent: ${error?.message ?? error}`)
    }
  }

  const isPairTool = (toolName) => toolName === "edit" || toolName === "write"

  ctx.on("tools/pre-execute", async (exec, next) => {
    const toolName = String(exec?.name).toLowerCase()
    let hooksToRun
    if (toolName === "bash") hooksToRun = ["notebook-exec-guard", "python-run-guard"]
    else if (isPairTool(toolName)) hooksToRun = needsPairGuard(exec, "pre") ? ["pair-drift-guard-pre"] : []
    else if (GUARDED_TOOLS.has(toolName)) hooksToRun = [null]
    else return next()
    for (const hook of hooksToRun) {
      const verdict = await runGuard(exec, hook, "PreToolUse")
      if (verdict.deny !== undefined) return { kind: "deny", reason: verdict.deny }
      if (verdict.failed) report(exec, verdict.failed)
    }
    throwIfAborted(exec.signal)
    return next()
  })

  // After an edit/write of a paired script: `_hooks pair-drift-guard-post`, which never decides
  // (ours keeps no pair sync); its context or failure is prepended to the downstream decision.
  ctx.on("tools/post-execute", async (exec, _result, next) => {
    if (!isPairTool(String(exec?.name).toLowerCase())) return next()
    throwIfAborted(exec.signal)
    const outcome = needsPairGuard(exec, "post") ? await runGuard(exec, "pair-drift-guard-post", "PostToolUse") : undefined
    throwIfAborted(exec.signal)
    const downstream = await next()
    throwIfAborted(exec.signal)
    const text = outcome?.failed ?? outcome?.context
    if (outcome?.failed) warn(outcome.failed)
    if (!text) return downstream
    return { ...downstream, additionalContexts: [context(text), ...(downstream?.additionalContexts ?? [])] }
  })
}
