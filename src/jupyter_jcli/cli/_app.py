"""The ``j-cli`` root command, the global ``-j`` switch and the one error boundary.

:data:`main` is the root click command (``cli`` is the same object) and the console-script
entry point, so ``click.testing.CliRunner().invoke(main, [...])`` works as with any click
command; ``python -m jupyter_jcli`` runs it too. Its ``main()`` method (what calling it does)
runs the command tree in non-standalone mode so that every failure reaches one place, where it
becomes an exit status (the process exits with it; :func:`run` returns it instead) and, in
JSON mode, exactly one error document on stdout:

=========================================  ======  ======================
failure                                    exit    code
=========================================  ======  ======================
a :class:`~jupyter_jcli.errors.JcliError`  1       the error's own code
bad arguments (click usage errors)         2       ``USAGE_ERROR``
anything unexpected                        1       ``INTERNAL_ERROR``
=========================================  ======  ======================
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from jupyter_jcli import __version__
from jupyter_jcli.cli._emit import CliState, echo, emit_error, emit_json, ok_document
from jupyter_jcli.cli._params import JSON_FLAGS, LazyGroup, harden
from jupyter_jcli.errors import (
    ErrorCode,
    JcliError,
    Terminated,
    UsageError,
    cancelled,
    terminate_as_cancel,
)

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "JcliGroup", "cli", "main", "run"]

EXIT_OK = 0
"""Exit status of a successful command."""
EXIT_ERROR = 1
"""Exit status of an error that carries a catalogue code (other than ``USAGE_ERROR``)."""
EXIT_USAGE = 2
"""Exit status of a usage error (unknown option, bad option value, missing argument)."""
_EXIT_INTERRUPTED = 130

_PROG_NAME = "j-cli"
# click >= 8.2 raises this for a bare `j-cli`; older versions print the help themselves.
_NO_ARGS_IS_HELP: type[click.ClickException] | tuple[()] = getattr(
    click.exceptions, "NoArgsIsHelpError", ()
)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    state = ctx.ensure_object(CliState)
    if state.json_mode:
        emit_json(ok_document(name="j-cli", version=__version__))
    else:
        echo(f"j-cli {__version__}")
    ctx.exit(EXIT_OK)


_LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "_hooks": ("jupyter_jcli.cli._hook", "hooks_command"),
    "cell": ("jupyter_jcli.cli._cell_edit", "cell"),
    "exec": ("jupyter_jcli.cli._exec", "exec_command"),
    "hook": ("jupyter_jcli.cli._hook", "hook"),
    "kernel": ("jupyter_jcli.cli._kernel", "kernel"),
    "kernelspec": ("jupyter_jcli.cli._kernelspec", "kernelspec"),
    "mcp": ("jupyter_jcli.cli._mcp", "mcp"),
    "notebook": ("jupyter_jcli.cli._notebook", "notebook"),
    "output": ("jupyter_jcli.cli._output", "output"),
    "run": ("jupyter_jcli.cli._run", "run_command"),
    "setup": ("jupyter_jcli.cli._setup", "setup"),
    "vars": ("jupyter_jcli.cli._vars", "vars_command"),
}
"""The root's commands that load their module when first named (:class:`LazyGroup`)."""


