"""The "go-harness" execution kind: build the differential harness once, run it, read its answer.

Runs only through the execution port (``bot.execution``; registered in ``KINDS``), because the harness
is the evolved program compiled: in the GitHub home a job without secrets runs it and the answer is
replayed. Both the build and the run happen in the sandbox (``bot.golang.gorun``: no network, the
toolchain read-only, the scratch module the only writable place, limits on time and memory). The
compiled binary is kept by the content hash of its sources, so a promotion's stages ask for the same
harness and compile it once. The request carries how to sample the states, not the states (tens of
megabytes of JSON): they are sampled here while Go compiles, and split between one harness process
per core. The answer is JSON: per-state decisions of the as-deployed run, the probe results the unit
tests are chosen from, and the fidelity summary (``differential``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

import orjson

from bot import PROJECT_ROOT, sandbox
from bot.golang import differential, gorun, harness_build
from bot.golang.toolchain import MIRROR_MODULES, PluginFilesError, ToolchainMissing, _tool_paths, default_cache_dir
from bot.sandbox import Limits, Mounts

BINARY = "promotion-harness"
#: How a harness run's log starts when the evolved code printed past the sandbox's output limit.
FLOODED = "the harness was stopped by the sandbox's output limit"
BUILD_LIMITS = Limits(wall_seconds=600)
#: A harness run takes about a second (0.3-0.8 s on the corpus); a minute is tens of times that on a loaded
#: machine, and an evolved loop that never returns is stopped there instead of holding the run for five.
RUN_LIMITS = Limits(wall_seconds=60, cpu_seconds=60, memory_bytes=4 << 30)
#: An answer holds a few decisions per state it was given: a third of its input or less on the corpus. What
#: the evolved code returns goes into it (an admission's error text), so one far larger than its input
#: was inflated by that code; it is refused before the bot reads it (and the harness cannot write more).
ANSWER_SLACK = 16 << 20
_ROOTS = ("blis/", "llm-d-router/")


def _check_paths(files: dict[str, str]) -> None:
    for path in files:
        p = PurePosixPath(path)
        if p.is_absolute() or ".." in p.parts or not path.startswith(_ROOTS) or not path.endswith(".go"):
            raise PluginFilesError(f"harness file {path!r} must be a .go file under blis/ or llm-d-router/")


def _scratch(dest: Path, files: dict[str, str]) -> None:
    src = PROJECT_ROOT / "gomirror"
    for name in (*MIRROR_MODULES, "blis"):
        if not (src / name / "go.mod").is_file():
            raise ToolchainMissing(f"{src / name / 'go.mod'} is missing; restore gomirror/ from the repository")
        shutil.copytree(src / name, dest / name, ignore=shutil.ignore_patterns(".git", "go.sum", "*_test.go"))
    for old in (dest / "blis" / "sim").glob("*.go"):
        old.unlink()
    for rel, text in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    gomod = dest / "llm-d-router" / "go.mod"
    gomod.write_text(
        gomod.read_text(encoding="utf-8")
        + "\nrequire github.com/inference-sim/inference-sim v0.0.0\n\n"
        + "replace github.com/inference-sim/inference-sim => ../blis\n",
        encoding="utf-8",
    )


def build(files: dict[str, str], cache_dir: Path | None = None) -> tuple[Path | None, str]:
    """(binary, log): the harness compiled once per distinct set of sources; None and the errors if not."""
    with building(files, cache_dir) as finish:
        return finish()


@contextlib.contextmanager
def building(files: dict[str, str], cache_dir: Path | None = None) -> Iterator[Callable[[], tuple[Path | None, str]]]:
    """Start compiling the harness and yield ``finish``, which waits for it and returns ``build``'s answer.

    The Python part (scratch module, sandbox set-up) runs here, before the caller goes on: in a thread it
    would wait for the caller's Python work at every system call (the interpreter lock), and Go would
    start only when that work is done. Only the wait for the Go process runs in a thread.
    """
    _check_paths(files)
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()[:32]
    cached = cache_dir / "harness" / key / BINARY
    if cached.is_file():
        yield lambda: (cached, "")
        return
    go, _ = _tool_paths()
    with (
        tempfile.TemporaryDirectory(prefix="promotion-go-", ignore_cleanup_errors=True) as tmp,
        gorun.go_box(go, Path(tmp), cache_dir, BUILD_LIMITS) as box,
        ThreadPoolExecutor(1) as pool,
    ):
        _scratch(Path(tmp), files)
        out = Path(tmp) / BINARY
        # Never shipped, never debugged: no symbol table or DWARF to write (about 0.2 s less to link).
        cmd = [str(go), "build", "-ldflags=-s -w", "-o", str(out), "./cmd/promotion-harness"]
        compiling = pool.submit(box.run, cmd, Path(tmp) / "llm-d-router")

        def finish() -> tuple[Path | None, str]:
            res = compiling.result()
            log = (res.stdout + res.stderr).replace(tmp, "$SCRATCH")
            if res.returncode != 0 or not out.is_file():
                return None, log or "go build failed without output"
            # Another promotion may look for this very binary meanwhile: it appears whole or not at all.
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(f".{BINARY}.{os.getpid()}.{threading.get_ident()}")
            shutil.copy2(out, partial)
            partial.replace(cached)
            return cached, log

        try:
            yield finish
        finally:
            compiling.result()  # the scratch module goes only when Go is done with it


#: The most harness processes one run starts: the states are split between them, one per core.
MAX_SHARDS = 4


def shards_for(inp: dict, cores: int | None = None) -> int:
    """How many processes to split ``inp``'s states between: one per core, at most MAX_SHARDS, none empty."""
    return max(1, min(cores or _usable_cores(), MAX_SHARDS, _states_per_run(inp)))


