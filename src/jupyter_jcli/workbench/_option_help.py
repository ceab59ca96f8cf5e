"""The help of the options that choose where kernels run and notebooks live: one text for
every front end (``j-cli``'s ``--server-url`` and ``--store``, ``jupyter-mcp``'s). Plain
strings, so a command's ``--help`` loads nothing else."""

from __future__ import annotations

__all__ = ["SERVER_OPTION_HELP", "STORE_OPTION_HELP"]

STORE_OPTION_HELP = (
    "Where notebooks are read and written: auto (default; $JUPYTER_JCLI_STORE), local (the "
    "file here), collab (the server's live collaborative document), contents (the server's "
    "contents API). auto: local without a server URL, else collab when the server has "
    "real-time collaboration, else contents when no --server-root is given and the path is "
    "no file here, else local."
)
"""The help of ``--store`` (``jupyter-mcp`` and ``j-cli``)."""

SERVER_OPTION_HELP = {
    "server_url": "Run the kernels on this Jupyter Server (JupyterLab, JupyterHub "
    "https://hub/user/NAME/, Kernel Gateway, Enterprise Gateway); default "
    "$JUPYTER_JCLI_SERVER_URL; without either, local kernels.",
    "token": "The server's token; default $JUPYTER_JCLI_SERVER_TOKEN, which is better: a "
    "command line is visible to other users.",
    "server_root": "The local folder that is the server's root (notebook paths are mapped "
    "relative to it); default $JUPYTER_JCLI_SERVER_ROOT, else the server's own root_dir.",
    "kernel_username": "The KERNEL_USERNAME a gateway's kernels start with (Enterprise "
    "Gateway authorizes it); default $JUPYTER_JCLI_KERNEL_USERNAME, else the local user's name.",
}
"""The help of ``--server-url``, ``--token``, ``--server-root`` and ``--kernel-username``
(``jupyter-mcp`` and ``j-cli``; option name -> help)."""
