"""How long translation takes, measured against the floor the toolchain sets.

For each input (the bundled example and every positive corpus input) this times
`translate()` (parse, analyse, generate, search test inputs; in process, best of
--repeat runs) and `go vet` on the package it generates (warm build cache, best of
--repeat runs, in a scratch copy of gomirror/), and reports the ratio. `go vet` is
the cheapest thing CI must do with a generated package anyway, so a ratio near or
below 1 means the translator is not the bottleneck of stage 2.

    .venv/bin/python perf/translate.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bot import PROJECT_ROOT
from bot.dictionary import load_dictionary
from bot.golang.analyze import analyze
from bot.golang.source import load_evolved_source
from bot.golang.translate import translate


def inputs() -> list[Path]:
    out = [PROJECT_ROOT / "examples" / "weighted-adaptive" / "best_program.py"]
    manifest = PROJECT_ROOT / "examples" / "corpus" / "manifest.yaml"
    if manifest.is_file():
        for e in yaml.safe_load(manifest.read_text())["inputs"]:
            if e["expect"] in ("translates", "critical"):
                out.append(manifest.parent / e["file"])
    return [p for p in out if p.is_file()]


def time_translate(path: Path, dictionary, repeat: int):
    best, tr = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        src = load_evolved_source(path)
        an = analyze(src, dictionary)
        tr = translate(
            src, an, dictionary, plugin_type="perf-" + "".join(c if c.isalnum() else "-" for c in path.stem.lower())
        )
        best = min(best, time.perf_counter() - t0)
    return best, tr


def time_vet(files: dict[str, str], package_dir: str, repeat: int) -> float:
    """go vet on the generated package, in the sandbox like every Go run on generated code."""
    from bot.golang.gorun import go_box
    from bot.golang.toolchain import _copy_mirror, _tool_paths, default_cache_dir
    from bot.sandbox import Limits

    go, _ = _tool_paths()
    with tempfile.TemporaryDirectory(prefix="promotion-go-perf-") as tmp:
        module = _copy_mirror(Path(tmp))
        for rel, text in files.items():
            target = module / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        cmd = [str(go), "vet", "./" + package_dir]
        with go_box(go, Path(tmp), default_cache_dir(), Limits()) as box:
            if box.run(cmd, module).returncode != 0:  # also warms the cache
                raise SystemExit(f"go vet failed on the generated {package_dir}")
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                box.run(cmd, module)
                best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    dictionary = load_dictionary()
    rows = []
    for path in inputs():
        t_tr, tr = time_translate(path, dictionary, args.repeat)
        t_vet = time_vet(tr.files, tr.summary.package_dir, args.repeat)
        rows.append(
            {
                "input": path.name,
                "translate_s": round(t_tr, 3),
                "go_vet_s": round(t_vet, 3),
                "ratio": round(t_tr / t_vet, 2),
                "tests": len(tr.tests),
            }
        )
    ratios = sorted(r["ratio"] for r in rows)
    summary = {
        "inputs": len(rows),
        "median_ratio": ratios[len(ratios) // 2],
        "max_ratio": ratios[-1],
        "total_translate_s": round(sum(r["translate_s"] for r in rows), 2),
        "total_go_vet_s": round(sum(r["go_vet_s"] for r in rows), 2),
    }
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return 0
    print("| input | translate (s) | go vet (s) | ratio | boundary/liveness cases |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['input']} | {r['translate_s']:.3f} | {r['go_vet_s']:.3f} | {r['ratio']:.2f} | {r['tests']} |")
    print()
    print(
        f"median translate / go vet = {summary['median_ratio']:.2f} (max {summary['max_ratio']:.2f}); "
        f"total translate {summary['total_translate_s']:.1f} s vs go vet {summary['total_go_vet_s']:.1f} s over {summary['inputs']} inputs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
