"""What a command says when the machine stops it (an OSError) or the person does (Ctrl-C): one line each.

Both lines end with how to go on, and that depends on the command: a promotion
(``run``, ``resume``, a decision) goes on with ``promote resume --work W``, a
benchmark run (``bench run`` / ``teardown``) with the same command plus
``--resume``, and a one-shot command (``translate``, ``plan`` ...) is simply run
again. A full disk or a file-size limit is not a permissions problem: the line
names the directory being written and says to free space (or raise ``ulimit -f``); git finding no
room in the fork arrives here too (``bot.forge.git.GitNoRoom``), not as git's bare "unable to write".
The bot's own install paths (its Go mirror, prompts, dictionary) are shown
relative to it: they say nothing to the person and would leak where the bot lives.
"""

from __future__ import annotations

import errno
import re
import shutil
from pathlib import Path

from bot.escape import line, sh

#: Errors that mean "no room to write": free space or raise the limit; the path and permissions are fine.
FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})

#: The bot's own folders (its install): a path under one is named relative to the install.
_INSTALL_DIRS = ("bot", "gomirror", "dictionary", "prompts", ".github")


def _how_to_go_on(args) -> str | None:
    """The command that continues this one where it stopped (see the module docstring); None: run it again."""
    if getattr(args, "writes", False) and getattr(args, "work", None) is not None:
        return f"`promote resume --work {sh(str(args.work))}`"
    if getattr(args, "bench_command", None) in ("run", "teardown"):
        return "the same command" if getattr(args, "resume", False) else "the same command plus --resume"
    return None


def interrupted_line(args) -> str:
    """Ctrl-C: what was kept and how to go on."""
    how = _how_to_go_on(args)
    if getattr(args, "writes", False) and how:
        return f"promote: interrupted; state was saved after the last finished step, {how} continues"
    if how:
        return f"promote: interrupted; finished cells are kept, {how} continues"
    out = getattr(args, "out", None)
    if out is not None:
        return f"promote: interrupted; {line(out)} may be incomplete: run the command again"
    return "promote: interrupted"


def os_error_line(exc: OSError, args) -> str:
    """The machine refused: which file, why, and the fix (free space for a full disk, else the path)."""
    code, strerror, where, more = _unwrap(exc)
    shown = f"{_shown(where)}: " if where else ""
    if code in FULL:
        return line(
            f"promote: error: {shown}{strerror}{more}; free space on the filesystem holding {_target(args, where)} "
            f"(or raise `ulimit -f`), then {_how_to_go_on(args) or 'run the command again'}"
        )
    return line(f"promote: error: {shown}{strerror}{more}; fix the path or its permissions")


def _unwrap(exc: OSError) -> tuple[int | None, str, str | None, str]:
    """(errno, reason, file, " (and N more files)"): a ``shutil.Error`` (copytree) carries a list of
    (source, destination, reason) instead of one error; its first entry stands for all, with a count."""
    entries = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(entries, list) and entries and isinstance(entries[0], tuple) and len(entries[0]) == 3:
        _, dst, why = entries[0]
        more = f" (and {len(entries) - 1} more file{'s' if len(entries) > 2 else ''})" if len(entries) > 1 else ""
        found = re.match(r"\[Errno (\d+)\] ([^:]+)", str(why))
        if found:
            return int(found[1]), found[2], str(dst), more
        return None, str(why), str(dst), more
    return exc.errno, exc.strerror or str(exc), exc.filename and str(exc.filename), ""


def _shown(path: str) -> str:
    """``path``, or for a file of the bot's own install the bot's name for it (``the bot's gomirror/...``)."""
    from bot import PROJECT_ROOT

    p = Path(path)
    for top in _INSTALL_DIRS:
        if p.is_relative_to(PROJECT_ROOT / top):
            return f"the bot's {p.relative_to(PROJECT_ROOT).as_posix()}"
    return path


def _target(args, where: str | None) -> str:
    """The directory the command was writing: its --work, --results or --out, else the failing file's."""
    for name in ("work", "results", "out"):
        value = getattr(args, name, None)
        if value is not None:
            return str(value)
    return str(Path(where).parent) if where else "the directory it writes to"
