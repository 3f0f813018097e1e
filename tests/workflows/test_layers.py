"""Imports point down only (README, "Contributing"; DESIGN, "Layers"): a test, so a new upward import fails here.

Every ``import``/``from ... import`` under ``bot/`` counts wherever it sits: at module level, inside a function
(a lazy import is still a dependency, only a later one), under ``if TYPE_CHECKING`` or in a ``try``. Two rules:

1. **No import points up**: a module imports from its own layer or below (``LAYERS``).
2. **No cycle inside a layer**: packages of one layer may use each other, but only one way round (``bench``
   sizes its plans with ``stats``, so ``stats`` does not read ``bench``; shared names live in ``bot/model``).

The few imports that break rule 1 on purpose are in ``ALLOWED_UP``, each with its reason; an entry that no
longer matches an import fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from bot import PROJECT_ROOT

#: Layer of every top-level package or module under ``bot/``, top (0) to bottom. From the README's
#: "Contributing" section and DESIGN's "Layers"; the modules neither names are placed by what they are.
LAYERS: dict[str, tuple[int, str]] = {
    # entry: the CLI and the GitHub event handlers
    "__main__": (0, "entry"),
    "cli": (0, "entry"),
    "events": (0, "entry"),
    # engine: stages, gates, legal transitions (pure)
    "pipeline": (1, "engine"),
    "recheck": (1, "engine"),  # what a bot upgrade redoes: pure, decided from the state's records
    # stages: inputs -> artifacts, through ports only
    "stages": (2, "stages"),
    # capabilities
    "golang": (3, "capabilities"),
    "review": (3, "capabilities"),
    "agents": (3, "capabilities"),
    "hypotheses": (3, "capabilities"),
    "bench": (3, "capabilities"),
    "stats": (3, "capabilities"),
    "render": (3, "capabilities"),
    "dictionary": (3, "capabilities"),  # Maps A/B/C: loaded and looked up by the translator (stage 1 and 2)
    "dictionary_doc": (3, "capabilities"),  # the dictionary rendered for people
    "directives": (3, "capabilities"),  # the change-request directives the gates apply
    "upstream": (3, "capabilities"),  # the upstream patch cut out of a finished promotion
    # ports and adapters
    "forge": (4, "ports"),
    "github": (4, "ports"),
    "execution": (4, "ports"),
    "sandbox": (4, "ports"),
    # model: the types and the few helpers every layer shares
    "__init__": (5, "model"),  # the package itself: PROJECT_ROOT and the version
    "model": (5, "model"),
    "escape": (5, "model"),  # one escaping function per output format, used by every layer that writes text
    "yaml_safe": (5, "model"),  # the one way to read YAML, used by every layer that reads it
    "yaml_fast": (5, "model"),  # yaml_safe's one-walk build of a plain document
    "home": (5, "model"),  # where the bot's data lives; standard library only
}

#: (importing module, imported module) pairs that point up on purpose. Each says why; do not add one without.
#: LLMSettings (github.config -> agents) and the names stats read of bench moved down; what is left is the local
#: stage runner driving the engine, seen since `from bot import pipeline` counts as importing bot.pipeline.
ALLOWED_UP: dict[tuple[str, str], str] = {
    **{
        (stage, "bot.pipeline"): "the local home's stage runner drives the engine: it asks the pure pipeline for the "
        "next step and runs it (the GitHub home does the same from bot.events, a layer above both)"
        for stage in ("bot.stages.runner", "bot.stages.branch_upkeep", "bot.stages.restart_notice")
    },
    ("bot.stages.runner", "bot.recheck"): "the runner asks the engine's pure recheck what a bot upgrade redoes",
}


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path) -> list[tuple[str, int]]:
    """(absolute imported module, line) for every import in the file, wherever it sits."""
    me = _module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "bot":  # `from bot import pipeline` imports the module bot.pipeline, not the package
                subs = [a.name for a in node.names if _is_module(root / "bot" / a.name)]
                out += [(f"bot.{name}", node.lineno) for name in subs]
                if len(subs) == len(node.names):
                    continue
            out.append((target, node.lineno))
    return out


def _is_module(path: Path) -> bool:
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _top(module: str) -> str | None:
    """``bot.stats.power`` -> ``stats``; ``bot`` -> ``__init__``; not ours -> None."""
    parts = module.split(".")
    if parts[0] != "bot":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def edges(root: Path) -> list[tuple[str, str, str, int]]:
    """(importing module, imported module, file, line) for every import of one top-level part of ``bot`` by
    another."""
    out = []
    for path in sorted((root / "bot").rglob("*.py")):
        me = _module_name(path, root)
        for target, line in _imports(path, root):
            src, dst = _top(me), _top(target)
            if dst is not None and src != dst:
                out.append((me, target, path.relative_to(root).as_posix(), line))
    return out


def unplaced(root: Path) -> list[str]:
    """Top-level packages and modules under ``bot/`` that ``LAYERS`` does not place."""
    names = {p.stem for p in (root / "bot").glob("*.py")} | {
        p.name for p in (root / "bot").iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    return sorted(names - LAYERS.keys())


def upward(root: Path, allowed: dict[tuple[str, str], str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Imports that point up and are not allowed, and allowlist entries that match no import any more."""
    bad, used = [], set()
    for src, dst, file, line in edges(root):
        (hi, hi_name), (lo, lo_name) = LAYERS[_top(src)], LAYERS[_top(dst)]
        if lo >= hi:
            continue
        if (src, dst) in allowed:
            used.add((src, dst))
            continue
        bad.append(f"{file}:{line}: {src} ({hi_name}) imports {dst} ({lo_name}), a layer above it")
    return bad, sorted(allowed.keys() - used)


