"""A scripted OpenAI-compatible chat model on localhost, so a real host runs a session offline.

``python scripted_model.py PORT_FILE LOG_FILE CALLS_JSON`` serves ``POST /v1/chat/completions``
(streamed, Server-Sent Events as the OpenAI chat completions API sends them) and writes the port
it listens on to ``PORT_FILE``. A request that offers tools is answered with the next tool call
of ``CALLS_JSON`` (``[{"name": ..., "arguments": {...}}]``), one per request, while calls are
left; any other request (a title request offers no tools) is answered with plain text. Every
request body is appended to ``LOG_FILE`` (one JSON line), so a test reads what the host sent
back: the tool results, a guard's denial included.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

_LOCK = threading.Lock()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, Any]]] = []
    log: ClassVar[Path]

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        with _LOCK, self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(request) + "\n")
        call = None
        if request.get("tools"):
            with _LOCK:
                call = self.calls.pop(0) if self.calls else None
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if call is not None:
            tool_call = {
                "index": 0,
                "id": f"call_scripted_{len(self.calls)}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            self.wfile.write(_chunk({"role": "assistant", "tool_calls": [tool_call]}))
            self.wfile.write(_chunk({}, "tool_calls"))
        else:
            self.wfile.write(_chunk({"role": "assistant", "content": "done"}))
            self.wfile.write(_chunk({}, "stop"))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main() -> None:
    port_file, log_file, calls = sys.argv[1:4]
    _Handler.calls = json.loads(Path(calls).read_text())
    _Handler.log = Path(log_file)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    Path(port_file).write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
