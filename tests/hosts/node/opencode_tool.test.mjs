// The OpenCode tool file, loaded as OpenCode loads it (default export of `tool({...})`), with
// `@opencode-ai/plugin` either the real package (JCLI_OPENCODE_NODE_MODULES) or a stub of `tool()`.
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

async function loadTool() {
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
  const file = join(folder, "read_notebook_output.js")
  copyFileSync(process.env.JCLI_OPENCODE_TOOL, file)
  return (await import(pathToFileURL(file).href)).default
}

test("the OpenCode tool gives the MCP server's answers to the same calls", { skip: SKIP }, async () => {
  const contract = loadContract()
  const tool = await loadTool()
  assert.equal(typeof tool.execute, "function")
  assert.deepEqual(Object.keys(tool.args).sort(), contract.arguments)
  if (!process.env.JCLI_OPENCODE_NODE_MODULES) {
    const required = Object.keys(tool.args).filter((key) => !tool.args[key].isOptional)
    assert.deepEqual(required.sort(), ["cell_index", "file_path"])
  }
  const context = { directory: contract.project, worktree: contract.project, abort: new AbortController().signal }
  for (const item of contract.calls) {
    let got
    try {
      const result = await tool.execute(item.args, context)
      if (typeof result === "string") {
        got = answer(false, JSON.parse(result), [])
      } else {
        const images = result.attachments.map((a) => {
          const match = /^data:([^;]+);base64,(.*)$/s.exec(a.url)
          assert.equal(a.mime, match[1])
          return { mime_type: match[1], data: match[2] }
        })
        got = answer(false, JSON.parse(result.output), images)
      }
    } catch (error) {
      got = answer(true, JSON.parse(error.message))
    }
    assert.deepEqual(got, item.expected, JSON.stringify(item.args))
  }
})
