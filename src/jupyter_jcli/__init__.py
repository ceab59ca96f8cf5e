"""jupyter-jcli: safe, cheap Jupyter notebook work for coding agents and people.

The package is layered (see ``ARCHITECTURE.md``): ``errors`` at the bottom, then ``outputs``
(the saved-output protocol), ``notebook`` (the document), ``analysis``, ``condense`` and the
front ends (``cli``). Importing this package imports nothing heavy.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
