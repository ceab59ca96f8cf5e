// The JSON object a j-cli run printed (`text`: its stdout or stderr), or undefined when the text
// is not one; shared by the OpenCode and DSH plugins (`// @include json_object.js` in each, filled
// in by setup).
function jsonObject(text) {
  try {
    const value = JSON.parse(text)
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined
  } catch {
    return undefined
  }
}
