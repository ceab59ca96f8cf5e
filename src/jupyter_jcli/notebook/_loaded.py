"""The reading side of a document (``document.Document`` adds the writes): what was loaded,
its cells as :class:`~jupyter_jcli.notebook._views.CellView`, and the refresh under the lock
that every write starts with (``document`` step 1). Loading never writes.

Under an active warm cache (``_warm``) a load of an unchanged plain notebook takes the state
its last load or write left there (nothing is read or parsed), and every state a document
adopts, read or written by us, is stored back. Documents of one version share the parsed
model: it is never changed in place (writes build new cell dicts)."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._files import FileState, read_file, read_target
from jupyter_jcli.notebook._open import Confinement, chosen, confined
from jupyter_jcli.notebook._pairs import (
    PairContext,
    absent_text_pairs,
    pairs_absent,
    text_candidates,
)
from jupyter_jcli.notebook._views import CellView, cell_view
from jupyter_jcli.notebook._warm import DocumentCache, Identity, WarmState, active_cache, ticket
from jupyter_jcli.notebook.names import assign_names
from jupyter_jcli.notebook.revs import structure_rev
from jupyter_jcli.notebook.store import NotebookRef

__all__ = ["LoadedNotebook"]

_Loaded = TypeVar("_Loaded", bound="LoadedNotebook")
_T = TypeVar("_T")


class LoadedNotebook:
    """The reading side of :class:`~jupyter_jcli.notebook.document.Document`: the content
    its last load, reload or write saw, its cells with names and revs, and the refresh a
    write starts with. Create with :meth:`load`."""

    _warm_cached: ClassVar[bool] = True
    """Whether its state goes into the active warm cache (``_warm``; files only)."""

    def __init__(
        self,
        path: Path,
        notebook: dict[str, Any],
        files: tuple[FileState, ...],
        pair: PairContext | None,
        base_dir: Path | None,
        *,
        refusal: NotebookError | None = None,
        confine: Confinement | None = None,
        warm: WarmState | None = None,
        read_ns: int = 0,
        drawn: int = 0,
    ) -> None:
        self._path = path
        self._ticket = drawn
        self._confine = chosen(confine)
        self._pair = pair
        self._refusal = refusal
        self._base_dir = base_dir
        self._cache: DocumentCache | None = active_cache() if self._warm_cached else None
        if warm is not None:
            self._notebook = warm.notebook
            self._files = warm.files
            self._names = warm.names
            self._views = warm.views
            self._state = warm
        else:
            self._adopt(notebook, files, read_ns=read_ns)
        self._seen(written=False)

    @classmethod
    def load(
        cls: type[_Loaded],
        path: str | os.PathLike[str],
        *,
        cache_dir: Path | None = None,
        confine: Confinement | None = None,
    ) -> _Loaded:
        """Load a notebook (``.ipynb``) or a ``.py`` paired with one (py:percent, light or
        another script format jupytext reads, kept when written). Writes nothing.

        Args:
            path: the ``.ipynb`` or ``.py`` file.
            cache_dir: snapshot cache base folder (default: ``snapshots.cache_dir()``).
            confine: the roots every file of the document (both halves of a pair) must lie
                in, checked where each file is opened, for this load and every later read,
                write and undo snapshot of the document (``notebook._open``); default the
                active confinement.

        Raises:
            NotebookError: ``FILE_NOT_FOUND``, ``FILE_TYPE_UNSUPPORTED`` (another suffix),
                ``NOTEBOOK_READ_FAILED``,
                ``NOTEBOOK_PAIR_NOT_FOUND`` (a ``.py`` without paired notebook),
                ``PATH_NOT_ALLOWED`` (outside ``confine``). A pair that may be read but not
                edited loads; its mutations raise ``PAIR_OUT_OF_SYNC`` or the paired file's
                ``PATH_NOT_ALLOWED`` (see ``_files.read_target``).
        """
        target = Path(os.path.abspath(path))
        confinement = chosen(confine)
        cache = active_cache()
        drawn = ticket()
        if cache is not None and target.suffix.lower() == ".ipynb":
            with confined(confinement):
                state = cache.get(target)
            if state is not None:
                return cls(
                    target, state.notebook, state.files, None, cache_dir,
                    confine=confinement, warm=state, drawn=drawn,
                )  # fmt: skip
        read_ns = time.time_ns()
        notebook, files, pair, refusal = read_target(
            target, confine=confinement, base_dir=cache_dir
        )
        return cls(
            target, notebook, files, pair, cache_dir,
            refusal=refusal, confine=confinement, read_ns=read_ns, drawn=drawn,
        )  # fmt: skip

    # ------------------------------------------------------------------ reading

    @property
    def path(self) -> Path:
        """The file the document was loaded from (absolute)."""
        return self._path

    @property
    def ref(self) -> NotebookRef:
        """Which notebook, in which store (``store.NotebookRef``): a file of the local store."""
        return NotebookRef.local(self._path)

    @property
    def notebook_path(self) -> Path:
        """The ``.ipynb`` holding the cells and outputs (the pair's notebook for a ``.py``)."""
        return self._files[0].path

    @property
    def paired_py(self) -> Path | None:
        """The text file edited alongside (a py:percent file, or the text file an ``.ipynb``
        is paired with by its ``jupytext.formats``), or ``None``."""
        return self._pair.py_path if self._pair is not None else None

    @property
    def pair_out_of_sync(self) -> dict[str, Any] | None:
        """``None``, or when the document is a pair whose two sides hold different cell
        inputs, the facts (``_pairs.PairContext.out_of_sync``): ``notebook_path``,
        ``text_path``, ``shown`` (``"text"``: the cells shown are the text file's inputs),
        ``newer`` (``"notebook"`` or ``"text"``), both ``*_mtime_ns`` and ``writes``
        (``"refused"``: a run or an edit raises ``PAIR_OUT_OF_SYNC``; ``"take_text"``: the
        ``.ipynb`` is unchanged since jupyter-jcli last wrote the pair, a write takes the
        text file's inputs), ``keep_notebook`` and ``keep_text`` (the jupytext command that
        makes the sides agree keeping that side's inputs)."""
        if self._pair is None or self._pair.out_of_sync is None:
            return None
        return dict(self._pair.out_of_sync)

    def check_writable(self) -> None:
        """Raise what a write of this pair would be refused with before it starts
        (``PAIR_OUT_OF_SYNC``, the other refusals of ``_files.read_target``), from the files
        as they are now; reads only and changes nothing of the document. A run calls it
        before any cell executes, so nothing is computed that could not be saved. A
        notebook loaded alone without refusal is not read again (its write checks the rest).

        Raises:
            NotebookError: the refusal, and the read codes of :meth:`load`.
        """
        if self._pair is None and self._refusal is None:
            return
        _notebook, _files, _pair, refusal = read_target(
            self._path, confine=self._confine, base_dir=self._base_dir
        )
        if refusal is not None:
            raise NotebookError(refusal.code, refusal.message, refusal.details)

    @property
    def files(self) -> tuple[FileState, ...]:
        """The files as last read or written (``.ipynb`` first)."""
        return self._files

    @property
    def cells(self) -> tuple[CellView, ...]:
        """Every cell, in document order."""
        return self._views

    @property
    def structure_rev(self) -> str:
        """Hash of the ordered ``(name, rev)`` pairs (see ``revs.structure_rev``)."""
        views = self._views
        return self.memo("structure_rev", lambda: structure_rev((v.name, v.rev) for v in views))

    def cell(self, name: str) -> CellView:
        """The cell called ``name``.

        Raises:
            NotebookError: ``CELL_NOT_FOUND``.
        """
        views = self._views
        found = self.memo("by_name", lambda: {view.name: view for view in views}).get(name)
        if found is not None:
            return found
        raise NotebookError(
            ErrorCode.CELL_NOT_FOUND,
            f"{self._path} has no cell named {name!r}.",
            {"path": str(self._path), "name": name, "cell_count": len(self._views)},
        )

    @property
    def metadata(self) -> dict[str, Any]:
        """A deep copy of the notebook-level metadata (``kernelspec``, ``language_info``, ...)."""
        metadata = self._notebook.get("metadata")
        return copy.deepcopy(metadata) if isinstance(metadata, dict) else {}

    def memo(self, key: str, compute: Callable[[], _T]) -> _T:
        """A value computed from this version of the content (by ``compute``, once), kept
        with it: every document of the same version (the warm cache shares it) gets the
        same value, a reload or write starts afresh. The value must be treated read-only."""
        derived = self._state.derived
        if key not in derived:
            derived[key] = compute()
        value: _T = derived[key]
        return value

    def notebook_dict(self) -> dict[str, Any]:
        """A deep copy of the notebook model (nbformat 4 dict)."""
        return copy.deepcopy(self._notebook)

    def cell_dicts(self) -> Sequence[Mapping[str, Any]]:
        """The cells of the model as stored (nbformat 4 dicts), in order, without a copy:
        read them, never change them (they may be shared with the warm cache)."""
        cells: list[dict[str, Any]] = self._notebook["cells"]
        return cells

    def reload(self) -> None:
        """Re-read the file(s) from disk."""
        self._reload()

    def _reload(self, *, written: bool = False) -> None:
        """Re-read the file(s); ``written``: what is read is what our write just wrote."""
        self._ticket = ticket()
        read_ns = time.time_ns()
        notebook, files, pair, refusal = read_target(
            self._path, confine=self._confine, base_dir=self._base_dir
        )
        self._pair = pair
        self._refusal = refusal
        self._adopt(notebook, files, read_ns=read_ns)
        self._seen(written=written)

    def _seen(self, *, written: bool) -> None:
        """Tell the cache's watcher (``_warm.Watcher``) of the version now held (a version
        we wrote draws its ticket now, once written)."""
        watcher = self._cache.watcher if self._cache is not None else None
        if watcher is not None:
            watcher(self, written=written, ticket=ticket() if written else self._ticket)

    def _refresh(self) -> bool:
        """Under the lock: re-read the target if a file changed on disk (returns whether)
        or if the content is refused (the refusal may be gone, e.g. after ``jupytext
        --sync`` or a touch); then raise the refusal if there still is one."""
        disk = tuple(read_file(state.path, confine=self._confine) for state in self._files)
        changed = [state.sha256 for state in disk] != [state.sha256 for state in self._files]
        if changed or self._refusal is not None:
            self.reload()
        if self._refusal is not None:
            refusal = self._refusal
            raise NotebookError(refusal.code, refusal.message, refusal.details)
        return changed

    def _adopt(
        self,
        notebook: dict[str, Any],
        files: tuple[FileState, ...],
        *,
        read_ns: int = 0,
        views: tuple[CellView, ...] | None = None,
    ) -> None:
        """Take ``notebook`` (read from ``files``, or what our write just wrote: then
        ``read_ns`` is 0) as the document's content; ``views``: its cells' views when the
        caller computed them already. A plain notebook's state goes into the warm cache."""
        self._notebook = notebook
        self._files = files
        cells: list[dict[str, Any]] = notebook["cells"]
        if views is None:
            self._names = assign_names(cells)
            self._views = tuple(
                cell_view(cell, name, index)
                for index, (cell, name) in enumerate(zip(cells, self._names, strict=True))
            )
        else:
            self._names = [view.name for view in views]
            self._views = views
        absent = self._absent_pairs() if self._cache is not None else None
        self._state = WarmState(notebook, files, self._names, self._views, absent or ())
        if self._cache is not None and absent is not None:
            info = files[0].info if read_ns else None
            identity = Identity.of(info) if info is not None else None
            self._cache.put(self._path, self._state, identity=identity, read_ns=read_ns)

    def _absent_pairs(self) -> tuple[Path, ...] | None:
        """For a notebook that loads alone (``_warm``: an ``.ipynb``, no refusal, no pair),
        the text files its pairing metadata names (none exists); else ``None``."""
        if not (
            self._pair is None
            and self._refusal is None
            and len(self._files) == 1
            and self._files[0].path == self._path
            and self._path.suffix.lower() == ".ipynb"
        ):
            return None
        metadata = self._notebook.get("metadata")
        with confined(self._confine):
            absent = absent_text_pairs(self._path, metadata)
            if absent is not None:
                return absent
            paths = tuple(path for path, _fmt in text_candidates(self._path, metadata))
            return paths if pairs_absent(paths) else None
