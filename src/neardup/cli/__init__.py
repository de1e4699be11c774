"""The ``neardup`` command line: one module per subcommand.

Exit codes: 0 success; 1 bad data (one line naming the file and row: a malformed row with
``--on-error fail``, or every row skipped with ``--on-error skip``); 2 usage error (missing
input, unknown format, bad option, ``--out`` equal to an input); 130 Ctrl-C, 143 SIGTERM, 129
SIGHUP. Never a traceback for bad input; on a non-zero exit no output file is replaced.
"""

from __future__ import annotations

import os

# before numpy loads: the commands do no linear algebra, and OpenBLAS's thread pool cost
# ~40 ms of every run's start on a 2-core machine (its threads spin beside the kernels);
# a value the user set is kept (issue 24)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import gc
import importlib
import signal
import sys
from typing import Any

import click

from neardup import __version__
from neardup._extras import MissingExtraError
from neardup._heap import fix_mmap_threshold

try:
    from neardup.cli._common import DataError, one_line
except MissingExtraError as exc:  # no kernels at all (module load needs them): say the fix
    click.echo(f"neardup: error: {exc}", err=True)
    sys.exit(2)
from neardup.io.writers import OutputClosed

EXAMPLES = """
\b
Examples:
  neardup dedup examples/sample_news.jsonl --out - --time-field date --window 7d
  neardup fingerprint docs.jsonl --out fps.jsonl
  neardup index build idx/ docs.jsonl && neardup index query idx/ "some text"
  neardup explain "first text" "second text"
  neardup idf fit corpus.jsonl.gz --out idf.tsv

\b
Exit codes: 0 success; 1 bad data (file and row named); 2 usage error; 130 Ctrl-C,
143 SIGTERM, 129 SIGHUP. On a non-zero exit no output file is replaced.
"""


class NeardupGroup(click.Group):
    """A group that reports usage and data errors in one line, never with a traceback."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            rv = super().main(
                args, prog_name or "neardup", complete_var, standalone_mode=False, **extra
            )
        except click.exceptions.NoArgsIsHelpError as exc:  # bare `neardup`: help, no "error"
            click.echo(exc.format_message(), err=True)
            sys.exit(2)
        except click.UsageError as exc:
            click.echo(f"neardup: error: {one_line(exc.format_message())}", err=True)
            sys.exit(2)
        except DataError as exc:
            exc.show()
            sys.exit(1)
        except click.ClickException as exc:
            click.echo(f"neardup: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("neardup: aborted", err=True)
            sys.exit(130)
        except (BrokenPipeError, OutputClosed):  # `neardup ... | head`: stop quietly, status 0
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # so the final flush at exit cannot fail again
            sys.exit(0)
        except MissingExtraError as exc:  # a URL whose store library is missing: which extra
            click.echo(f"neardup: error: {exc}", err=True)
            sys.exit(2)
        except OSError as exc:  # unreadable input, unwritable output: one line, no traceback
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"neardup: error: {exc.strerror or exc}{where}", err=True)
            sys.exit(2)
        sys.exit(rv if isinstance(rv, int) else 0)


# Subcommands are imported when used: `neardup dedup` should not pay for the evaluation
# harness (scipy) or the index tools. name -> "module:attribute".
SUBCOMMANDS = {
    "dedup": "neardup.cli.dedup:dedup_command",
    "fingerprint": "neardup.cli.fingerprint:fingerprint_command",
    "index": "neardup.cli.index:index_group",
    "explain": "neardup.cli.explain:explain_command",
    "idf": "neardup.cli.idf:idf_group",
    "eval": "neardup.eval.cli:eval_command",
    "serve": "neardup.cli.serve:serve_command",
    "overlap": "neardup.cli.overlap:overlap_command",
}


class LazyGroup(NeardupGroup):
    """Imports a subcommand's module only when that subcommand (or the full help) is needed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *SUBCOMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in SUBCOMMANDS and cmd_name not in self.commands:
            module, _, attr = SUBCOMMANDS[cmd_name].partition(":")
            try:
                command = getattr(importlib.import_module(module), attr)
            except MissingExtraError as exc:  # its extra is not installed: say which
                command = _needs_extra(cmd_name, str(exc))
            except ImportError:  # an optional part that is not installed
                return None
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


def _needs_extra(name: str, message: str) -> click.Command:
    """A stand-in for a subcommand whose extra is missing: running it prints ``message``."""

    def fail(**_: Any) -> None:
        raise click.UsageError(message)

    return click.Command(
        name,
        callback=fail,
        help=message,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


@click.group(
    cls=LazyGroup,
    epilog=EXAMPLES,
    # every subcommand's --help shows the options' defaults (those not None or False)
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
)
@click.version_option(version=__version__, prog_name="neardup")
def cli() -> None:
    """neardup: find near-duplicate texts with SimHash."""


def _exit_on_signal(signum: int, frame: Any) -> None:
    # SystemExit unwinds the `with` blocks, so temporary outputs and stdin spools are removed
    raise SystemExit(128 + signum)


def main() -> None:
    """Console-script entry point (``neardup = neardup.cli:main``)."""
    # A command builds many long-lived containers (one dict per input record) and little
    # cyclic garbage: the default collector (every 700 allocations, re-walking what survived)
    # cost ~5 % of a Reuters dedup. Objects from the imports move out of its reach; it runs
    # 100x less often.
    gc.freeze()
    gc.set_threshold(70_000, 20, 20)
    fix_mmap_threshold()  # large blocks unmapped when freed, not kept in the heap (issue 39)
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, _exit_on_signal)
    cli()
