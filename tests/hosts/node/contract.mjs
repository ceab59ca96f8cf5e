// Shared contract for the native adapters: the calls and the answers of the read-only MCP server,
// written by tests/hosts/test_hosts_contract.py (env JCLI_CONTRACT), and a simulated DSH shell
// service whose execution handle really runs the command as a subprocess.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"

export const CONTRACT_PATH = process.env.JCLI_CONTRACT
export const SKIP = CONTRACT_PATH ? false : "run through pytest (tests/hosts/test_hosts_contract.py)"

export function loadContract() {
  return JSON.parse(readFileSync(CONTRACT_PATH, "utf8"))
}

// One answer in the shape every front end is compared in:
// { is_error, json, images: [{ mime_type, data }] }.
// An error keeps its code, and its whole JSON unless the contract marks the code as worded by
// each front end itself (contract.loose_errors).
export function answer(isError, json, images = []) {
  if (!isError) return { is_error: false, json, images }
  assert.equal(json.schema_version, 1)
  assert.equal(json.status, "error")
  const loose = loadContract().loose_errors.includes(json.code)
  return { is_error: true, code: json.code, json: loose ? null : json }
}

// A simulated DSH shell service: resolve() builds a command spec, execute() starts a real
// subprocess and returns a handle whose async result() gives { exitCode, stdout, stderr }.
export function simulatedShell({ log = [] } = {}) {
  return {
    log,
    async resolve(request) {
      log.push({ op: "resolve", request })
      return { argv: [request.command, ...(request.args ?? [])], cwd: request.cwd, stdin: request.stdin, timeoutMs: request.timeoutMs }
    },
    async execute(spec) {
      log.push({ op: "execute", spec })
      const child = spawn(spec.argv[0], spec.argv.slice(1), { cwd: spec.cwd, stdio: ["pipe", "pipe", "pipe"] })
      const out = []
      const err = []
      child.stdout.on("data", (c) => out.push(c))
      child.stderr.on("data", (c) => err.push(c))
      // The child may exit before it has read its stdin: writing then fails with EPIPE, emitted
      // on child.stdin (an unhandled 'error' would crash the whole test process). Like a shell
      // (`yes | head -1`), a pipe the reader closed is no failure of its own: the command's answer
      // is its exit status and output, which the plugin judges. Any other stdin error fails the
      // execution (result() rejects).
      let stdinError = null
      child.stdin.on("error", (error) => {
        if (error.code !== "EPIPE" && error.code !== "ECONNRESET") stdinError = error
      })
      const done = new Promise((resolve, reject) => {
        const timer = setTimeout(() => child.kill("SIGKILL"), spec.timeoutMs ?? 60000)
        child.on("error", (e) => {
          clearTimeout(timer)
          reject(e)
        })
        child.on("close", (code, signal) => {
          clearTimeout(timer)
          if (stdinError) {
            reject(stdinError)
            return
          }
          resolve({ exitCode: code ?? signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
        })
      })
      child.stdin.end(spec.stdin ?? "")
      return { result: () => done }
    },
  }
}