def _states_per_run(inp: dict) -> int:
    """How many states each run with states holds: the sampler gives all the same; 0 (do not split) if not."""
    counts = {len(r["states"]) for r in inp.get("runs") or [] if r.get("states")}
    return counts.pop() if len(counts) == 1 else 0


def _usable_cores() -> int:
    """The cores this process may run on (its affinity, which a container or taskset narrows), not the host's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def split(inp: dict, k: int) -> list[dict]:
    """``inp`` as ``k`` inputs, each with a contiguous slice of every run's states (all runs sample the same
    states, so a slice keeps a state's runs together) and of the probes, with the candidate sets its probes
    name. Each state and each probe is decided on its own (a stateful plugin is new for every state), so where
    one is decided changes nothing; ``merge`` puts the answers back in order."""
    n = _states_per_run(inp)
    if n == 0 and k > 1:
        raise ValueError("only runs of equally many states can be split")
    bounds = [n * i // k for i in range(k + 1)]
    probe_parts = _probe_slices(inp.get("probes") or [], inp.get("candidateSets") or [], k)
    parts = []
    for i in range(k):
        runs = [
            r | {"states": r["states"][bounds[i] : bounds[i + 1]]} if r.get("states") else r
            for r in inp.get("runs") or []
        ]
        parts.append(inp | {"runs": runs} | probe_parts[i])
    return parts


def _probe_slices(probes: list[dict], sets: list[list], k: int) -> list[dict]:
    """The probes in ``k`` contiguous slices of about equally many candidates (what a probe's time grows
    with), each with only the candidate sets its probes name, renumbered."""

    def candidates(p: dict) -> list:
        return sets[p["candidatesFrom"]] if "candidatesFrom" in p else p.get("candidates") or []

    total = sum(len(candidates(p)) for p in probes) or 1
    slices: list[list[dict]] = [[] for _ in range(k)]
    done = 0
    for p in probes:
        slices[min(k - 1, done * k // total)].append(p)
        done += len(candidates(p))
    out = []
    for chunk in slices:
        renumber: dict[int, int] = {}
        mine = []
        for p in chunk:
            if "candidatesFrom" in p:
                renumber.setdefault(p["candidatesFrom"], len(renumber))
                p = p | {"candidatesFrom": renumber[p["candidatesFrom"]]}
            mine.append(p)
        out.append({"probes": mine, "candidateSets": [sets[j] for j in renumber]})
    return out


def merge(outs: list[dict]) -> dict:
    """The answers of ``split``'s parts as one answer, in the order of the states and of the probes."""
    first = outs[0]
    runs = [
        run | {"results": [r for out in outs for r in out["runs"][i]["results"]]}
        for i, run in enumerate(first.get("runs") or [])
    ]
    probes = [p for out in outs for p in out.get("probes") or []]
    unsupported = list(dict.fromkeys(u for out in outs for u in out.get("unsupported") or []))
    return first | {"runs": runs, "probes": probes} | ({"unsupported": unsupported} if unsupported else {})


