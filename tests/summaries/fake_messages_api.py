"""A local Anthropic Messages API on loopback for the summary tests (imported by conftest).

The server speaks ``POST /v1/messages`` as the API does (a message JSON with a text content
block, or an error JSON with an HTTP status); each test scripts its answers through
``FakeMessagesAPI.respond``. It runs in a thread of ``http.server`` on 127.0.0.1; no request
ever leaves the machine.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"

CREDENTIAL_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_CUSTOM_HEADERS",
    "JUPYTER_MCP_DISABLE_SUMMARIES",
    "JUPYTER_MCP_SUMMARY_MODEL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
HANG_LIMIT = 10.0  # seconds a "hanging" answer waits at most before the server replies anyway

Reply = tuple[int, dict[str, str], bytes]


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def user_text(self) -> str:
        content = self.body["messages"][0]["content"]
        return content if isinstance(content, str) else json.dumps(content)

    @property
    def keys(self) -> list[str]:
        """The cell keys the request asks about (from the JSON array in the user message)."""
        return re.findall(r'"key": "([0-9a-f]{16})"', self.user_text)


def message_reply(text: str, *, model: str = "claude-haiku-4-5-20251001") -> Reply:
    """A 200 answer carrying one text block, as the Messages API returns it."""
    body = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 50},
    }
    return 200, {"content-type": "application/json"}, json.dumps(body).encode()


def error_reply(status: int, kind: str = "api_error") -> Reply:
    """An API error answer (``retry-after-ms`` keeps the SDK's retry wait at 1 ms)."""
    body = {"type": "error", "error": {"type": kind, "message": "scripted failure"}}
    headers = {"content-type": "application/json", "retry-after-ms": "1"}
    return status, headers, json.dumps(body).encode()


def echo_summaries(record: Recorded) -> Reply:
    """Answer every asked key with a recognisable summary."""
    answer = {
        key: {
            "tldr": f"Summary of {key}",
            "description": f"The model describes cell {key}.\nIn two sentences.",
            "output_summary": "It shows numbers.",
        }
        for key in record.keys
    }
    return message_reply(json.dumps(answer))


@dataclass
class FakeMessagesAPI:
    """The server's state: what it received and how it answers."""

    url: str = ""
    requests: list[Recorded] = field(default_factory=list)
    respond: Callable[[Recorded], Reply | None] = echo_summaries
    release: threading.Event = field(default_factory=threading.Event)


def handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``api``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            record = Recorded(
                self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw)
            )
            api.requests.append(record)
            reply = api.respond(record)
            if reply is None:  # hang: answer only when released (bounded)
                api.release.wait(HANG_LIMIT)
                reply = message_reply("{}")
            status, headers, payload = reply
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up (timeout test)
                return

    return Handler
