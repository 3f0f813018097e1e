"""The local rehearsal's work directory: its settings (``run.json``) and the lock its writers take.

A work directory is something people copy, move and share between terminals, so
it has to know where it is and who is using it:

- ``run.json`` stores the fork *relative to the work directory* when the fork is
  inside it (the default ``WORK/fork``), so a copy carries its own fork and
  commits there, never into the original's. It also records where the work
  directory was and a run id: a copy whose fork lives outside it would drive the
  same branch as its original, and is refused with what to do instead; a work
  directory that was moved goes on, with a note.
- Every command that writes (``run``, ``resume``, ``approve``, ``request-changes``,
  ``reject``) holds ``WORK/lock`` while it works. The file names the holder's pid,
  so a second command says "another promote command holds this work directory"
  instead of failing half-way on a fork the first one is still creating; a lock
  left by a killed process (its pid is gone) is taken over with a note.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from bot.escape import line
from bot.model import RequestError

RUN_FILE = "run.json"
LOCK_FILE = "lock"


class WorkDirError(RequestError):
    """The work directory cannot be used as it is."""


# ------------------------------------------------------------------ run.json
def read_settings(work: Path, missing_ok: bool = False) -> dict | None:
    """The settings a promotion was started with, ``fork`` made absolute (WorkDirError if unusable).

    Adds ``moved_from`` when the work directory is no longer where it was started; the caller
    records the new place (``write_settings``) while it holds the lock.
    """
    work = Path(work)
    if work.exists() and not work.is_dir():
        raise WorkDirError(f"--work {work}: is a file, not a directory; pass the promotion's work directory")
    f = work / RUN_FILE
    if not f.exists():
        if missing_ok:
            return None
        raise WorkDirError(f"{work}: no promotion here; start one with `promote run REQUEST --work {work}`")
    settings = _load(f)
    if settings is None:
        raise WorkDirError(
            f"{f}: the run settings are unreadable (expected request, fork and results); "
            f"restore the file, or start again with `promote run REQUEST --work {work}`"
        )
    stored_fork = Path(settings["fork"])
    fork = stored_fork if stored_fork.is_absolute() else work / stored_fork
    recorded = settings.get("work")
    if recorded is not None and Path(recorded) != work:
        if stored_fork.is_absolute() and _run_id(Path(recorded)) == settings.get("id"):
            raise _copy_error(work, Path(recorded), fork)
        settings["moved_from"] = recorded
    elif recorded is None and stored_fork.is_absolute() and fork.name == "fork" and fork.parent != work:
        # run.json written before work directories recorded themselves: the default fork of another one.
        if (fork.parent / RUN_FILE).is_file():
            raise _copy_error(work, fork.parent, fork)
        if not fork.exists() and (work / "fork" / ".git").exists():
            settings["moved_from"] = str(fork.parent)
            fork = work / "fork"
    settings["fork"] = str(fork)
    return settings


def write_settings(work: Path, settings: dict) -> None:
    """Save ``settings``: the fork relative to ``work`` when inside it, with this directory's place and run id."""
    work = Path(work)
    out = {k: v for k, v in settings.items() if k != "moved_from"}
    fork = Path(out["fork"])
    if fork.is_absolute() and fork.is_relative_to(work):
        out["fork"] = fork.relative_to(work).as_posix()
    out["work"] = str(work)
    out.setdefault("id", uuid.uuid4().hex)
    tmp = work / (RUN_FILE + ".tmp")
    tmp.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    tmp.replace(work / RUN_FILE)


def _load(f: Path) -> dict | None:
    try:
        settings = json.loads(f.read_bytes())
    except (OSError, ValueError):  # JSONDecodeError, UnicodeDecodeError
        return None
    ok = (
        isinstance(settings, dict)
        and isinstance(settings.get("request"), str)
        and isinstance(settings.get("fork"), str)
        and isinstance(settings.get("results"), str | None)
        and isinstance(settings.get("llm", {}), dict)
        and isinstance(settings.get("work"), str | None)
        and isinstance(settings.get("id"), str | None)
    )
    return settings if ok else None


def _run_id(work: Path) -> str | None:
    settings = _load(work / RUN_FILE) if (work / RUN_FILE).is_file() else None
    return settings.get("id") if settings else None