def run(binary: Path, inp: dict, shards: int | None = None, limits: Limits | None = None) -> tuple[dict | None, str]:
    """Run the harness on ``inp`` in the sandbox, its states split between ``shards`` processes (default:
    one per core); (output, log). Each part's input is written here, one after the other, and its process
    started as soon as it is (writing JSON holds the interpreter lock, so a thread would not write faster)."""
    parts = split(inp, shards or shards_for(inp))
    limits = limits or RUN_LIMITS
    with (
        tempfile.TemporaryDirectory(prefix="promotion-harness-", ignore_cleanup_errors=True) as tmp,
        ThreadPoolExecutor(len(parts)) as pool,
    ):
        running = []
        for i, part in enumerate(parts):
            scratch = Path(tmp) / str(i)
            scratch.mkdir()
            shutil.copy2(binary, scratch / BINARY)
            data = orjson.dumps(part)
            (scratch / "input.json").write_bytes(data)
            answer_bytes = min(limits.file_bytes, len(data) + ANSWER_SLACK)
            running.append(pool.submit(_run_one, scratch, dataclasses.replace(limits, file_bytes=answer_bytes)))
        answers = [r.result() for r in running]
    failed = next((log for out, log in answers if out is None), None)
    if failed is not None:
        return None, failed
    return merge([out for out, _ in answers]), ""


def _run_one(scratch: Path, limits: Limits) -> tuple[dict | None, str]:
    """One harness process; (its answer, or None and one paragraph saying why there is none)."""
    res = sandbox.run(
        [str(scratch / BINARY), "input.json", "output.json"],
        cwd=scratch,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(scratch), "TMPDIR": "/tmp"},
        mounts=Mounts(read_write=(scratch,)),
        limits=limits,
    )
    out = scratch / "output.json"
    detail = (res.stdout + res.stderr).replace(str(scratch), "$SCRATCH").strip()
    if res.limit == "output":  # what it printed is the evolved code's, not a reason: say what happened instead
        return None, (
            f"{FLOODED} ({limits.describe('output')}): the evolved code prints on every call; delete its "
            "fmt.Print*, print and println calls"
        )
    too_big = (out.is_file() and out.stat().st_size > limits.file_bytes) or (
        res.returncode != 0 and "file too large" in res.stderr
    )
    if too_big:  # refused unread: parsing it would take the bot's memory
        return None, (
            f"the harness's answer was larger than {sandbox.size_text(limits.file_bytes)}, far more than an answer "
            "about these states needs: the evolved code returns huge values (an error text built on every call?); "
            "keep them short"
        )
    if res.returncode != 0 or not out.is_file():
        where = f", stopped at the sandbox's {res.limit} limit ({limits.describe(res.limit)})" if res.limit else ""
        cause = crash_line(detail) or ("it was stopped there" if res.limit else f"it exited {res.returncode}")
        return None, f"{RUN_FAILED}{where}: {cause}\n{detail[-4000:]}"
    return restore_non_finite(orjson.loads(out.read_bytes())), ""


#: How the harness names a score JSON cannot hold (``finite`` in its main.go), and the float each stands for.
_NON_FINITE = {"NaN": float("nan"), "+Inf": float("inf"), "-Inf": float("-inf")}


