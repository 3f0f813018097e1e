"""inference-perf 0.7.0's own pydantic models judge what the bot generates and accepts (llm-d.md §D).

inference-perf needs Python >= 3.12 and the bot runs on 3.11, so the package is installed once into
a Python 3.12 virtual environment under the user's cache directory, and a small script
(``inference_perf/check.py``) validates there: every generated workload profile with
``inference_perf.config.Config`` (every section ``extra="forbid"``), every report the bot accepts
with ``BenchmarkReportV02`` / ``BenchmarkReportV021`` for its version, and the vendored report models
against the package's own files, byte for byte. Skipped, saying why, only when no Python 3.12 exists.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from bot.bench.evidence import EvidencePolicy, load_evidence
from bot.bench.experiment import render_experiment
from bot.bench.plan import make_plan
from bot.model import PromotionRequest

VERSION = "0.7.0"
HERE = Path(__file__).resolve().parent
EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"
VENDORED = PROJECT_ROOT / "bot" / "bench" / "schema" / "br"

pytestmark = pytest.mark.slow


def _python312() -> str | None:
    for cand in [
        shutil.which("python3.12"),
        *sorted(str(p) for p in (Path.home() / ".pyenv" / "versions").glob("3.12*/bin/python3.12")),
    ]:
        if cand and subprocess.run([cand, "--version"], capture_output=True, check=False).returncode == 0:
            return cand
    return None


@pytest.fixture(scope="session")
def inference_perf() -> Path:
    py = _python312()
    if py is None:
        pytest.skip("no working python3.12 on this machine: inference-perf 0.7.0 requires Python >= 3.12")
    cache = (
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        / "promotion-bot"
        / f"inference-perf-{VERSION}-py312"
    )
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(str(cache) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = cache / "ready"
        if not ready.is_file():
            shutil.rmtree(cache, ignore_errors=True)
            subprocess.run([py, "-m", "venv", str(cache)], check=True)
            subprocess.run(
                [str(cache / "bin" / "pip"), "install", "-q", f"inference-perf=={VERSION}"], check=True, timeout=1800
            )
            ready.write_text(VERSION)
    return cache / "bin" / "python"


def _check(python: Path, tmp_path: Path, profiles=(), reports=(), vendored=None) -> dict:
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {"profiles": list(map(str, profiles)), "reports": list(map(str, reports)), "vendored": vendored or {}}
        )
    )
    proc = subprocess.run(
        [str(python), str(HERE / "inference_perf" / "check.py"), str(job)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_vendored_report_models_are_the_packages_own(inference_perf, tmp_path):
    names = ["base.py", "schema_v0_2.py", "schema_v0_2_1.py", "schema_v0_2_components.py"]
    out = _check(inference_perf, tmp_path, vendored={n: str(VENDORED / n) for n in names})
    assert out["vendored"] == dict.fromkeys(names, True)


def test_every_generated_profile_validates_with_inference_perfs_config(inference_perf, tmp_path):
    from bot.dictionary import load_dictionary
    from bot.golang.analyze import analyze
    from bot.golang.source import load_evolved_source
    from bot.golang.translate import translate
    from bot.hypotheses import generate_hypotheses
    from bot.stages.implement_tests import BASELINE_EPP_CONFIG

    request = PromotionRequest.load(EXAMPLE / "promotion.yaml")
    d = load_dictionary()
    src = load_evolved_source(request.source_path)
    t = translate(src, analyze(src, d, request.kind), d, plugin_type=request.plugin_type)
    plan = make_plan(request, generate_hypotheses(request, t.summary, d))
    files = render_experiment(plan, request, BASELINE_EPP_CONFIG, t.epp_config)
    paths = []
    for rel, text in files.items():
        if "/workloads/" in rel:
            p = tmp_path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
            paths.append(p)
    # The old sanity-random profile wrote `std`; inference-perf's Config refuses it (the check can fail).
    old = tmp_path / "old-sanity.yaml"
    old.write_text(
        paths[0].read_text().replace("std_dev", "std") if "std_dev" in paths[0].read_text() else "data: {bogus: 1}\n"
    )
    out = _check(inference_perf, tmp_path, profiles=[*paths, old])["profiles"]
    assert len(paths) == 5
    assert {p: e for p, e in out.items() if e and not p.endswith("old-sanity.yaml")} == {}
    assert out[str(old)] is not None


def test_every_report_the_bot_accepts_validates_with_inference_perfs_models(inference_perf, tmp_path):
    accepted = load_evidence(EXAMPLE / "results", EvidencePolicy(allow_sample_data=True)).loaded
    reports = [EXAMPLE / "results" / rel for rel in accepted]
    reports.append(PROJECT_ROOT / "tests" / "bench" / "fixtures" / "br_v0_2_example.yaml")
    out = _check(inference_perf, tmp_path, reports=reports)["reports"]
    assert len(out) == len(reports) > 100
    assert {p: e for p, e in out.items() if e} == {}