def _copy_error(work: Path, original: Path, fork: Path) -> WorkDirError:
    return WorkDirError(
        f"{work} is a copy of the work directory {original}, and both drive the fork {fork}: going on would "
        f"commit to the original's branch. Keep using {original}; or give the copy its own fork: move "
        f"{work / 'state.json'} away and run `promote run REQUEST --work {work} --fork NEW-FORK`"
    )


# ---------------------------------------------------------------------- lock
@contextmanager
def work_lock(work: Path, command: str) -> Iterator[None]:
    """Hold ``WORK/lock`` for the duration of a command that writes; WorkDirError if someone else holds it."""
    work = Path(work)
    path = work / LOCK_FILE
    me = {
        "pid": os.getpid(),
        "start": _start_time(os.getpid()),
        "host": socket.gethostname(),
        "command": command,
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    tmp = work / f"{LOCK_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(me), encoding="utf-8")
    try:
        for _ in range(5):
            try:
                os.link(tmp, path)  # atomic: the lock appears complete, or not at all
                break
            except FileExistsError:
                holder = _holder(path)
                if holder is not None and _alive(holder):
                    raise WorkDirError(
                        f"{work}: another promote command holds this work directory "
                        f"(pid {holder.get('pid')} on {holder.get('host')}, `promote {line(holder.get('command'))}` "
                        f"since {line(holder.get('since'))}); wait for it to finish, or stop it and run this again"
                    ) from None
                _take_over(path, holder)
        else:  # pragma: no cover - five lost races in a row
            raise WorkDirError(f"{work}: could not take {path}; run the command again")
    finally:
        tmp.unlink(missing_ok=True)
    try:
        yield
    finally:
        if _holder(path) == me:
            path.unlink(missing_ok=True)


def holder_of(work: Path) -> dict | None:
    """The live process holding ``WORK/lock``, if any (for `promote status`)."""
    holder = _holder(Path(work) / LOCK_FILE)
    return holder if holder is not None and _alive(holder) else None


def _holder(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pid"), int) else None


def _alive(holder: dict) -> bool:
    if holder.get("host") != socket.gethostname():
        return True  # another machine's process (a shared disk): it cannot be checked from here
    pid = holder["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    start = holder.get("start")
    return start is None or _start_time(pid) in (None, start)  # a reused pid has another start time


def _take_over(path: Path, holder: dict | None) -> None:
    """Remove a lock whose holder is gone (or that cannot be read), saying so.

    Two commands may find the same stale lock: the first moves it aside and takes the lock; if the second
    then moved the first one's fresh lock aside, it puts it back and finds the lock held.
    """
    stale = path.with_name(f"{path.name}.stale-{os.getpid()}")
    try:
        path.rename(stale)
    except FileNotFoundError:
        return  # another command moved it first; try again
    moved = _holder(stale)
    if moved != holder and moved is not None and _alive(moved):
        with contextlib.suppress(FileExistsError):
            os.link(stale, path)
        stale.unlink(missing_ok=True)
        return
    if holder is not None:
        why = f"pid {holder.get('pid')} (`promote {line(holder.get('command'))}` since {line(holder.get('since'))})"
        print(f"promote: note: took over the lock of {why}, which is no longer running", file=sys.stderr)
    else:
        print(f"promote: note: took over an unreadable lock file {path}", file=sys.stderr)
    stale.unlink(missing_ok=True)


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), to tell a reused pid from its holder."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


# ------------------------------------------------------------------ a command stopped by an error
CRASH_FILE = "stopped-by-error.json"


def _state_digest(work: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256((Path(work) / "state.json").read_bytes()).hexdigest()
    except OSError:
        return None


def record_crash(work: Path, command: str, exc: BaseException) -> None:
    """A writing command stopped on an error that is no request problem (a bug): remember it beside the state,
    so `promote status` does not call it an interruption that `promote resume` continues; the same state makes
    the same error again. Best effort: the error itself is what the person sees."""
    record = {"command": command, "error": f"{type(exc).__name__}: {exc}"[:500], "state": _state_digest(work)}
    with contextlib.suppress(OSError):
        (Path(work) / CRASH_FILE).write_text(json.dumps(record), encoding="utf-8")


def crash_of(work: Path) -> dict | None:
    """The error that stopped the last writing command, while the state is still the one it stopped on."""
    try:
        record = json.loads((Path(work) / CRASH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("state") != _state_digest(work):
        return None  # a later command moved the promotion on: that error is history
    return record
