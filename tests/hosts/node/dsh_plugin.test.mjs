// The DSH plugin, loaded as DSH composes it (a Cordis plugin module: name, inject, apply(ctx, config))
// and driven through a context shaped as jupyter-jcli 0.9.7's contract tests model DSH's: a shell
// service whose execution handle really runs the command, a tools registry, an attachment store,
// a logger and ctx.on(). The module is the installed `.dsh/plugins/jcli.ts` (plain JavaScript): Node
// imports the same bytes from an .mjs copy (JCLI_DSH_PLUGIN_MJS).
import assert from "node:assert/strict"
import { test } from "node:test"
import { pathToFileURL } from "node:url"
import { SKIP, answer, loadContract, simulatedShell } from "./contract.mjs"

async function loadModule() {
  return import(pathToFileURL(process.env.JCLI_DSH_PLUGIN_MJS).href)
}

function harness(module, { shell, config, attachments, policy, withoutTools = false } = {}) {
  const listeners = new Map()
  const tools = []
  const logs = []
  const saved = []
  const store = attachments ?? {
    async saveImage({ data, mediaType }) {
      saved.push({ mediaType, data })
      return { attachmentId: `sha:${saved.length}`, mediaType, bytes: data.byteLength, width: 1, height: 1 }
    },
  }
  const services = { tools: { register: (tool) => tools.push(tool) }, attachments: store, sandboxPolicy: policy }
  const ctx = {
    shell,
    logger: { warn: (message) => logs.push(String(message)) },
    get: (key) => (withoutTools && key === "tools" ? undefined : services[key]),
    on: (event, listener) => listeners.set(event, listener),
  }
  module.apply(ctx, config)
  return { tools, logs, saved, pre: listeners.get("tools/pre-execute"), post: listeners.get("tools/post-execute") }
}

function agent(cwd) {
  const injected = []
  return { session: { id: "s1", header: { cwd, id: "s1" } }, injected, inject: (message) => injected.push(message) }
}

function exec(name, args, options = {}) {
  return { callId: "call-1", name, arguments: args, signal: new AbortController().signal, ...options }
}

// The tool's answer as the MCP server gives it: the document the tool resolves to (a saved image
// taken out of it), the images from the host's attachment store.
async function call(tool, args, run, saved) {
  try {
    const value = await tool.execute(args, run)
    const blocks = tool.output.render(args, value)
    const attachment = value.selected?.attachment
    const images = blocks.filter((block) => block.type === "image").map((block) => {
      assert.deepEqual(block.attachment, attachment)
      const image = saved[Number(block.attachment.attachmentId.split(":")[1]) - 1]
      return { mime_type: image.mediaType, data: Buffer.from(image.data).toString("base64") }
    })
    const json = attachment ? { ...value, selected: Object.fromEntries(Object.entries(value.selected).filter(([key]) => key !== "attachment")) } : value
    return answer(false, json, images)
  } catch (error) {
    assert.equal(error.name, "JcliPluginError", String(error))
    assert.equal(error.message, JSON.stringify(error.document))
    return answer(true, error.document)
  }
}

test("the module has the Cordis plugin shape DSH composes", { skip: SKIP }, async () => {
  const module = await loadModule()
  assert.equal(module.name, "jcli-dsh")
  assert.deepEqual(module.inject, ["shell"])
  assert.equal(typeof module.apply, "function")
  for (const hooks of [false, true]) {
    for (const tools of [false, true]) {
      const h = harness(module, { shell: simulatedShell(), config: { hooks, tools } })
      assert.equal(typeof h.pre === "function", hooks)
      assert.equal(typeof h.post === "function", hooks)
      assert.equal(h.tools.length, tools ? 1 : 0)
    }
  }
  const registered = harness(module, { shell: simulatedShell() }).tools[0]
  assert.equal(registered.name, "read_notebook_output")
  assert.deepEqual(registered.output.schema, {})
  assert.equal(registered.isConcurrencySafe(), true)
  const missing = harness(module, { shell: simulatedShell(), withoutTools: true })
  assert.equal(missing.tools.length, 0)
  assert.match(missing.logs[0], /no tools service/)
  assert.throws(() => module.apply({ on() {} }), TypeError)
  assert.throws(() => harness(module, { shell: { ...simulatedShell(), sandboxMode: "workspace-write" } }), /sandboxPolicy/)
})

