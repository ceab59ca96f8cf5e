"""What one EDA loop through ``jupyter-mcp`` costs a model's context, step by step.

Run from the repository root with the project's environment (scikit-learn, pandas and
matplotlib come with the ``examples`` dependency group)::

    uv run python benchmarks/bench_context.py [--verbose]

The loop (issue 12), on a real kernel, driven over stdio through the MCP SDK's own client as a
host does, in a temporary folder (nothing is written in the repository):

1. ``create_notebook`` with 12 EDA cells on scikit-learn's bundled diabetes data: load, head,
   describe, a histogram grid, a correlation heatmap, a groupby, a split, a linear fit, a
   score, a residual plot, a 3,000-line repetitive log, a summary print;
2. ``execute_cells`` of all of them; ``read_cells`` of all of them;
3. ``update_cell`` of the data-loading cell, then ``run_stale``, then ``read_cells`` of the
   cells that ran again;
4. ``inspect_variable`` of the DataFrame;
5. another program inserts a cell into the file; ``notebook_overview`` and an ``add_cell``
   anchored after a named cell (it lands where asked, the outside cell kept);
6. ``read_cells`` with a small budget (the continuation hint must stay bounded).

Cost as a model pays it: text content characters / 4, each image width x height / 750.
Also printed: the share of JSON fields in the text content that carry no information
(``null``, ``false``, ``0``, ``""``, ``[]``, ``{}``), the text of the full ``read_cells``, and
every image's bytes against its stored original (a downscaled image must not be larger).

Targets (issue 12): the loop at most 13,000 tokens; the ``read_cells`` of the 12 cells under
6,000 characters of text; no downscaled image larger than its original. Prints a PASS/FAIL
line per target; exit status 1 if one is missed.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SESSION_TIMEOUT = 600
TOKEN_TARGET = 13_000
READ_TEXT_TARGET = 6_000
NOTEBOOK = "eda.ipynb"

CELLS: tuple[tuple[str, str], ...] = (
    (
        "load-data",
        "import pandas as pd\nfrom sklearn.datasets import load_diabetes\n"
        "data = load_diabetes(as_frame=True)\ndf = data.frame\ndf.shape",
    ),
    ("head", "df.head()"),
    ("describe", "df.describe()"),
    (
        "histograms",
        "import matplotlib.pyplot as plt\n"
        "axes = df.hist(figsize=(12, 10), bins=20)\nplt.tight_layout()\nplt.show()",
    ),
    (
        "heatmap",
        "fig, ax = plt.subplots(figsize=(8, 7))\ncorr = df.corr()\n"
        "im = ax.imshow(corr, cmap='coolwarm', vmin=-1, vmax=1)\n"
        "ax.set_xticks(range(len(corr)), corr.columns, rotation=90)\n"
        "ax.set_yticks(range(len(corr)), corr.columns)\nfig.colorbar(im)\nplt.show()",
    ),
    ("groupby", "df.groupby(df['sex'] > 0)['target'].agg(['mean', 'std', 'count'])"),
    (
        "split",
        "from sklearn.model_selection import train_test_split\n"
        "X = df.drop(columns='target')\ny = df['target']\n"
        "X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)\n"
        "print(X_train.shape, X_test.shape)",
    ),
    (
        "fit",
        "from sklearn.linear_model import LinearRegression\n"
        "model = LinearRegression()\nmodel.fit(X_train, y_train)",
    ),
    ("score", "r2 = model.score(X_test, y_test)\nprint(f'R^2 = {r2:.3f}')"),
    (
        "residuals",
        "pred = model.predict(X_test)\nfig, ax = plt.subplots(figsize=(7, 5))\n"
        "ax.scatter(pred, y_test - pred, s=12)\nax.axhline(0, color='k')\n"
        "ax.set_xlabel('predicted')\nax.set_ylabel('residual')\nplt.show()",
    ),
    (
        "training-log",
        "for step in range(3000):\n"
        "    print(f'step {step}: loss={1 / (step + 1):.4f} lr=0.001 status=ok')",
    ),
    ("summary", "print('features:', list(X.columns))\nprint('rows:', len(df))"),
)
NEW_LOAD = CELLS[0][1].replace("df = data.frame", "df = data.frame.dropna()")


@dataclass
class Step:
    """One tool call's cost."""

    label: str
    text_chars: int
    images: list[tuple[int, int]]
    fields: int
    empty_fields: int

    @property
    def text_tokens(self) -> float:
        return self.text_chars / 4

    @property
    def image_tokens(self) -> float:
        return sum(w * h / 750 for w, h in self.images)


