// The DSH plugin, driven with a simulated shell service and execution handle (Node's test runner).
import assert from "node:assert/strict"
import { test } from "node:test"
import { pathToFileURL } from "node:url"
import { SKIP, answer, loadContract, simulatedShell } from "./contract.mjs"

async function loadPlugin() {
  return import(pathToFileURL(process.env.JCLI_DSH_PLUGIN).href)
}

async function call(plugin, args) {
  try {
    const result = await plugin.tools.read_notebook_output.execute(args)
    assert.equal(result.text, JSON.stringify(result.json))
    return answer(false, result.json, result.images)
  } catch (error) {
    assert.equal(error.name, "JcliPluginError", String(error))
    assert.equal(error.message, JSON.stringify(error.document))
    return answer(true, error.document)
  }
}

test("the DSH plugin gives the MCP server's answers to the same calls", { skip: SKIP }, async () => {
  const contract = loadContract()
  const module = await loadPlugin()
  const shell = simulatedShell()
  const plugin = module.default({ shell, cwd: contract.project })
  assert.equal(module.name, "jupyter-jcli")
  assert.deepEqual(Object.keys(plugin.tools.read_notebook_output.inputSchema.properties).sort(), contract.arguments)
  for (const item of contract.calls) {
    assert.deepEqual(await call(plugin, item.args), item.expected, JSON.stringify(item.args))
  }
  const ops = shell.log.map((entry) => entry.op)
  assert.ok(ops.length >= 2 * contract.calls.length - 2, "every call went through resolve and execute")
  assert.deepEqual(ops.slice(0, 2), ["resolve", "execute"])
})

test("the DSH guard awaits the result and returns the j-cli decision", { skip: SKIP }, async () => {
  const contract = loadContract()
  const plugin = (await loadPlugin()).createPlugin({ shell: simulatedShell(), cwd: contract.project })
  const denied = await plugin.guard({ tool_name: "shell", tool_input: { command: "papermill a.ipynb b.ipynb" } })
  assert.equal(denied.decision, "deny")
  assert.equal(denied.rule, "notebook-execution")
  assert.match(denied.reason, /jupyter-mcp/)
  const edit = await plugin.guard({ tool_name: "write", tool_input: { path: "x.ipynb", content: "{}" } })
  assert.equal(edit.decision, "deny")
  assert.deepEqual(await plugin.guard({ tool_name: "shell", tool_input: { command: "ls" } }), { decision: "allow" })
})

test("a non-zero exit or unparseable output is an error, never a success", { skip: SKIP }, async () => {
  const contract = loadContract()
  const { createPlugin } = await loadPlugin()
  const node = process.execPath
  const cases = [
    [node, "-e", "process.stdout.write('not json')"],
    [node, "-e", "process.stdout.write(JSON.stringify({decision: 'allow', status: 'ok'})); process.exit(3)"],
    [node, "-e", "process.stdout.write(JSON.stringify({decision: 'maybe'}))"],
  ]
  for (const command of cases) {
    const plugin = createPlugin({ shell: simulatedShell(), cwd: contract.project, command })
    await assert.rejects(plugin.guard({ tool_name: "shell", tool_input: { command: "ls" } }), (error) => {
      assert.equal(error.code, "INTERNAL_ERROR")
      return true
    })
    await assert.rejects(plugin.tools.read_notebook_output.execute({ file_path: "a.ipynb", cell_index: 0 }), (error) => {
      assert.equal(error.code, "INTERNAL_ERROR")
      return true
    })
  }
  const broken = {
    async resolve(request) {
      return request
    },
    async execute() {
      return { result: async () => Promise.reject(new Error("the process vanished")) }
    },
  }
  const plugin = createPlugin({ shell: broken, cwd: contract.project })
  await assert.rejects(plugin.guard({ tool_name: "shell", tool_input: { command: "ls" } }), /the process vanished/)
  assert.throws(() => createPlugin({}), TypeError)
})

test("a command that exits before reading its stdin is a failure, never a crash", { skip: SKIP }, async () => {
  // 4 MiB of event is far more than a pipe buffer, so writing it to a child that exits without
  // reading always fails with EPIPE: the regression was an uncaught EPIPE from child.stdin.
  const contract = loadContract()
  const { createPlugin } = await loadPlugin()
  const event = { tool_name: "shell", tool_input: { command: "echo " + "a".repeat(4 * 1024 * 1024) } }
  const early = [process.execPath, "-e", "process.exit(3)"]
  const plugin = createPlugin({ shell: simulatedShell(), cwd: contract.project, command: early })
  await assert.rejects(plugin.guard(event), (error) => {
    assert.equal(error.code, "INTERNAL_ERROR")
    assert.equal(error.document.details.exit_code, 3)
    return true
  })
  const handle = await simulatedShell().execute({
    argv: [process.execPath, "-e", "process.stdout.write('early')"],
    stdin: "x".repeat(4 * 1024 * 1024),
  })
  assert.deepEqual(await handle.result(), { exitCode: 0, stdout: "early", stderr: "" })
})
