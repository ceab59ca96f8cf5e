"""Argument rules shared by every ``j-cli`` command, applied to the whole command tree.

:func:`harden` walks the click command tree once, before parsing, and gives every command:

- integers parsed strictly: ASCII decimal digits with an optional leading ``-`` and nothing
  else (``int()`` would accept ``1_0``, `` 3 `` and non-ASCII digits such as ``٣``); anything
  else is a usage error;
- a help option (``-h``/``--help``) that, with ``-j``, writes one JSON document instead of
  text (:func:`jupyter_jcli.cli._emit.emit_help`);
- the root's ``-j``/``--json`` switch, accepted after the command's name too.

:func:`single` builds options that may be given at most once (click silently keeps the last
of repeated values) and may refuse empty values.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from jupyter_jcli.cli._emit import CliState, emit_help
from jupyter_jcli.errors import UsageError

__all__ = [
    "FILE",
    "FILE_PATH",
    "JSON_FLAGS",
    "FilePath",
    "LazyGroup",
    "cell_names_option",
    "harden",
    "page_options",
    "single",
    "strict_int",
    "text_or_file",
]

_ASCII_INT = re.compile(r"-?[0-9]+")
_HELP_NAMES = ("-h", "--help")
_HARDENED = "_jcli_hardened"

F = TypeVar("F", bound=Callable[..., Any])


class _StrictIntMixin:
    """Refuses integer text that is not plain ASCII decimal before the int type converts it."""

    __slots__ = ()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _ASCII_INT.fullmatch(value):
            raise click.BadParameter(
                f"{value!r} is not a decimal integer (ASCII digits, optionally after '-').",
                ctx=ctx,
                param=param,
            )
        return super().convert(value, param, ctx)  # type: ignore[misc]


_STRICT_CLASSES: dict[type[click.ParamType[Any]], type[click.ParamType[Any]]] = {}


def strict_int(param_type: click.ParamType[Any]) -> click.ParamType[Any]:
    """A copy of an int type (``click.INT``, ``click.IntRange``...) that parses strictly.

    The copy is an instance of a subclass of the original's class, so range checks and help
    texts are unchanged.
    """
    cls = type(param_type)
    if issubclass(cls, _StrictIntMixin):
        return param_type
    strict_cls = _STRICT_CLASSES.get(cls)
    if strict_cls is None:
        strict_cls = type(f"Strict{cls.__name__}", (_StrictIntMixin, cls), {"__slots__": ()})
        _STRICT_CLASSES[cls] = strict_cls
    strict = strict_cls.__new__(strict_cls)
    strict.__dict__.update(vars(param_type))  # same bounds, clamp, name...
    return strict


class FilePath(click.Path):
    """``click.Path`` (file completion, no existence check) that reports a path no file can
    have (a NUL byte) as a usage error instead of letting ``os.stat``'s ``ValueError`` out;
    the readers give every other path problem its own code."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and "\0" in value:
            self.fail("the path contains a NUL byte, which no file name can hold.", param, ctx)
        if isinstance(value, str) and not value:
            self.fail("the path is empty.", param, ctx)
        return super().convert(value, param, ctx)


FILE_PATH = FilePath(path_type=str)
"""The type of every FILE argument of the read commands."""

FILE = click.argument("file", metavar="FILE", type=click.Path(path_type=str))
"""The FILE argument (the notebook) of the workbench commands."""


