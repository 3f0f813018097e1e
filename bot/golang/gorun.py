"""Every Go process the bot starts on generated or evolved code: in ``bot.sandbox``, against a trusted build cache.

``go test`` executes the evolved logic, so gofmt, build, vet and test all run
through the sandbox: the toolchain read-only, the scratch module read-write,
no network, an allowlisted environment, and limits on time, CPU and memory.

The Go build cache is what makes repeated checks take seconds rather than
minutes, and also what one run could poison for the next (a planted object
for a standard package would be linked into every later plugin). So the
cache is split by trust: a *trusted* cache is filled once per toolchain and
mirror by building only the in-repo mirror and the standard packages plugins
use (``warm_trusted_cache``), and every check mounts it as the lower layer of
a throwaway overlay, where its own writes vanish when it ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bot import PROJECT_ROOT, sandbox
from bot.golang.safety import ALLOWED_IMPORTS
from bot.sandbox import Limits, Mounts

#: Where a sandboxed command sees its overlaid build cache (inside its private /tmp).
SANDBOX_GOCACHE = "/tmp/promotion-gocache"
#: Bump when the warm-up below changes what it compiles.
WARM_VERSION = "2"

#: Standard packages generated plugins import besides the evolved program's own (bot/golang/templates).
_PLUGIN_STD = ("context", "encoding/json", "errors", "fmt", "math", "sync", "testing")
#: Standard packages the differential harness (BLIS mirror and harness command) imports besides those.
_HARNESS_STD = ("container/list", "hash/fnv", "os", "reflect", "runtime/debug", "runtime/pprof", "strconv", "strings")
#: Mirror-side packages generated tests import that no mirror package imports itself.
_MIRROR_TEST_DEPS = ("github.com/google/go-cmp/cmp",)


def go_env(gocache: str, scratch: Path, tmpdir: str) -> dict[str, str]:
    """Offline, reproducible and minimal: only what Go needs, nothing from the caller's environment."""
    gopath = scratch / ".gopath"
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(scratch),
        "TMPDIR": tmpdir,
        "LANG": "C.UTF-8",
        "GOPROXY": "off",
        "GOFLAGS": "-mod=mod -trimpath -buildvcs=false",
        "GOTOOLCHAIN": "local",
        "GOWORK": "off",
        "GOSUMDB": "off",
        "GONOSUMDB": "*",
        "GONOSUMCHECK": "1",
        "GOPRIVATE": "*",
        "GOENV": "off",
        "GOTELEMETRY": "off",
        "CGO_ENABLED": "0",
        "GOCACHE": gocache,
        "GOPATH": str(gopath),
        "GOMODCACHE": str(gopath / "pkg" / "mod"),
    }


@dataclass
class GoBox:
    """Runs Go commands for one scratch module."""

    goroot: Path
    scratch: Path
    cache_dir: Path
    limits: Limits
    require_sandbox: bool = False
    trusted_cache: Path | None = None  # set when sandboxed: the overlay's lower layer
    private_cache: Path | None = None  # where overlays cannot mount: this box's own copy of the trusted cache

    @property
    def sandboxed(self) -> bool:
        return self.trusted_cache is not None

    def env(self) -> dict[str, str]:
        if self.private_cache is not None:
            return go_env(str(self.private_cache), self.scratch, "/tmp")
        if self.sandboxed:
            return go_env(SANDBOX_GOCACHE, self.scratch, "/tmp")
        tmp = self.scratch / ".tmp"
        tmp.mkdir(exist_ok=True)
        # Without a sandbox nothing is isolated anyway; keep such a cache apart from the trusted one.
        return go_env(str(self.cache_dir / "gocache-unsandboxed"), self.scratch, str(tmp))

    def mounts(self) -> Mounts:
        use_overlay = self.trusted_cache is not None and self.private_cache is None
        overlays = ((self.trusted_cache, Path(SANDBOX_GOCACHE)),) if use_overlay else ()
        return Mounts(read_only=(self.goroot,), read_write=(self.scratch,), overlays=overlays)

    def run(self, cmd: list[str], cwd: Path, limits: Limits | None = None) -> sandbox.Result:
        return sandbox.run(
            cmd,
            cwd=cwd,
            env=self.env(),
            mounts=self.mounts(),
            limits=limits or self.limits,
            require_sandbox=self.require_sandbox,
        )


