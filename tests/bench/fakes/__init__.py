"""Fake executables at the process boundary for `promote bench run` (see fake_cluster.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
TOOLS = ("llmdbenchmark", "kubectl", "make", "docker", "benchmark-report")
#: Where this interpreter's third-party packages are (the fakes read and write YAML with PyYAML).
SITE_PACKAGES = str(Path(yaml.__file__).resolve().parents[1])


def install(root: Path, **config) -> dict[str, str]:
    """A bin dir of fakes and the cluster state dir under ``root``; returns the environment to run with."""
    bin_dir, cluster = root / "bin", root / "cluster"
    bin_dir.mkdir(parents=True, exist_ok=True)
    cluster.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        exe = bin_dir / tool
        exe.write_text(
            # Imported, not run as a script: an import reads the byte-compiled module (tests/conftest.py compiles it
            # once), where a script is compiled again in each of the hundreds of calls a benchmark test makes. And
            # started without `site` (-S): its work (the venv's .pth files, the bot's editable-install finder) is a
            # tenth of each call's start; the fakes need only the directory PyYAML (and pydantic) are installed in.
            f"#!{sys.executable} -S\nimport sys\nsys.path[:0] = [{str(HERE)!r}, {SITE_PACKAGES!r}]\n"
            f"import fake_cluster\nfake_cluster.main()\n"  # NAME: the tool this file is named for (argv[0])
        )
        exe.chmod(0o755)
    (cluster / "config.json").write_text(json.dumps(config))
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["FAKE_CLUSTER"] = str(cluster)
    return env


def calls(root: Path) -> list[dict]:
    p = root / "cluster" / "calls.jsonl"
    return [json.loads(line) for line in p.read_text().splitlines()] if p.is_file() else []


def configure(root: Path, **config) -> None:
    (root / "cluster" / "config.json").write_text(json.dumps(config))
