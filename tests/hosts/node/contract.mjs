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

// A simulated DSH shell service, as jupyter-jcli 0.9.7's contract tests model DSH's: resolve(request)
// gives a spec, execute(spec) starts the command line (request.command, run by /bin/sh -c in
// request.workdir with request.stdin) as a real subprocess and returns a handle whose async
// result() gives { exitCode, signal, timedOut, aborted, stdout: { text, truncated }, stderr: { text } }.
export function simulatedShell({ log = [], cwd } = {}) {
  return {
    log,
    resolve(request) {
      log.push({ op: "resolve", request })
      return { ...request }
    },
    async execute(spec) {
      log.push({ op: "execute", spec })
      const child = spawn("/bin/sh", ["-c", spec.command], { cwd: spec.workdir ?? cwd, stdio: ["pipe", "pipe", "pipe"] })
      const out = []
      const err = []
      let outBytes = 0
      let truncated = false
      child.stdout.on("data", (c) => {
        outBytes += c.length
        if (spec.stdoutMaxBytes !== undefined && outBytes > spec.stdoutMaxBytes) truncated = true
        else out.push(c)
      })
      child.stderr.on("data", (c) => err.push(c))
      // The child may exit before it has read its stdin: writing then fails with EPIPE, emitted
      // on child.stdin (an unhandled 'error' would crash the whole test process). Like a shell
      // (`yes | head -1`), a pipe the reader closed is no failure of its own.
      let stdinError = null
      child.stdin.on("error", (error) => {
        if (error.code !== "EPIPE" && error.code !== "ECONNRESET") stdinError = error
      })
      let timedOut = false
      const done = new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          timedOut = true
          child.kill("SIGKILL")
        }, spec.timeoutMs ?? 60000)
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
          resolve({
            exitCode: code,
            signal,
            timedOut,
            aborted: false,
            timeoutMs: spec.timeoutMs,
            stdout: { text: Buffer.concat(out).toString("utf8"), truncated },
            stderr: { text: Buffer.concat(err).toString("utf8") },
          })
        })
      })
      child.stdin.end(spec.stdin ?? "")
      return { result: () => done }
    },
  }
}