@contextlib.contextmanager
def go_box(
    go: Path, scratch: Path, cache_dir: Path, limits: Limits, *, require_sandbox: bool = False
) -> Iterator[GoBox]:
    """A GoBox whose trusted cache (when sandboxed) cannot change under it while it runs."""
    goroot = go.resolve().parent.parent
    cache_dir.mkdir(parents=True, exist_ok=True)
    if not sandbox.available():
        if require_sandbox or sandbox.required():
            sandbox.require()
        yield GoBox(goroot, scratch, cache_dir, limits, require_sandbox)
        return
    trusted = warm_trusted_cache(go, cache_dir, limits)
    with _locked(cache_dir, shared=True):
        private = None
        if not sandbox.probe()[1]:  # no overlays here: one private copy per box (inside its scratch)
            private = scratch / ".gocache"
            shutil.copytree(trusted, private, symlinks=True)
        yield GoBox(goroot, scratch, cache_dir, limits, require_sandbox, trusted_cache=trusted, private_cache=private)


def warm_trusted_cache(go: Path, cache_dir: Path, limits: Limits) -> Path:
    """Fill (once per toolchain and mirror) the build cache every sandboxed check reads through an overlay.

    Only trusted code is compiled here: the in-repo mirror and standard packages. It runs in the
    sandbox too, with the cache mounted writable. A failed warm-up leaves no marker, so the next
    check tries again; the check itself still works from whatever the cache holds.
    """
    trusted = cache_dir / "trusted-gocache"
    marker = cache_dir / f"trusted-{_warm_key(go)}.ok"
    if marker.exists():
        return trusted
    with _locked(cache_dir, shared=False):
        if marker.exists():
            return trusted
        trusted.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="promotion-go-warm-", ignore_cleanup_errors=True) as tmp:
            scratch = Path(tmp)
            from bot.golang.toolchain import _copy_mirror

            module = _copy_mirror(scratch)
            warm = module / "internal" / "promotionwarm"
            warm.mkdir(parents=True)
            std = sorted((set(ALLOWED_IMPORTS) | set(_PLUGIN_STD) | set(_HARNESS_STD)) - {"testing"})
            (warm / "warm.go").write_text(
                "// Package promotionwarm only exists to compile what generated plugins import.\npackage promotionwarm\n\n"
                "import (\n" + "".join(f'\t_ "{p}"\n' for p in std) + ")\n",
                encoding="utf-8",
            )
            (warm / "warm_test.go").write_text(
                'package promotionwarm\n\nimport (\n\t"testing"\n\n'
                + "".join(f'\t_ "{p}"\n' for p in _MIRROR_TEST_DEPS)
                + ")\n\nfunc TestWarm(t *testing.T) {}\n",
                encoding="utf-8",
            )
            goroot = go.resolve().parent.parent
            # Action ids do not depend on GOCACHE's path (nor, with -trimpath, on the scratch path),
            # so what is compiled here is found again through the checks' overlay.
            env = go_env(str(trusted), scratch, "/tmp")
            mounts = Mounts(read_only=(goroot,), read_write=(scratch, trusted))
            ok = True
            for cmd in (["build", "./..."], ["vet", "./..."], ["test", "-count=1", "-vet=off", "./..."]):
                res = sandbox.run([str(go), *cmd], cwd=module, env=env, mounts=mounts, limits=limits)
                ok = ok and res.returncode == 0
        if ok:
            marker.write_text(f"{go}\n", encoding="utf-8")
    return trusted


def _warm_key(go: Path) -> str:
    h = hashlib.sha256(
        f"{WARM_VERSION}\n{go.resolve()}\n{sorted(ALLOWED_IMPORTS)}\n{_PLUGIN_STD}\n{_HARNESS_STD}\n".encode()
    )
    root = PROJECT_ROOT / "gomirror"
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:20]


@contextlib.contextmanager
def _locked(cache_dir: Path, *, shared: bool) -> Iterator[None]:
    with (cache_dir / "trusted.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
