// The j-cli call of a `read_notebook_output` tool call (file_path and cell_index already checked),
// shared by the OpenCode tool and the DSH plugin (`// @include read_call.js` in each, filled in by
// setup): `{ argv }`, or `{ problem: { message, details } }` when read options come without
// output_index (each adapter throws that as its USAGE_ERROR).
const READ_OPTIONS = ["mime_type", "supported_mime_types", "offset", "limit"]

function readCall(args) {
  const used = READ_OPTIONS.filter((key) => args[key] !== undefined && args[key] !== null)
  const hasOutput = args.output_index !== undefined && args.output_index !== null
  if (!hasOutput && used.length > 0) {
    const message = `The read options ${used.sort().join(", ")} need output_index: they apply to reading one output.`
    return { problem: { message, details: { parameters: used } } }
  }
  const argv = ["-j", "notebook", hasOutput ? "output" : "outputs", args.file_path, "--cell", String(args.cell_index)]
  if (!hasOutput) return { argv }
  argv.push("--output", String(args.output_index))
  if (args.mime_type != null) argv.push("--mime", args.mime_type)
  if (args.supported_mime_types != null) argv.push("--supported-mime", args.supported_mime_types.join(","))
  if (args.offset != null) argv.push("--offset", String(args.offset))
  if (args.limit != null) argv.push("--limit", String(args.limit))
  return { argv }
}