def cycles_within_layers(root: Path) -> list[str]:
    """Pairs of packages of one layer that import each other (directly or through others of that layer)."""
    graph: dict[str, dict[str, str]] = defaultdict(dict)
    for src, dst, file, line in edges(root):
        a, b = _top(src), _top(dst)
        if LAYERS[a][0] == LAYERS[b][0]:
            graph[a].setdefault(b, f"{file}:{line}")

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            n = todo.pop()
            if n == goal:
                return True
            if n not in seen:
                seen.add(n)
                todo += graph.get(n, {}).keys()
        return False

    found: dict[tuple[str, str], str] = {}
    for a in sorted(graph):
        for b, where in sorted(graph[a].items()):
            if reaches(b, a):
                found.setdefault(tuple(sorted((a, b))), f"{a} -> {b} ({where}), and {b} reaches {a} back")
    return list(found.values())


def test_every_package_under_bot_has_a_layer():
    assert unplaced(PROJECT_ROOT) == [], "place it in LAYERS (tests/workflows/test_layers.py), by the README's order"


def test_no_import_points_up():
    bad, stale = upward(PROJECT_ROOT, ALLOWED_UP)
    assert bad == [], (
        "imports point down only (README, Contributing): move the shared definition down (often into bot/model) "
        "or pass it in from above:\n" + "\n".join(bad)
    )
    assert stale == [], f"these ALLOWED_UP entries match no import any more; remove them: {stale}"


def test_no_cycle_between_packages_of_one_layer():
    assert cycles_within_layers(PROJECT_ROOT) == [], (
        "two packages of one layer import each other; keep one direction and move the shared names down"
    )


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_checks_catch_an_upward_import_a_lazy_one_and_a_cycle(tmp_path):
    root = _tree(
        tmp_path,
        {
            "bot/__init__.py": "",
            "bot/model/__init__.py": "def f():\n    from bot.stages.x import y\n",  # lazy, still upward
            "bot/github/__init__.py": "from bot.agents.settings import LLMSettings\n",  # port -> capability
            "bot/stages/x.py": "from bot.model import z\n",  # down: fine
            "bot/stats/__init__.py": "from bot.bench import plan\n",
            "bot/bench/__init__.py": "from bot.stats import power\n",
            "bot/pipeline.py": "",
            "bot/sandbox.py": "from bot import PROJECT_ROOT, pipeline\n",  # a module named through the package
        },
    )
    bad, stale = upward(root, {("bot.cli", "bot.events"): "gone"})
    assert [b.split(":")[0] + ":" + b.split(":")[1] for b in bad] == [
        "bot/github/__init__.py:1",
        "bot/model/__init__.py:2",
        "bot/sandbox.py:1",
    ]
    assert stale == [("bot.cli", "bot.events")]
    assert len(cycles_within_layers(root)) == 1 and "bench" in cycles_within_layers(root)[0]
    allowed = {
        ("bot.github", "bot.agents.settings"): "reason",
        ("bot.model", "bot.stages.x"): "reason",
        ("bot.sandbox", "bot.pipeline"): "reason",
    }
    assert upward(root, allowed) == ([], [])
