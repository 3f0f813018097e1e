"""`promote`: the command line. One module per command group, each owning its subcommands.

Each module in ``COMMANDS`` exposes ``register(subparsers)``, which adds its
subcommands with ``set_defaults(func=handler)``; a handler takes the parsed
arguments and returns the exit code. Heavy imports (pandas, scipy, tree-sitter)
happen inside handlers, so ``promote --help`` starts fast.

A command that reads the bot's data (the dictionary, the prompts, the Go mirror, the issue form: ``bot.home``)
is stopped before it starts when the install lacks it; one that does not declares ``set_defaults(home=False)``.

Exit codes: 0 success; 1 the work ran but found a blocking problem (e.g. a
CRITICAL finding); 2 unusable input or an illegal request, with one line on
stderr that names the problem and the fix.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import textwrap
import threading
from typing import NoReturn

from bot import __version__
from bot.model import RequestError

#: Command modules under bot.cli, in the order they appear in --help.
COMMANDS = ["pipeline", "translate", "upstream", "evidence", "github", "bench"]

#: Set by ``command`` (the executable); ``main`` called in another program's process leaves its signals alone.
_AS_COMMAND = False


class UsageError(RequestError):
    """Raised by handlers for a request that cannot be carried out as asked."""


class PathHelpFormatter(argparse.HelpFormatter):
    """Help whose lines break between words only: a path pattern such as ``rate-<rate>-rep-<n>/`` stays whole
    on one line, where argparse would split it at its hyphens and leave a pattern no one can copy."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="promote",
        description="Promote a BLIS-evolved policy into an llm-d-router plugin through 7 stages and 3 gates.",
    )
    parser.add_argument("--version", action="version", version=f"promote {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"bot.cli.{name}").register(sub)
    return parser


def command() -> NoReturn:
    """The ``promote`` executable: ``main`` with the exit status a shell expects, whatever the Ctrl-C timing.

    People press Ctrl-C again while a stop is being reported. The first one is answered (``_call``: what was
    saved and how to resume); one that lands after that answer, while the interpreter winds down, would
    otherwise escape as an uncaught KeyboardInterrupt and the process would die by SIGINT (status -2, no
    message). So once the command has stopped for any reason, further Ctrl-Cs are ignored: it is exiting anyway.
    """
    global _AS_COMMAND  # noqa: PLW0603 - one flag for the process the executable is
    _AS_COMMAND = True
    try:
        code = main()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:  # a second Ctrl-C while the first was being answered: the answer stands
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        code = 130
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    streams = sys.stdout, sys.stderr
    if getattr(args, "writes", False):  # a write command finishes its work even if its reader goes away
        sys.stdout, sys.stderr = ReaderMayLeave(sys.stdout), ReaderMayLeave(sys.stderr)
    try:
        return _call(args)
    finally:
        sys.stdout, sys.stderr = streams  # main() called in-process (tests, the Action) leaves them as it found them


def _call(args) -> int:
    try:
        if getattr(args, "home", True):
            from bot import PROJECT_ROOT
            from bot.home import require

            require(PROJECT_ROOT)  # a non-editable install without PROMOTION_BOT_HOME: say so, not a site-packages path
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except OSError as exc:  # the machine refused (permissions, a full disk): say which file, why and the fix
        # (first: git finding no room in the fork is a ForgeError too, and the fix is room, see GitNoRoom)
        from bot.cli.stopped import os_error_line

        print(os_error_line(exc, args), file=sys.stderr)
        return 2
    except RequestError as exc:  # includes UsageError, SourceError, ReportError ...
        print(f"promote: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: the traceback is for its report; status must not call it an interruption
        if getattr(args, "writes", False) and getattr(args, "work", None) is not None:
            from bot.cli.workdir import record_crash

            record_crash(args.work, str(getattr(args, "command", "")), exc)
        raise
    except KeyboardInterrupt:
        if _is_command():  # the executable: a further Ctrl-C must not cut the answer short (see ``command``)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        from bot.cli.stopped import interrupted_line

        print(interrupted_line(args), file=sys.stderr)
        return 130


def _is_command() -> bool:
    """True in the ``promote`` executable (main thread, called from ``command``), not when a test or the
    Action calls ``main`` in its own process, whose Ctrl-C handling is its own."""
    return _AS_COMMAND and threading.current_thread() is threading.main_thread()


class ReaderMayLeave:
    """stdout or stderr of a command that writes state (`run`, `resume`, a decision): when the reader goes
    away (`promote approve 1 2>&1 | head -5`), the rest of the output goes to /dev/null and the work goes on.

    Otherwise the next progress line would raise BrokenPipeError mid-stage: the decision recorded, the stage
    it started cut short, and the person left to guess that `promote resume` is needed. The exit status is
    the work's own; a read-only command (`status`) still stops at once with 141 (``_reader_went_away``)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            _to_devnull(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            _to_devnull(self._stream)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _to_devnull(stream) -> None:
    """Point the stream's file descriptor at /dev/null: what it still buffers, and children's output, go there."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())
    os.close(devnull)


def _reader_went_away() -> int:
    """`promote status | head -2`: the reader closed the pipe. Stop quietly, as coreutils do.

    Python ignores SIGPIPE, so the write raised instead; later writes (and the flush at exit) would raise
    again, so stdout is pointed at /dev/null. The exit status is the one a SIGPIPE death has (128 + 13).
    """
    _to_devnull(sys.stdout)
    return 128 + signal.SIGPIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