@dataclass
class Ledger:
    """Every step, and the image byte comparisons."""

    steps: list[Step] = field(default_factory=list)
    bigger_images: list[str] = field(default_factory=list)
    image_checks: int = 0
    texts: dict[str, str] = field(default_factory=dict)


def _params(root: Path, cache: Path) -> StdioServerParameters:
    env = dict(os.environ)
    env["JUPYTER_JCLI_CACHE_DIR"] = str(cache)
    env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_jcli.mcp.workbench", "--root", str(root)],
        env=env,
    )


POSITIONS = frozenset(
    {"index", "output_index", "image", "start", "stop", "cell_index", "offset"}
    | {"cell_count", "length", "remaining"}
)
"""Fields whose 0 is a position or a count that informs (cell 0, an empty notebook)."""


def _count_fields(value: Any) -> tuple[int, int]:
    """(fields, fields that carry nothing) over every object member in ``value``: null,
    false (but ``ok: false``), 0 (but a position or count, see :data:`POSITIONS`), "", [],
    {}."""
    total = empty = 0
    if isinstance(value, dict):
        for key, item in value.items():
            total += 1
            nothing = item is None or item in ("", [], {}) or (item is False and key != "ok")
            if nothing or (item == 0 and item is not False and key not in POSITIONS):
                empty += 1
            sub_total, sub_empty = _count_fields(item)
            total, empty = total + sub_total, empty + sub_empty
    elif isinstance(value, list):
        for item in value:
            sub_total, sub_empty = _count_fields(item)
            total, empty = total + sub_total, empty + sub_empty
    return total, empty


def _image_sizes(result: types.CallToolResult) -> list[tuple[int, int]]:
    from io import BytesIO

    from PIL import Image

    sizes = []
    for block in result.content:
        if isinstance(block, types.ImageContent):
            with Image.open(BytesIO(base64.b64decode(block.data))) as image:
                sizes.append(image.size)
    return sizes


def _stored_rasters(root: Path) -> dict[tuple[int, int], bytes]:
    """Every stored PNG/JPEG of the notebook by (cell index, output index)."""
    notebook = json.loads((root / NOTEBOOK).read_text(encoding="utf-8"))
    stored: dict[tuple[int, int], bytes] = {}
    for c, cell in enumerate(notebook["cells"]):
        for o, output in enumerate(cell.get("outputs", [])):
            for mime in ("image/png", "image/jpeg"):
                value = output.get("data", {}).get(mime)
                if value is not None:
                    joined = "".join(value) if isinstance(value, list) else value
                    stored[(c, o)] = base64.b64decode(joined)
    return stored


def _check_images(ledger: Ledger, root: Path, result: types.CallToolResult) -> None:
    """Compare each sent image with the stored raster it shows (by structuredContent)."""
    structured = result.structured_content or {}
    blocks = [b for b in result.content if isinstance(b, types.ImageContent)]
    stored = _stored_rasters(root)
    for cell in structured.get("cells", []):
        outputs = cell.get("outputs") or {}
        for entry in outputs.get("images", []):
            number = entry.get("image")
            if not isinstance(number, int) or number >= len(blocks):
                continue
            original = stored.get((cell["index"], entry["output_index"]))
            if original is None:
                continue
            sent = len(base64.b64decode(blocks[number].data))
            ledger.image_checks += 1
            if sent > len(original):
                ledger.bigger_images.append(
                    f"{cell['name']} output {entry['output_index']}: {sent:,} bytes sent, "
                    f"{len(original):,} stored"
                )


async def _call(
    session: ClientSession, ledger: Ledger, root: Path, label: str, tool: str, **arguments: Any
) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    if result.is_error:
        raise RuntimeError(f"{label}: tool error: {text}")
    try:
        total, empty = _count_fields(json.loads(text))
    except ValueError:
        total, empty = 0, 0
    ledger.steps.append(Step(label, len(text), _image_sizes(result), total, empty))
    ledger.texts[label] = text
    _check_images(ledger, root, result)
    structured: dict[str, Any] = result.structured_content or {}
    return structured


def _outside_insert(root: Path, after: str) -> None:
    """Another program (an editor) inserts a markdown cell after the cell named ``after``."""
    import nbformat

    path = root / NOTEBOOK
    notebook = nbformat.read(path, as_version=4)
    names = [cell.metadata.get("jupyter_mcp", {}).get("name") for cell in notebook.cells]
    position = names.index(after) + 1
    notebook.cells.insert(position, nbformat.v4.new_markdown_cell("## Notes added in an editor"))
    nbformat.write(notebook, path)


