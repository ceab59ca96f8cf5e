"""Which kernelspec a notebook's kernel starts with, and the error when it is not installed.

A notebook names its kernelspec in ``metadata.kernelspec.name`` (nbformat); a notebook from
another machine often names one that is not installed here (``conda-env-…``, ``python2``).
A caller may override it per notebook (``kernel_name``; ``j-cli run --kernel NAME``); an
override is remembered by the workbench for that notebook only once it is known to be
installed (:meth:`KernelChoice.override` is called after the check), so a name that cannot be
honoured is refused at once and never comes back in a later call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from jupyter_jcli.errors import ErrorCode, KernelError, UsageError
from jupyter_jcli.kernels import DEFAULT_KERNELSPEC, kernelspec_name_from_metadata
from jupyter_jcli.notebook.document import Document

__all__ = ["KernelChoice", "KernelspecSource", "kernelspec_hint"]

KernelspecSource = Literal["kernel_name", "notebook_metadata", "default"]
"""Where the kernelspec name came from: a caller's override, the notebook's
``metadata.kernelspec.name``, or :data:`~jupyter_jcli.kernels.DEFAULT_KERNELSPEC` (the
notebook names none)."""

_WHERE: dict[KernelspecSource, str] = {
    "kernel_name": "the kernelspec asked for",
    "notebook_metadata": "the notebook's metadata.kernelspec.name",
    "default": "the default, as the notebook names none",
}


_MISMATCH_ADVICE = (
    "Restart the kernel with that kernelspec to switch (its variables are lost), or run "
    "without naming a kernelspec to use the live kernel."
)
"""How ``KERNELSPEC_MISMATCH`` says to go on, unless a front end says it its way
(:func:`kernelspec_hint` replaces it: the advice is given once)."""


class KernelChoice:
    """The kernelspec per notebook: the caller's override if one was given, else the
    notebook's own."""

    def __init__(self) -> None:
        self._overrides: dict[Path, str] = {}

    @staticmethod
    def checked_name(kernel_name: str) -> str:
        """``kernel_name`` stripped.

        Raises:
            UsageError: ``USAGE_ERROR`` for a blank name.
        """
        if not kernel_name.strip():
            raise UsageError(
                "The kernelspec name is blank; name an installed kernelspec.",
                {"kernel_name": kernel_name},
            )
        return kernel_name.strip()

    def override(self, document: Document, kernel_name: str | None) -> None:
        """Remember ``kernel_name`` for the notebook (``None`` changes nothing); call it only
        once the name is known to be installed.

        Raises:
            UsageError: ``USAGE_ERROR`` for a blank name.
        """
        if kernel_name is None:
            return
        self._overrides[document.notebook_path.resolve()] = self.checked_name(kernel_name)

    def refused(self, err: KernelError, document: Document, kernel_name: str) -> KernelError:
        """``err`` (``KERNELSPEC_NOT_FOUND`` for a caller's ``kernel_name``, not remembered)
        said as :meth:`explained` says a missing name (``source: "kernel_name"``)."""
        return self._not_found(err, document, (kernel_name, "kernel_name"))

    @staticmethod
    def mismatch(document: Document, kernel_name: str, running: str) -> KernelError:
        """``KERNELSPEC_MISMATCH``: ``kernel_name`` was asked for the notebook, whose live
        kernel runs ``running`` (details ``kernelspec``, ``running_kernelspec``,
        ``notebook_path``)."""
        return KernelError(
            ErrorCode.KERNELSPEC_MISMATCH,
            f"the notebook's live kernel runs kernelspec {running!r}, not {kernel_name!r}: "
            f"nothing ran. {_MISMATCH_ADVICE}",
            {
                "kernelspec": kernel_name,
                "running_kernelspec": running,
                "notebook_path": str(document.notebook_path),
            },
        )

    def kernelspec(self, document: Document) -> tuple[str, KernelspecSource]:
        """The kernelspec to start for the notebook, and where its name came from."""
        override = self._overrides.get(document.notebook_path.resolve())
        if override is not None:
            return override, "kernel_name"
        spec = kernelspec_name_from_metadata(document.metadata)
        named = spec != DEFAULT_KERNELSPEC or "kernelspec" in document.metadata
        return spec, "notebook_metadata" if named else "default"

    @asynccontextmanager
    async def explained(self, document: Document) -> AsyncIterator[None]:
        """Re-raise ``KERNELSPEC_NOT_FOUND`` saying where the missing name came from (details
        add ``source`` and ``notebook_path`` to the backend's ``kernelspec`` and
        ``installed``); other errors pass unchanged."""
        try:
            yield
        except KernelError as err:
            if err.code != ErrorCode.KERNELSPEC_NOT_FOUND:
                raise
            raise self._not_found(err, document) from err

    def _not_found(
        self,
        err: KernelError,
        document: Document,
        asked: tuple[str, KernelspecSource] | None = None,
    ) -> KernelError:
        spec, source = self.kernelspec(document) if asked is None else asked
        installed = [str(name) for name in err.details.get("installed", [])]
        return KernelError(
            ErrorCode.KERNELSPEC_NOT_FOUND,
            f"kernelspec {spec!r} ({_WHERE[source]}) is not installed; installed: "
            f"{', '.join(installed) or '(none)'}",
            {**err.details, "source": source, "notebook_path": str(document.notebook_path)},
        )


def kernelspec_hint(
    err: KernelError, hint: str, mismatch: str | None = None, *, named: str | None = None
) -> KernelError:
    """``err`` with a front end's way of choosing the kernelspec appended (message and
    ``details.hint``): for ``KERNELSPEC_NOT_FOUND``, ``hint`` (e.g. ``"pass --kernel NAME"``),
    or ``named`` when the missing name is the one the caller gave (``details.source``
    ``kernel_name``: it was passed already); ``mismatch`` for ``KERNELSPEC_MISMATCH`` (how
    to switch the live kernel, in place of the generic advice); other errors as they are."""
    if err.code == ErrorCode.KERNELSPEC_NOT_FOUND:
        asked = named is not None and err.details.get("source") == "kernel_name"
        chosen = named if asked else hint
    elif err.code == ErrorCode.KERNELSPEC_MISMATCH:
        chosen = mismatch
    else:
        chosen = None
    if chosen is None:
        return err
    message = err.message.removesuffix(f" {_MISMATCH_ADVICE}").removesuffix(".")
    return KernelError(err.code, f"{message}; {chosen}", {**err.details, "hint": chosen})
