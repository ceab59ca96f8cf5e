"""``j-cli run script.py``: a notebook script's cells into its paired notebook, or a plain
script as one unit.

A script with cell markers (py:percent and the other jupytext formats) or a pair runs like a
notebook (``j-cli run``'s usual flow on the ``.py``: outputs written into the paired
``.ipynb``, created from the script when absent). A plain script runs whole on a scratch
kernel in the current folder and answers like ``j-cli exec`` (``operation: "run_script"``),
its rich or long outputs saved under ``./.j-cli/outputs/``. See
:mod:`jupyter_jcli.workbench._script` for the rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli.cli._emit import echo, json_mode
from jupyter_jcli.errors import UsageError

if TYPE_CHECKING:
    from jupyter_jcli.workbench import ScriptPlan

__all__ = ["created_line", "run_plain_script"]


def created_line(plan: ScriptPlan) -> str:
    """What a run says of the notebook it created for a script (text mode, on stderr)."""
    if plan.formats is None:
        return f"created the paired notebook {plan.notebook_path} (paired by {plan.path}'s header)"
    return (
        f"created {plan.notebook_path}, paired with {plan.path} as a jupytext pair "
        f"(formats {plan.formats!r}, set in the notebook's metadata; {plan.path.name} is "
        "not changed): edits of either file through jupyter-jcli or Jupyter with jupytext "
        f"reach the other, and `jupytext --sync {plan.notebook_path}` syncs them"
    )


def run_plain_script(
    file: str, *, timeout: float | None, kernel_name: str | None, modes: list[str]
) -> int | ScriptPlan:
    """Run ``file`` whole when it is a plain script and return the exit status; its plan when
    it is a notebook script (its paired notebook now exists: the caller runs its cells).

    Raises:
        UsageError: ``USAGE_ERROR`` for ``--stale``, ``--all`` or ``--cell`` on a plain script.
        NotebookError: the codes of ``prepare_script``.
    """
    from jupyter_jcli.workbench import prepare_script

    plan = prepare_script(file)
    if plan.kind == "notebook":
        if plan.created and not json_mode():
            echo(created_line(plan), err=True)
        return plan
    if modes:
        raise UsageError(
            "A plain script (no cell markers, no paired notebook) runs whole: "
            "--stale, --all and --cell do not apply.",
            {"path": str(plan.path), "modes": modes},
        )
    from jupyter_jcli.cli._exec import answer, run_code
    from jupyter_jcli.notebook.io import read_text_file

    outcome = run_code(
        None,
        read_text_file(plan.path),
        timeout=timeout,
        kernel_name=kernel_name,
        script_path=str(plan.path),
    )
    return answer(outcome)