def _show_help(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    emit_help(ctx)
    ctx.exit(0)


def _help_option(taken: set[str]) -> click.Option:
    names = [name for name in _HELP_NAMES if name not in taken] or ["--help"]
    return click.Option(
        names,
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_show_help,
        help="Show this message and exit (one JSON document with -j).",
    )


def harden(command: click.Command) -> None:
    """Apply the shared argument rules to ``command`` and every subcommand (idempotent):
    strict integers, JSON help, and ``-j`` accepted after the command's name too."""
    stack = [command]
    while stack:
        current = stack.pop()
        if not getattr(current, _HARDENED, False):
            setattr(current, _HARDENED, True)
            for param in current.params:
                if isinstance(param.type, click.types.IntParamType):
                    param.type = strict_int(param.type)
            taken = {opt for param in current.params for opt in param.opts}
            if current.add_help_option:
                current.add_help_option = False
                current.params.append(_help_option(taken))
            if not taken & JSON_FLAGS:  # the root's -j, also after a subcommand's name
                current.params.append(_json_option())
        if isinstance(current, click.Group):
            stack.extend(current.commands.values())


class LazyGroup(click.Group):
    """A click group whose ``lazy`` commands load their module when first named (or listed
    by ``--help``): ``(module, attribute)`` by command name. Every process runs one command,
    so it imports one command's module; a loaded command is hardened (:func:`harden`)."""

    def __init__(
        self, *args: Any, lazy: Mapping[str, tuple[str, str]] | None = None, **attrs: Any
    ) -> None:
        super().__init__(*args, **attrs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not, sorted."""
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, importing its module on first use."""
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy:
            module, attribute = self.lazy[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command)
            harden(command)
            self.add_command(command, cmd_name)
        return command


JSON_FLAGS = frozenset({"-j", "--json"})
"""The root's JSON switch, ``-j``/``--json``."""


def _json_option() -> click.Option:
    """``-j``/``--json`` on a subcommand: the root's switch, given after the command's name
    (``j-cli notebook outputs NB --cell 0 -j``); hidden from help."""

    def turn_on(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if value:
            ctx.ensure_object(CliState).json_mode = True

    return click.Option(
        ["-j", "--json"], is_flag=True, expose_value=False, is_eager=True, hidden=True,
        callback=turn_on,
    )  # fmt: skip


def _once(
    allow_empty: bool,
) -> Callable[[click.Context, click.Parameter, tuple[Any, ...]], Any]:
    def callback(ctx: click.Context, param: click.Parameter, values: tuple[Any, ...]) -> Any:
        if len(values) > 1:
            raise click.BadParameter("may be given only once.", ctx=ctx, param=param)
        value = values[0] if values else None
        if not allow_empty and isinstance(value, str) and not value.strip():
            raise click.BadParameter("must not be empty.", ctx=ctx, param=param)
        return value

    return callback


def single(*param_decls: str, allow_empty: bool = False, **attrs: Any) -> Callable[[F], F]:
    """``click.option`` for an option that may be given at most once (else a usage error);
    a string value must not be empty unless ``allow_empty``."""
    return click.option(*param_decls, multiple=True, callback=_once(allow_empty), **attrs)


def text_or_file(text: str | None, path: str | None, usage: str, *, required: bool) -> str | None:
    """The value of an option pair such as ``--code TEXT`` / ``--code-file FILE``: ``text``,
    or the UTF-8 source in ``path`` (``-``: stdin); ``None`` when neither is given and that
    is allowed (not ``required``).

    Raises:
        UsageError: ``USAGE_ERROR`` (``usage`` its message) for both, or for neither when
            ``required``.
        NotebookError: the codes of ``notebook.io.read_source_file`` / ``read_source_stream``.
    """
    if (text is not None and path is not None) or (required and text is None and path is None):
        raise UsageError(usage)
    if path is None:
        return text
    from jupyter_jcli.notebook.io import read_source_file, read_source_stream

    return read_source_stream(sys.stdin.buffer) if path == "-" else read_source_file(path)


def cell_names_option(meaning: str) -> Callable[[F], F]:
    """The repeatable ``--cell CELL`` option of the commands that take cells (``names``),
    ``meaning`` its help."""
    return click.option("--cell", "names", multiple=True, metavar="CELL", help=meaning)


def page_options(start_help: str, limit_help: str, *, limit: int = 100) -> Callable[[F], F]:
    """The ``--start N`` (index of the first cell, default 0) and ``--limit N`` (the most
    cells a page holds, default ``limit``) options of a command that pages cells."""
    start_option = click.option(
        "--start", type=click.IntRange(min=0), default=0, show_default=True, help=start_help
    )
    limit_option = click.option(
        "--limit", type=click.IntRange(min=1), default=limit, show_default=True, help=limit_help
    )

    def decorate(command: F) -> F:
        return start_option(limit_option(command))

    return decorate