test("the DSH tool gives the MCP server's answers to the same calls", { skip: SKIP }, async () => {
  const contract = loadContract()
  const module = await loadModule()
  const shell = simulatedShell()
  const h = harness(module, { shell })
  const tool = h.tools[0]
  assert.deepEqual(Object.keys(tool.parameters.properties).sort(), contract.arguments)
  const run = { agent: agent(contract.project), signal: new AbortController().signal }
  for (const item of contract.calls) {
    assert.deepEqual(await call(tool, item.args, run, h.saved), item.expected, JSON.stringify(item.args))
  }
  const resolved = shell.log.filter((entry) => entry.op === "resolve").map((entry) => entry.request)
  assert.ok(resolved.length >= contract.calls.length - 1, "every call went through the shell service")
  for (const request of resolved) {
    assert.equal(request.workdir, contract.project)
    assert.equal(request.signal, run.signal)
    assert.match(request.command, / -j notebook outputs? /)
  }
})

test("a raster without the host's attachment service is refused, not inlined", { skip: SKIP }, async () => {
  const contract = loadContract()
  const module = await loadModule()
  const h = harness(module, { shell: simulatedShell(), attachments: {} })
  const image = contract.calls.find((item) => item.expected.images?.length)
  const run = { agent: agent(contract.project), signal: new AbortController().signal }
  await assert.rejects(h.tools[0].execute(image.args, run), (error) => error.code === "MIME_NOT_SUPPORTED")
})

test("the guard denies a raw notebook write and whole-notebook runs, and lets the rest through", { skip: SKIP }, async () => {
  const contract = loadContract()
  const module = await loadModule()
  const shell = simulatedShell()
  const requests = []
  const policy = {
    resolve(request) {
      requests.push(request)
      return { mode: "workspace-write" }
    },
  }
  const h = harness(module, { shell: { ...shell, sandboxMode: "workspace-write" }, policy })
  const a = agent(contract.project)
  let nextCalls = 0
  const next = async () => {
    nextCalls++
    return { kind: "allow" }
  }
  const denied = await h.pre(exec("bash", { command: "echo {} > x.ipynb" }, { agent: a }), next)
  assert.equal(denied.kind, "deny")
  assert.match(denied.reason, /^notebook-exec-guard: Blocked by jupyter-jcli/)
  assert.equal((await h.pre(exec("bash", { command: "papermill a.ipynb b.ipynb" }, { agent: a }), next)).kind, "deny")
  assert.equal((await h.pre(exec("write", { file_path: "x.ipynb", content: "{}" }, { agent: a }), next)).kind, "deny")
  assert.equal(nextCalls, 0)
  assert.deepEqual(await h.pre(exec("bash", { command: "ls -la" }, { agent: a }), next), { kind: "allow" })
  assert.deepEqual(await h.pre(exec("read", { file_path: "x.ipynb" }, { agent: a }), next), { kind: "allow" })
  assert.equal(nextCalls, 2)
  assert.equal((await h.pre(exec("multiedit", { file_path: "x.ipynb", edits: [] }, { agent: a }), next)).kind, "deny")
  assert.deepEqual(await h.pre(exec("write", { file_path: "notes.md", content: "x" }, { agent: a }), next), { kind: "allow" })
  assert.equal(nextCalls, 3)
  const guardCalls = shell.log.filter((entry) => entry.op === "resolve").map((entry) => entry.request)
  // jupyter-jcli 0.9.7's routing: bash runs two guards (the second only when the first does not
  // deny), write/edit of a notebook (or of a paired script) the pair guard, an unrelated file or
  // an unguarded tool (read) none; the other edit, patch and shell tools our one guard.
  assert.deepEqual(guardCalls.map((request) => request.command.split(" ").slice(1).join(" ")), [
    "_hooks notebook-exec-guard --platform dsh",
    "_hooks notebook-exec-guard --platform dsh",
    "_hooks pair-drift-guard-pre --platform dsh",
    "_hooks notebook-exec-guard --platform dsh",
    "_hooks python-run-guard --platform dsh",
    "hook guard --host dsh",
  ])
  for (const request of guardCalls) {
    assert.equal(request.workdir, contract.project)
    assert.deepEqual(request.sandboxPolicy, { mode: "workspace-write" })
    const event = JSON.parse(request.stdin)
    assert.equal(event.hook_event_name, "PreToolUse")
    assert.equal(event.cwd, contract.project)
  }
  assert.deepEqual(a.injected, [])
  assert.deepEqual(requests[0], { session: a.session })
})

