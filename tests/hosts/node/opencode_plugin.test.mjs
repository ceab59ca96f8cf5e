// The OpenCode plugin file, loaded as OpenCode loads it (every export is a plugin function, called
// with { client, directory, worktree, ... }, answering its hooks), with `@opencode-ai/plugin` either
// the real package (JCLI_OPENCODE_NODE_MODULES) or a stub of `tool()`.
import assert from "node:assert/strict"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { after, test } from "node:test"
import { pathToFileURL } from "node:url"
import { SKIP, answer, loadContract } from "./contract.mjs"

// A stand-in for @opencode-ai/plugin: tool() returns its input (as the real one does) and
// tool.schema records each argument's kind and whether it is optional.
const STUB = `
function kind(name) {
  const node = { schemaKind: name, isOptional: false }
  const chain = new Proxy(node, {
    get(target, prop) {
      if (prop in target) return target[prop]
      return (...args) => {
        if (prop === "optional") target.isOptional = true
        if (prop === "describe") target.description = args[0]
        return chain
      }
    },
  })
  return chain
}
export function tool(input) { return input }
tool.schema = {
  string: () => kind("string"),
  number: () => kind("number"),
  boolean: () => kind("boolean"),
  array: () => kind("array"),
}
`

const folder = SKIP ? null : mkdtempSync(join(tmpdir(), "jcli-opencode-"))
after(() => folder && rmSync(folder, { recursive: true, force: true }))

async function loadPlugin() {
  writeFileSync(join(folder, "package.json"), JSON.stringify({ type: "module" }))
  const real = process.env.JCLI_OPENCODE_NODE_MODULES
  if (real) {
    symlinkSync(real, join(folder, "node_modules"), "dir")
  } else {
    const stub = join(folder, "node_modules", "@opencode-ai", "plugin")
    mkdirSync(stub, { recursive: true })
    writeFileSync(join(stub, "package.json"), JSON.stringify({ name: "@opencode-ai/plugin", type: "module", main: "index.js" }))
    writeFileSync(join(stub, "index.js"), STUB)
  }
  const file = join(folder, "jcli.js")
  copyFileSync(process.env.JCLI_OPENCODE_PLUGIN, file)
  return import(pathToFileURL(file).href)
}

// What OpenCode gives a tool: the session's folders, an abort signal, and ask() (recorded here).
function toolContext(project, asked) {
  return {
    directory: project,
    worktree: project,
    abort: new AbortController().signal,
    async ask(request) {
      asked.push(request)
    },
  }
}

test("the OpenCode plugin module exports only plugin functions", { skip: SKIP }, async () => {
  const module = await loadPlugin()
  // OpenCode calls every export as a plugin: one that is not a function stops the file loading.
  assert.deepEqual(Object.keys(module), ["JupyterJcliPlugin"])
  assert.equal(typeof module.JupyterJcliPlugin, "function")
  const hooks = await module.JupyterJcliPlugin({ directory: loadContract().project, client: {} })
  assert.deepEqual(Object.keys(hooks.tool), ["read_notebook_output"])
  assert.equal(typeof hooks["tool.execute.before"], "function")
})

test("the OpenCode tool gives the MCP server's answers to the same calls", { skip: SKIP }, async () => {
  const contract = loadContract()
  const { JupyterJcliPlugin } = await loadPlugin()
  const tool = (await JupyterJcliPlugin({ directory: contract.project, client: {} })).tool.read_notebook_output
  assert.equal(typeof tool.execute, "function")
  assert.deepEqual(Object.keys(tool.args).sort(), contract.arguments)
  if (!process.env.JCLI_OPENCODE_NODE_MODULES) {
    const required = Object.keys(tool.args).filter((key) => !tool.args[key].isOptional)
    assert.deepEqual(required.sort(), ["cell_index", "file_path"])
  }
  for (const item of contract.calls) {
    let got
    const asked = []
    try {
      const result = await tool.execute(item.args, toolContext(contract.project, asked))
      // OpenCode's ToolResult: { title, output, metadata, attachments? }
      assert.equal(typeof result.title, "string")
      assert.equal(typeof result.output, "string")
      const json = JSON.parse(result.output)
      assert.deepEqual(result.metadata.source, json.source)
      const images = (result.attachments ?? []).map((a) => {
        const match = /^data:([^;]+);base64,(.*)$/s.exec(a.url)
        assert.equal(a.type, "file")
        assert.equal(a.mime, match[1])
        return { mime_type: match[1], data: match[2] }
      })
      got = answer(false, json, images)
      // it asked OpenCode's read permission for the notebook, as OpenCode's read tool does
      assert.deepEqual(asked, [
        { permission: "read", patterns: [join(contract.project, item.args.file_path)], always: ["*"], metadata: {} },
      ])
    } catch (error) {
      got = answer(true, JSON.parse(error.message))
    }
    assert.deepEqual(got, item.expected, JSON.stringify(item.args))
  }
})

test("the plugin's guard blocks a raw notebook write and lets other calls through", { skip: SKIP }, async () => {
  const contract = loadContract()
  const { JupyterJcliPlugin } = await loadPlugin()
  const logged = []
  const client = { app: { log: async ({ body }) => logged.push(body) } }
  const before = (await JupyterJcliPlugin({ directory: contract.project, client }))["tool.execute.before"]
  const input = (tool) => ({ tool, sessionID: "s", callID: "c" })
  await assert.rejects(
    before(input("bash"), { args: { command: "echo {} > x.ipynb", description: "x" } }),
    (error) => error.message.startsWith("Blocked by jupyter-jcli") && error.message.includes("x.ipynb"),
  )
  await assert.rejects(before(input("write"), { args: { filePath: "a.ipynb", content: "{}" } }), /Blocked by jupyter-jcli/)
  await assert.rejects(
    before(input("apply_patch"), { args: { patchText: "*** Begin Patch\n*** Add File: n.ipynb\n+{}\n*** End Patch" } }),
    /Blocked by jupyter-jcli/,
  )
  await assert.rejects(before(input("bash"), { args: { command: "papermill a.ipynb b.ipynb" } }), /jupyter-mcp/)
  assert.equal(await before(input("bash"), { args: { command: "ls -la" } }), undefined)
  assert.equal(await before(input("edit"), { args: { filePath: "a.py", oldString: "a", newString: "b" } }), undefined)
  assert.equal(await before(input("read"), { args: { filePath: "a.ipynb" } }), undefined)
  assert.deepEqual(logged, [])
})
