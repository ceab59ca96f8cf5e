"""Entry point of a registered kernel's supervisor process (see ``_supervisor``)."""

from __future__ import annotations

import sys

from jupyter_jcli.kernels._supervisor import main

if __name__ == "__main__":
    sys.exit(main())