test("the guard fails open with a diagnostic; a tool failure is an error, never a success", { skip: SKIP }, async () => {
  const contract = loadContract()
  const module = await loadModule()
  const node = process.execPath
  // A guard that cannot answer: a non-zero exit that is not a deny, or (our guard) no decision.
  const scripts = [
    ["bash", { command: "ls" }, "process.stderr.write('boom'); process.exit(1)", /notebook-exec-guard failed \(exit code 1\); stderr: boom/],
    ["bash", { command: "ls" }, "process.stdout.write(JSON.stringify({decision: 'deny', status: 'ok'})); process.exit(3)", /exit code 3/],
    ["multiedit", { file_path: "x.ipynb" }, "process.stdout.write('not json')", /hook guard failed \(exit code 0\); stdout: not json/],
    ["multiedit", { file_path: "x.ipynb" }, "process.stdout.write(JSON.stringify({decision: 'maybe'}))", /maybe/],
  ]
  for (const [name, args, script, diagnostic] of scripts) {
    const h = harness(module, { shell: simulatedShell(), config: { executable: [node, "-e", script] } })
    const a = agent(contract.project)
    const decision = await h.pre(exec(name, args, { agent: a }), async () => ({ kind: "allow" }))
    assert.deepEqual(decision, { kind: "allow" })
    assert.ok(a.injected.length >= 1)
    assert.match(a.injected[0].content[0].text, diagnostic)
    assert.deepEqual(a.injected[0].source, { kind: "jcli-dsh" })
    assert.equal(h.logs.length, a.injected.length)
    await assert.rejects(h.tools[0].execute({ file_path: "a.ipynb", cell_index: 0 }, { signal: new AbortController().signal }), (error) => {
      assert.equal(error.code, "INTERNAL_ERROR")
      return true
    })
  }
  const broken = {
    resolve: (request) => request,
    async execute() {
      return { result: async () => Promise.reject(new Error("the process vanished")) }
    },
  }
  const h = harness(module, { shell: broken })
  const a = agent(contract.project)
  assert.deepEqual(await h.pre(exec("bash", { command: "ls" }, { agent: a }), async () => ({ kind: "allow" })), { kind: "allow" })
  assert.match(a.injected[0].content[0].text, /the process vanished/)
  await assert.rejects(h.tools[0].execute({ file_path: "a.ipynb", cell_index: 0 }, {}), (error) => error.code === "INTERNAL_ERROR")
  const aborted = { resolve: (request) => request, async execute() { return { result: async () => ({ aborted: true }) } } }
  const cancel = harness(module, { shell: aborted })
  await assert.rejects(
    cancel.pre(exec("bash", { command: "ls" }), async () => assert.fail("a cancelled call must not go on")),
    (error) => error.name === "AbortError",
  )
})

test("the model sees jupyter-jcli 0.9.7's text shape: a listing's rows, a read's payload then its facts", { skip: SKIP }, async () => {
  const contract = loadContract()
  const module = await loadModule()
  const h = harness(module, { shell: simulatedShell() })
  const tool = h.tools[0]
  const run = { agent: agent(contract.project), signal: new AbortController().signal }
  const listing = contract.calls.find((item) => item.args.output_index === undefined && !item.expected.is_error)
  const listed = await tool.execute(listing.args, run)
  const [rows, ...rest] = tool.output.render(listing.args, listed)
  assert.deepEqual(rest, [])
  const shown = JSON.parse(rows.text)
  assert.deepEqual(shown.provenance, { path: listed.source.path, cell: listed.source.cell_index })
  assert.deepEqual(shown.outputs.map((row) => [row.index, row.type, row.mime]),
    listed.outputs.map((entry) => [entry.output_index, entry.output_type, entry.available_mime_types]))
  const text = contract.calls.find((item) => !item.expected.is_error && item.expected.json.selected?.encoding === "utf-8")
  const read = await tool.execute(text.args, run)
  const [payload, facts] = tool.output.render(text.args, read)
  assert.deepEqual(payload, { type: "text", text: read.selected.data })
  const metadata = JSON.parse(facts.text)
  assert.equal(metadata.output.type, read.output_type)
  assert.equal(metadata.output.mime, read.selected.mime_type)
  assert.equal(metadata.provenance.output, read.source.output_index)
  assert.equal(facts.text.includes("schema_version"), false)
})

test("an edit of a paired script runs the pair guards before and after; an unrelated file none", { skip: SKIP }, async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs")
  const { join } = await import("node:path")
  const { tmpdir } = await import("node:os")
  const module = await loadModule()
  const folder = mkdtempSync(join(tmpdir(), "jcli-dsh-pair-"))
  try {
    writeFileSync(join(folder, "book.ipynb"), "{}")
    const shell = simulatedShell()
    const h = harness(module, { shell })
    const a = agent(folder)
    const downstream = { kind: "accept", additionalContexts: [] }
    for (const file_path of ["book.py", "notes.md", "other.py"]) {
      const call = exec("edit", { file_path, old_string: "a", new_string: "b" }, { agent: a })
      assert.deepEqual(await h.pre(call, async () => ({ kind: "allow" })), { kind: "allow" })
      assert.equal(await h.post(call, {}, async () => downstream), downstream)
    }
    const commands = shell.log.filter((entry) => entry.op === "resolve").map((entry) => entry.request.command.split(" ").slice(1).join(" "))
    assert.deepEqual(commands, ["_hooks pair-drift-guard-pre --platform dsh", "_hooks pair-drift-guard-post --platform dsh"])
    assert.deepEqual(a.injected, [])
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
})
