"""``python -m jupyter_jcli ...``: the ``j-cli`` command line (hosts and hooks run it so)."""

from jupyter_jcli.cli import main

if __name__ == "__main__":
    main(prog_name="j-cli")
