"""The directories and files commands write on a person's machine, with one-line errors for the ways that fails.

``--out`` and ``--work`` name places on someone's disk: a regular file, a path
under a regular file, a directory without write permission. Each becomes one
line that names the flag, the path and what to pass instead, never an OSError
traceback, and it is found before anything is written.
"""

from __future__ import annotations

from pathlib import Path

from bot.model import RequestError


class OutputError(RequestError):
    """A directory a command must write to cannot be used."""


def output_dir(path: Path, flag: str = "--out") -> Path:
    """``path`` as a directory that exists, creating it (and its parents) if needed."""
    path = Path(path)
    for p in (path, *path.parents):
        if p.exists():
            if not p.is_dir():
                where = "is a file" if p == path else f"is under {p}, which is a file"
                raise OutputError(f"{flag} {path}: {where}, not a directory; pass a directory path")
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{flag} {path}: cannot create it ({exc.strerror}); pass a writable directory") from None
    return path


def write_files(out: Path, files: dict[str, str | bytes], flag: str = "--out") -> None:
    """Write ``files`` (relative path -> content) under ``out``."""
    for rel, content in sorted(files.items()):
        target = out / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise OutputError(
                f"{flag} {out}: cannot write {rel} ({exc.strerror}); clear the directory or pass another one"
            ) from None
