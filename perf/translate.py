"""How long translation takes, measured against the floor the toolchain sets.

For each input (the bundled example and every positive corpus input) this times ``translate()`` as a
promotion runs it once: parse, analyse, generate, and the differential harness job (compiled from a
cold harness cache against the warm Go build cache while its states are sampled, then run on them and
its probes, one process per core), and
``go vet`` on the package it generates (warm build cache, best of --repeat runs, in the sandbox like
every Go run on generated code). ``go vet`` is the cheapest thing CI must do with a generated
package anyway; the target is a median ratio of at most 3 and a maximum of at most 5.

    .venv/bin/python perf/translate.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bot import PROJECT_ROOT
from bot.dictionary import load_dictionary
from bot.golang.analyze import analyze
from bot.golang.source import load_evolved_source
from bot.golang.translate import translate
from bot.yaml_safe import load_yaml

MEDIAN_TARGET, MAX_TARGET = 3.0, 5.0


def inputs() -> list[Path]:
    out = [PROJECT_ROOT / "examples" / "weighted-adaptive" / "best_program.py"]
    manifest = PROJECT_ROOT / "examples" / "corpus" / "manifest.yaml"
    if manifest.is_file():
        for e in load_yaml(manifest.read_text())["inputs"]:
            if e["expect"] in ("translates", "critical"):
                out.append(manifest.parent / e["file"])
    return [p for p in out if p.is_file()]


class _Timed:
    """The direct executor, timing the harness job (sampling, sandboxed build and run) apart from the rest."""

    def __init__(self):
        from bot.execution import DirectExecutor

        self.inner, self.seconds = DirectExecutor(), 0.0

    def run(self, request):
        t0 = time.perf_counter()
        try:
            return self.inner.run(request)
        finally:
            self.seconds += time.perf_counter() - t0


def time_translate(path: Path, dictionary):
    """One translation as a promotion runs it: the harness built from scratch (its binary cache cleared).
    Returns (total seconds, harness seconds, translation)."""
    from bot.golang.toolchain import default_cache_dir

    shutil.rmtree(default_cache_dir() / "harness", ignore_errors=True)
    timed = _Timed()
    t0 = time.perf_counter()
    src = load_evolved_source(path)
    an = analyze(src, dictionary)
    name = "perf-" + "".join(c if c.isalnum() else "-" for c in path.stem.lower())
    tr = translate(src, an, dictionary, plugin_type=name, executor=timed)
    return time.perf_counter() - t0, timed.seconds, tr


def time_vet(files: dict[str, str], package_dir: str, repeat: int) -> float:
    from bot.golang import gorun
    from bot.golang.toolchain import _copy_mirror, _tool_paths, default_cache_dir
    from bot.sandbox import Limits

    go, _ = _tool_paths()
    with tempfile.TemporaryDirectory(prefix="promotion-perf-") as tmp:
        module = _copy_mirror(Path(tmp))
        for rel, text in files.items():
            target = module / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        with gorun.go_box(go, Path(tmp), default_cache_dir(), Limits(wall_seconds=600)) as box:
            cmd = [str(go), "vet", "./" + package_dir]
            box.run(cmd, module)  # warm the overlay like a check that has compiled before
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                res = box.run(cmd, module)
                best = min(best, time.perf_counter() - t0)
                if res.returncode != 0:
                    raise SystemExit(f"go vet failed on {package_dir}: {res.stderr[-500:]}")
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    dictionary = load_dictionary()
    rows = []
    for path in inputs():
        t_tr, t_harness, tr = time_translate(path, dictionary)
        t_vet = time_vet(tr.files, tr.summary.package_dir, args.repeat)
        fid = tr.summary.fidelity
        rows.append(
            {
                "input": path.name,
                "translate_s": round(t_tr, 3),
                "harness_s": round(t_harness, 3),
                "go_vet_s": round(t_vet, 3),
                "ratio": round(t_tr / t_vet, 2),
                "ratio_without_harness": round((t_tr - t_harness) / t_vet, 2),
                "tests": len(tr.tests),
                "agreement": fid.agreement if fid is not None and fid.measured else None,
            }
        )
    ratios = sorted(r["ratio"] for r in rows)
    rest = sorted(r["ratio_without_harness"] for r in rows)
    summary = {
        "inputs": len(rows),
        "median_ratio": ratios[len(ratios) // 2],
        "max_ratio": ratios[-1],
        "median_ratio_without_harness": rest[len(rest) // 2],
        "max_ratio_without_harness": rest[-1],
        "total_harness_s": round(sum(r["harness_s"] for r in rows), 2),
        "median_target": MEDIAN_TARGET,
        "max_target": MAX_TARGET,
        "total_translate_s": round(sum(r["translate_s"] for r in rows), 2),
        "total_go_vet_s": round(sum(r["go_vet_s"] for r in rows), 2),
    }
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return 0
    print(
        "| input | translate (s) | of which harness (s) | go vet (s) | ratio | ratio without harness | cases | agreement |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        agree = f"{r['agreement']:.1%}" if r["agreement"] is not None else "not measured"
        print(
            f"| {r['input']} | {r['translate_s']:.3f} | {r['harness_s']:.3f} | {r['go_vet_s']:.3f} | {r['ratio']:.2f} | "
            f"{r['ratio_without_harness']:.2f} | {r['tests']} | {agree} |"
        )
    print()
    print(
        f"median translate / go vet = {summary['median_ratio']:.2f} (target <= {MEDIAN_TARGET:g}), "
        f"max {summary['max_ratio']:.2f} (target <= {MAX_TARGET:g}); total translate {summary['total_translate_s']:.1f} s "
        f"vs go vet {summary['total_go_vet_s']:.1f} s over {summary['inputs']} inputs; without the differential harness "
        f"(sampling, sandboxed build and run: {summary['total_harness_s']:.1f} s in all): median "
        f"{summary['median_ratio_without_harness']:.2f}, max {summary['max_ratio_without_harness']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
