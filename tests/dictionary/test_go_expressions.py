"""Every Map B llm-d expression compiles with the real Go toolchain and yields the declared type.

The expressions are compiled inside a scratch copy of gomirror/ (the llm-d-router v0.10.0 mirror the
generated plugins build against), so an expression that reads an endpoint attribute
(InFlightLoad, PrefixCacheMatchInfo) is checked against the real attribute types. Offline, seconds.
"""

from __future__ import annotations

from pathlib import Path

from bot.dictionary import load_dictionary
from bot.golang import toolchain

MODULE = "github.com/llm-d/llm-d-router"


def _check_file(d) -> str:
    imports = sorted({imp for s in d.signals if s.llmd for imp in s.llmd.imports})
    lines = ["package check", "", "import ("]
    lines += [f'\t"{imp}"' for imp in imports]
    lines += [
        f'\tfwkdl "{MODULE}/pkg/epp/framework/interface/datalayer"',
        f'\t"{MODULE}/pkg/epp/framework/interface/scheduling"',
        ")",
        "",
    ]
    for i, s in enumerate(d.signals):
        if s.llmd is None:
            continue
        lines += [
            f"// {s.scope}.{s.name}",
            (
                f"func sig{i}(m *fwkdl.Metrics, ep scheduling.Endpoint, req *scheduling.InferenceRequest,"
                f" endpoints []scheduling.Endpoint) {s.go_type} {{"
            ),
            f"\treturn {s.llmd.expr}",
            "}",
            "",
        ]
    return "\n".join(lines)


def _vet(d, workdir: Path) -> tuple[int | None, str]:
    from bot.golang import gorun
    from bot.sandbox import Limits

    module = toolchain._copy_mirror(workdir)
    (module / "check").mkdir()
    (module / "check" / "check.go").write_text(_check_file(d), encoding="utf-8")
    go, _ = toolchain._tool_paths()
    with gorun.go_box(go, workdir, toolchain.default_cache_dir(), Limits(wall_seconds=300)) as box:
        res = box.run([str(go), "vet", "./check"], module)
    return res.returncode, res.stdout + res.stderr


def test_expressions_compile_to_declared_types(tmp_path):
    d = load_dictionary()
    rc, out = _vet(d, tmp_path)
    assert rc == 0, out


def test_a_wrong_declared_type_is_caught(tmp_path):
    """The check above can fail: KVUtilization's float expression declared as int does not compile."""
    broken = load_dictionary().model_copy(deep=True)
    next(s for s in broken.signals if s.name == "KVUtilization").blis_type = "int"
    rc, out = _vet(broken, tmp_path)
    assert rc != 0 and "KVCacheUsagePercent" in out