async def _loop(work: Path) -> Ledger:
    root = work / "root"
    root.mkdir()
    ledger = Ledger()
    errlog = work / "server.log"
    names = [name for name, _ in CELLS]
    with anyio.fail_after(SESSION_TIMEOUT), errlog.open("w", encoding="utf-8") as err:
        async with (
            stdio_client(_params(root, work / "cache"), errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            cells = [{"source": source, "name": name} for name, source in CELLS]
            await _call(
                session,
                ledger,
                root,
                "create_notebook",
                "create_notebook",
                path=NOTEBOOK,
                cells=cells,
            )
            await _call(
                session,
                ledger,
                root,
                "execute_cells (12)",
                "execute_cells",
                path=NOTEBOOK,
                names=names,
            )
            read_all = await _call(
                session, ledger, root, "read_cells (12)", "read_cells", path=NOTEBOOK
            )
            revs = {cell["name"]: cell["rev"] for cell in read_all["cells"]}
            await _call(
                session,
                ledger,
                root,
                "update_cell load-data",
                "update_cell",
                path=NOTEBOOK,
                name="load-data",
                expected_rev=revs["load-data"],
                source=NEW_LOAD,
            )
            rerun = await _call(session, ledger, root, "run_stale", "run_stale", path=NOTEBOOK)
            ran = [cell["name"] for cell in rerun.get("cells", [])]
            await _call(
                session, ledger, root, "read_cells (re-run)", "read_cells", path=NOTEBOOK, names=ran
            )
            await _call(
                session,
                ledger,
                root,
                "inspect_variable df",
                "inspect_variable",
                path=NOTEBOOK,
                name="df",
            )
            _outside_insert(root, "split")
            overview = await _call(
                session, ledger, root, "notebook_overview", "notebook_overview", path=NOTEBOOK
            )
            fit = next(cell for cell in overview["cells"] if cell["name"] == "fit")
            added = await _call(
                session,
                ledger,
                root,
                "add_cell after fit",
                "add_cell",
                path=NOTEBOOK,
                source="print(model.coef_)",
                name="coefs",
                after="fit",
                expected_rev=fit["rev"],
            )
            final = json.loads((root / NOTEBOOK).read_text(encoding="utf-8"))["cells"]
            order = [c.get("metadata", {}).get("jupyter_mcp", {}).get("name") for c in final]
            assert added["cell"]["name"] == "coefs", added
            assert order[order.index("fit") + 1] == "coefs", order
            assert any("Notes added in an editor" in "".join(c["source"]) for c in final)
            await _call(
                session,
                ledger,
                root,
                "read_cells budget=800",
                "read_cells",
                path=NOTEBOOK,
                budget=800,
            )
    return ledger


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every text content")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-context-") as folder:
        ledger = anyio.run(_loop, Path(folder))
    print(
        f"{'step':28} {'text chars':>10} {'text tok':>9} {'images':>6} {'image tok':>9}"
        f" {'empty fields':>13}"
    )
    for step in ledger.steps:
        share = f"{step.empty_fields}/{step.fields}" if step.fields else "-"
        print(
            f"{step.label:28} {step.text_chars:10,} {step.text_tokens:9,.0f} "
            f"{len(step.images):6} {step.image_tokens:9,.0f} {share:>13}"
        )
    text = sum(step.text_tokens for step in ledger.steps)
    images = sum(step.image_tokens for step in ledger.steps)
    fields = sum(step.fields for step in ledger.steps)
    empty = sum(step.empty_fields for step in ledger.steps)
    total = text + images
    print(
        f"total: {total:,.0f} tokens in {len(ledger.steps)} calls "
        f"(text {text:,.0f}, images {images:,.0f} in "
        f"{sum(len(s.images) for s in ledger.steps)} images)"
    )
    print(
        f"fields carrying no information in the text: {empty}/{fields}"
        + (f" ({empty / fields:.1%})" if fields else "")
    )
    read_text = ledger.steps[2].text_chars
    print(f"images compared with their stored originals: {ledger.image_checks}")
    for line in ledger.bigger_images:
        print(f"    larger than stored: {line}")
    targets = {
        f"loop <= {TOKEN_TARGET:,} tokens": total <= TOKEN_TARGET,
        f"read_cells (12) text < {READ_TEXT_TARGET:,} chars ({read_text:,})": (
            read_text < READ_TEXT_TARGET
        ),
        "no downscaled image larger than its original": not ledger.bigger_images,
    }
    for label, passed in targets.items():
        print(f"{label}: {'PASS' if passed else 'FAIL'}")
    if options.verbose:
        for label, body in ledger.texts.items():
            print(f"\n===== {label} =====\n{body}")
    return 0 if all(targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