class JcliGroup(LazyGroup):
    """The root command: a click group whose ``main()`` is the one error boundary.

    Calling it (``main()``, ``main(["-j", ...])``) or invoking it through
    ``click.testing.CliRunner`` runs :func:`run` and, in standalone mode (the default), exits
    the process with its status (0, 1 or 2); with ``standalone_mode=False`` it returns the
    status instead. As a subcommand of another click group it runs like any group.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> int:
        """Run ``j-cli`` with ``args`` (``sys.argv[1:]`` when None); see :func:`run`."""
        status = run(args, prog_name=prog_name or _PROG_NAME, complete_var=complete_var, **extra)
        if standalone_mode:
            sys.exit(status)
        return status


@click.group(
    cls=JcliGroup,
    name="j-cli",
    lazy=_LAZY_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "-j",
    "--json",
    "json_mode",
    is_flag=True,
    help="Write exactly one compact JSON document to stdout (success or error).",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.pass_context
def cli(ctx: click.Context, json_mode: bool) -> None:
    """Work with Jupyter notebooks safely and cheaply: read saved outputs, edit cells by
    name and rev, run what went stale on a local kernel, serve agents over MCP.

    Put -j before the command for JSON, e.g. `j-cli -j notebook outputs NB.ipynb --cell 3`.
    """
    state = ctx.ensure_object(CliState)
    state.json_mode = state.json_mode or json_mode


main: JcliGroup = cli
"""The root command and console-script entry point (see :class:`JcliGroup`)."""


def run(
    argv: Sequence[str] | None = None,
    *,
    prog_name: str = _PROG_NAME,
    complete_var: str | None = None,
    **extra: Any,
) -> int:
    """Run ``j-cli`` and return its exit status (``main`` exits the process with it).

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when None.
        prog_name: the program name shown in usage and help.
        complete_var: the environment variable of click's shell completion (click's default
            when None).
        extra: further settings of the click context (``click.Command.main``'s ``extra``).

    Returns:
        0 on success, 1 on an error with a catalogue code, 2 on a usage error, 130 when
        interrupted. Errors are rendered before returning (JSON on stdout with ``-j``, else
        ``error CODE: message`` on stderr); no traceback is ever printed.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    state = CliState(json_mode=_json_requested(args))
    if state.json_mode:  # one document on stdout, a command ended by SIGTERM's too
        terminate_as_cancel()
    harden(cli)  # strict integers and JSON help on every command, whoever registered it
    try:
        result = click.Group.main(
            cli,
            args=args,
            prog_name=prog_name,
            complete_var=complete_var,
            standalone_mode=False,
            obj=state,
            **extra,
        )
    except _NO_ARGS_IS_HELP as err:
        if state.json_mode:
            emit_error(UsageError("Missing command; see `j-cli --help`."), json_mode=True)
        else:
            echo(err.format_message(), err=True)
        return EXIT_USAGE
    except click.ClickException as err:
        _report_usage_error(err, state)
        return EXIT_USAGE
    except click.exceptions.Abort as err:
        echo("Aborted.", err=True)
        stop = err.__cause__  # SIGTERM or SIGHUP (Terminated), as a second Ctrl-C
        if state.json_mode:  # -j promises one document, a cancelled command's too
            if isinstance(stop, Terminated):
                error = cancelled(terminated=True, signal_name=stop.signal_name)
                emit_error(error, json_mode=True)
            else:
                emit_error(cancelled(), json_mode=True)
        return stop.exit_status if isinstance(stop, Terminated) else _EXIT_INTERRUPTED
    except JcliError as err:
        emit_error(err, json_mode=state.json_mode)
        return EXIT_USAGE if err.code == ErrorCode.USAGE_ERROR else EXIT_ERROR
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_ERROR
    except SystemExit as err:  # click exits this way after a broken pipe
        return err.code if isinstance(err.code, int) else EXIT_ERROR
    except Exception as err:
        emit_error(JcliError.unexpected(err), json_mode=state.json_mode)
        return EXIT_ERROR
    return result if isinstance(result, int) else EXIT_OK


def _json_requested(args: Sequence[str]) -> bool:
    """Whether ``-j``/``--json`` appears before ``--``: decides the error format even when the
    arguments fail to parse (the parsed flag is authoritative once parsing succeeds)."""
    for arg in args:
        if arg == "--":
            return False
        if arg in JSON_FLAGS:
            return True
    return False


def _report_usage_error(err: click.ClickException, state: CliState) -> None:
    message = err.format_message()
    details: dict[str, str] = {}
    ctx = getattr(err, "ctx", None)
    if isinstance(ctx, click.Context):
        details["command"] = ctx.command_path
    param = getattr(err, "param", None)
    if isinstance(param, click.Parameter) and param.name:
        details["parameter"] = param.name
    if not state.json_mode and isinstance(ctx, click.Context):
        echo(ctx.get_usage(), err=True)
        echo(f"Try '{ctx.command_path} --help' for help.\n", err=True)
    emit_error(UsageError(message, details), json_mode=state.json_mode)


def _silence_stdout() -> None:
    """After a broken pipe (e.g. ``| head``), point stdout at devnull so the interpreter's
    final flush does not raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
