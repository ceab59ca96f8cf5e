"""Tool results shared by the MCP servers (jupyter_jcli.mcp._results), in process."""

from __future__ import annotations

import base64
import json

import mcp_types as types
import pytest

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.mcp import (
    IMAGE_DELIVERY,
    ImagePart,
    error_result,
    exception_result,
    json_result,
    json_text,
    protocol_result,
)
from jupyter_jcli.mcp._model_text import model_view
from tool_results import checked_result

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def test_json_result_carries_the_same_json_as_text_and_structured_content() -> None:
    document = {"schema_version": 1, "status": "ok", "name": "café", "n": [1, 2]}
    result = json_result(document, images=[ImagePart("image/png", PNG)])
    assert not result.is_error
    assert json.loads(_text(result)) == document == result.structured_content
    assert "café" in _text(result)  # non-ASCII kept, not escaped
    image = result.content[1]
    assert isinstance(image, types.ImageContent)
    assert (image.mime_type, image.data) == ("image/png", PNG)


def test_protocol_result_moves_raster_bytes_into_image_content() -> None:
    read = {
        "schema_version": 1,
        "status": "ok",
        "selected": {"mime_type": "image/png", "encoding": "base64", "bytes": 24, "data": PNG},
    }
    result = protocol_result(read)
    assert [block.type for block in result.content] == ["text", "image"]
    assert PNG not in _text(result)
    assert result.structured_content is not None
    assert result.structured_content["selected"] == {
        "mime_type": "image/png",
        "encoding": "base64",
        "bytes": 24,
        "delivered_as": IMAGE_DELIVERY,
    }
    assert read["selected"]["data"] == PNG  # the caller's document is not modified


def test_protocol_result_leaves_text_and_json_reads_whole() -> None:
    for selected in (
        {"mime_type": "text/plain", "encoding": "text", "data": "hi"},
        {"mime_type": "application/json", "encoding": "json", "data": {"a": 1}},
        {"mime_type": "image/svg+xml", "encoding": "text", "data": "<svg/>"},
    ):
        result = protocol_result({"schema_version": 1, "status": "ok", "selected": selected})
        assert len(result.content) == 1
        assert result.structured_content is not None
        assert result.structured_content["selected"] == selected


def test_error_result_is_the_error_json_as_its_only_text_and_has_no_structured_content() -> None:
    error = JcliError(ErrorCode.PATH_NOT_ALLOWED, "outside", {"path": "/x", "roots": ["/r"]})
    result = error_result(error)
    assert result.is_error
    assert json.loads(_text(result)) == error.to_dict()
    assert len(result.content) == 1
    assert result.structured_content is None
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "structuredContent" not in wire
    assert checked_result("read_notebook_output", wire)[1]["code"] == "PATH_NOT_ALLOWED"


def test_unexpected_exceptions_become_internal_error_without_traceback() -> None:
    try:
        raise KeyError("boom")
    except KeyError as err:
        result = exception_result(err)
    is_error, document = checked_result("read_cells", result)
    assert is_error and document["code"] == "INTERNAL_ERROR"
    assert document["details"] == {"exception": "KeyError"}
    domain = exception_result(JcliError(ErrorCode.CELL_NOT_FOUND, "no cell"))
    assert checked_result("read_cells", domain)[1]["code"] == "CELL_NOT_FOUND"


def test_lone_surrogates_from_undecodable_names_become_replacement_characters() -> None:
    name = b"nb-\xff.ipynb".decode("utf-8", "surrogateescape")
    result = error_result(JcliError(ErrorCode.FILE_NOT_FOUND, f"No file {name}", {"path": name}))
    assert json.loads(json_text({"path": name})) == {"path": "nb-\ufffd.ipynb"}
    assert json.loads(_text(result))["details"]["path"] == "nb-\ufffd.ipynb"
    result.model_dump_json()  # serializable by the SDK


def test_the_shared_result_check_fails_a_document_that_drifts_from_its_schema() -> None:
    document = {"schema_version": 1, "status": "ok", "operation": "read_cells"}
    valid = json_result(document, view=model_view)
    assert checked_result("read_cells", valid)[0] is False
    with pytest.raises(AssertionError, match="model's view"):
        checked_result("read_cells", json_result(document))  # the full document as text
    with pytest.raises(AssertionError, match="output schema"):
        checked_result(
            "read_cells", json_result({"schema_version": 1, "status": "ok"}, view=model_view)
        )
    with pytest.raises(AssertionError, match="output schema"):
        checked_result("read_notebook_output", json_result({"schema_version": 1, "status": "ok"}))
    legacy = json_result(JcliError(ErrorCode.CELL_NOT_FOUND, "no cell").to_dict())
    legacy.is_error = True  # the old error shape: the error JSON as structured content too
    with pytest.raises(AssertionError, match="no structured content"):
        checked_result("read_cells", legacy)


def test_a_protocol_results_text_is_the_bytes_the_protocol_measured_and_j_cli_prints() -> None:
    from jupyter_jcli.outputs import read_output, serialize_json

    value = {"small": 1e-05, "big": 1e16, "tiny": 2.5e-7, "text": "é\u2028"}
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"application/json": value}}]  # fmt: skip
    read = read_output(outputs, 0, source={"kind": "notebook"})
    text = _text(protocol_result(read))
    assert text.encode() == serialize_json(read)
    assert '"small":1e-05' in text  # as Python writes it, and as `bytes` counted it
    assert read["selected"]["bytes"] == len(json.dumps(value, separators=(",", ":"),
                                                       ensure_ascii=False).encode())  # fmt: skip