def restore_non_finite(answer: dict) -> dict:
    """``answer`` with each decision's NaN and infinite scores back among its scores, as floats: the harness sends
    them apart (``nonFinite``) because JSON has neither. A name it does not use is left out."""

    def restore(decision) -> None:
        if isinstance(decision, dict) and isinstance(named := decision.pop("nonFinite", None), dict):
            extra = {k: _NON_FINITE[v] for k, v in named.items() if v in _NON_FINITE}
            decision["scores"] = {**(decision.get("scores") or {}), **extra}

    for run in answer.get("runs") or []:
        for result in run.get("results") or []:
            restore(result.get("blis"))
            restore(result.get("llmd"))
            restore(result.get("redraw"))
    for probe in answer.get("probes") or []:
        for case in probe.get("cases") or []:
            restore(case.get("default"))
            restore(case.get("movedOut"))
    return answer


#: How a harness run's log starts when the harness built but died at run time (its first line is the reason).
RUN_FAILED = "the harness built but died at run time"
#: How much of a crash line a reason quotes: a panic message can be megabytes (the evolved code's own text).
CRASH_CHARS = 200


def crash_line(log: str) -> str:
    """The first ``panic:`` or ``fatal error:`` line of a Go crash, or the harness's own error line (it exits 1
    with ``promotion-harness: <error>`` when it cannot read its input or write its answer), shortened: what went
    wrong, where the tail of the log is only the last frame of a goroutine dump."""
    for raw in log.splitlines():
        line = raw.strip()
        if line.startswith(("panic: ", "fatal error: ", "promotion-harness: ")):
            return line if len(line) <= CRASH_CHARS else f"{line[:CRASH_CHARS]}... ({len(line):,} characters)"
    return ""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (as it was after). The job builds and reads millions of
    small dicts and lists (the states, their views, the answer), none in a cycle, so reference counting frees them
    all; the collector's passes over that growing heap were more than half of a stateful admitter's sampling."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def execute_harness(files: dict[str, str], args: dict) -> dict:
    """The kind's function: (files, args) -> JSON answer (see the module docstring)."""
    with collector_paused():
        return _execute(files, args)


def _execute(files: dict[str, str], args: dict) -> dict:
    summary = args.get("summary") or {}
    with building(files) as finish:
        try:
            inp = harness_build.with_states(args.get("input") or {})  # while Go compiles
        except ValueError as exc:
            return {"ok": False, "build_log": str(exc), "probes": [], "decisions": [], "fidelity": None}
        sent = harness_build.delta_views(inp)
        binary, log = finish()
    if binary is None:
        return {
            "ok": False,
            "build_log": log[-4000:],
            "probes": [],
            "decisions": [],
            "fidelity": None,
            "failed": "build",
        }
    out, log = run(binary, sent)
    if out is None:  # "flooded": the evolved code printed past the output limit (translate makes that CRITICAL)
        flooded = log.startswith(FLOODED)
        return {
            "ok": False,
            "build_log": log,
            "probes": [],
            "decisions": [],
            "fidelity": None,
            "flooded": flooded,
            "failed": "run",
        }
    fidelity = None
    if inp.get("runs"):
        found = differential.summarize(
            inp,
            out,
            floor=summary.get("floor", 0.99),
            all_high=summary.get("all_high", False),
            seed=summary.get("seed", 0),
            mappings=summary.get("mappings", {}),
        )
        found.notes = list(summary.get("notes", [])) + found.notes
        found.floor_default = summary.get("floor_default")
        found.held_constant = [str(s) for s in summary.get("constant") or []]
        fidelity = found.model_dump(mode="json")
    base = next((r for r in out.get("runs", []) if r["name"] == differential.AS_DEPLOYED), {"results": []})
    admission = inp.get("kind") == "admission"
    decisions = [
        {
            "blis": r["blis"].get("admit") if admission else r["blis"].get("target"),
            "llmd": r["llmd"].get("admit") if admission else r["llmd"].get("best"),
        }
        for r in base["results"]
    ]
    return {"ok": True, "build_log": "", "probes": out.get("probes", []), "decisions": decisions, "fidelity": fidelity}
