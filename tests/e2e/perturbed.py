"""The bundled example promoted on a perturbed copy of its sample reports: what the e2e tests of stage 5's texts
share (a copy of the results, one latency statistic of the evolved arm scaled, `promote run --approve all`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from bot.cli import main
from tests.conftest import REQUEST, RESULTS


def scale_latency(results: Path, workload: str, statistic: str, factor: float) -> int:
    """Every ``statistic`` (e.g. ``request_latency``) figure of the evolved ``workload`` reports times ``factor``;
    how many reports were changed."""
    paths = list((results / "evolved" / workload).rglob("benchmark_report*.yaml"))
    for path in paths:
        doc = yaml.safe_load(path.read_text())
        stats = doc["results"]["request_performance"]["aggregate"]["latency"][statistic]
        for k, v in list(stats.items()):
            if k != "units":
                stats[k] = v * factor
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return len(paths)


def promote_scaled(tmp_path: Path, workload: str, statistic: str, factor: float) -> tuple[Path, Path]:
    """The whole promotion (``--approve all``) on the sample reports with the evolved ``workload``'s ``statistic``
    scaled by ``factor``; returns (work dir, fork). Asserts the 7 reports of that workload were changed."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    assert scale_latency(results, workload, statistic, factor) == 7
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice", "--approve", "all"]
    assert main(["run", str(REQUEST), "--results", str(results), "--allow-sample-data", *args]) == 0
    return work, fork
