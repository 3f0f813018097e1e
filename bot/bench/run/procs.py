"""Running one command line: logged, in its own process group, killable on cancel or timeout."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass


class Cancelled(Exception):
    """SIGTERM / SIGINT (a cancelled job): stop what runs, tear down, say how to resume."""


@dataclass
class Result:
    argv: list[str]
    code: int
    output: str
    seconds: float


class Procs:
    """Runs commands one at a time; ``cancel()`` (from a signal handler) kills the current one."""

    def __init__(self, log: Callable[[str], None], env: dict[str, str] | None = None, dry_run: bool = False):
        self.log = log
        self.env = env
        self.dry_run = dry_run
        self._current: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self.cancelled = False

    def run(self, argv: Sequence[str], *, timeout: float | None = None, cwd: str | None = None) -> Result:
        line = shlex.join(argv)
        self.log(f"$ {line}")
        if self.dry_run:
            return Result(list(argv), 0, "", 0.0)
        if self.cancelled:
            raise Cancelled("cancelled")
        start = time.monotonic()
        with self._lock:
            proc = subprocess.Popen(
                list(argv),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=self.env,
                cwd=cwd,
                start_new_session=True,
            )
            self._current = proc
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._kill(proc)
            out, _ = proc.communicate()
            return Result(list(argv), 124, (out or "") + f"\n(timed out after {timeout:g} s)", time.monotonic() - start)
        finally:
            with self._lock:
                self._current = None
        if self.cancelled:
            raise Cancelled("cancelled")
        return Result(list(argv), proc.returncode, out or "", time.monotonic() - start)

    def cancel(self) -> None:
        self.cancelled = True
        with self._lock:
            proc = self._current
        if proc is not None:
            self._kill(proc)

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def cancel_on_signals(procs: Procs) -> Iterator[None]:
    """While inside: SIGTERM / SIGINT kill the command ``procs`` is running and raise ``Cancelled`` (the caller
    tears down and says how to resume)."""

    def handler(signum, frame):
        procs.cancel()
        raise Cancelled(signal.Signals(signum).name)

    previous = {}
    for s in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(ValueError):  # not the main thread
            previous[s] = signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
