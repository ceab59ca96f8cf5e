"""The ``j-cli`` command line: a front end over the saved-output protocol.

The command line parses arguments, calls :mod:`jupyter_jcli.outputs` and
:mod:`jupyter_jcli.notebook`, and renders their results; it holds no protocol logic.

Modes:
    ``j-cli -j ...`` (``--json``) writes exactly one compact JSON document to stdout, on success
    and on error (``{"schema_version": 1, "status": "error", "code": ..., "message": ...}``).
    Without ``-j`` the output is readable text; errors go to stderr as ``error CODE: message``.

Entry points: ``main`` (also ``cli``) is the root click command: the ``j-cli`` console script,
``python -m jupyter_jcli``, ``click.testing.CliRunner().invoke(main, [...])``; calling it exits
the process with the status. :func:`run` takes the same arguments and returns the status.

Exit status: 0 on success, 1 on an error with a catalogue code (see :mod:`jupyter_jcli.errors`),
2 on a usage error (code ``USAGE_ERROR``).

Start-up stays fast: the names here load the click application on first use; each command's
module loads when that command runs, and heavy modules (jupytext for ``.py`` files, nbformat
for nbformat 3) only when needed.
"""

from __future__ import annotations

from jupyter_jcli import lazy_exports

TYPE_CHECKING = False  # the console script imports this package first: no ``typing``
if TYPE_CHECKING:
    from jupyter_jcli.cli._app import EXIT_ERROR, EXIT_OK, EXIT_USAGE, JcliGroup, cli, main, run

_PUBLIC = {
    "_app": "EXIT_ERROR EXIT_OK EXIT_USAGE JcliGroup cli main run",
}
"""The click application's names, imported on first use (PEP 562)."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
