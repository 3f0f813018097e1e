"""Where llm-d-benchmark left a run's report in its workspace, and a finished run a killed job never recorded.

llm-d-benchmark writes each run under ``setup-treatment-<setup>/results/<harness>-<run treatment>-<ts>-<rand>/``
(``bot.bench.layout``): the newest such directory that was not there before the run started is the run's, its
v0.2 report or, from a harness that wrote only its native output, the report converted from it. A directory an
earlier attempt left in the same workspace (benchmark.yml keeps one per promotion and commit across dispatches)
is never this run's: it was measured on another stack at another time, so a harness that exits 0 without
writing results left no report.
"""

from __future__ import annotations

from pathlib import Path

from bot.bench.errors import ReportError
from bot.bench.reports import parse_report
from bot.bench.run import commands

REPORT_NAME = "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
NATIVE_NAME = "stage_0_lifecycle_metrics.json"


def run_dirs(target, setup: str, run_treatment: str) -> list[Path]:
    """The results directories of one run treatment in a setup's workspace, oldest first."""
    root = commands.setup_workspace(target, setup) / "results"
    if not root.is_dir():
        return []
    prefix = f"{target.harness}-{run_treatment}-"
    return sorted(
        (p for p in root.iterdir() if p.is_dir() and p.name.startswith(prefix)), key=lambda p: p.stat().st_mtime
    )


def new_run_dirs(target, setup: str, run_treatment: str, before: set[Path]) -> list[Path]:
    """The results directories of this run treatment that are not in ``before`` (what existed when the run
    started), oldest first."""
    return [d for d in run_dirs(target, setup, run_treatment) if d not in before]


def report_of(target, setup: str, run_treatment: str, procs, before: set[Path]) -> Path | None:
    """The v0.2 report of the newest results directory this run created (converted from native if needed);
    None when it created none. ``before``: the run treatment's directories when the run started."""
    dirs = new_run_dirs(target, setup, run_treatment, before)
    if not dirs:
        return None
    d = dirs[-1]
    reports = sorted(p for p in d.glob("benchmark_report_v0.2*,_*.yaml") if "_session_" not in p.name)
    if reports:
        return reports[0]
    native = d / NATIVE_NAME
    if native.is_file():
        out = d / REPORT_NAME
        result = procs.run(commands.convert(target, native, out))
        if result.code == 0 and out.is_file():
            return out
    return None


def adoptable(target, setup: str, arm: str, run_treatment: str, commit: str) -> Path | None:
    """The newest report of this run treatment that parses and names this arm, cell and commit in its keywords.

    The arm too, as for the mix (``adoptable_mix``): the keywords are the one record of which arm a run measured,
    and a report left in another arm's workspace (copied by hand, or a setup renamed) is not this arm's."""
    want = {f"arm:{arm}", f"cell:{run_treatment}", f"commit:{commit}"}
    for d in reversed(run_dirs(target, setup, run_treatment)):
        for p in sorted(d.glob("benchmark_report_v0.2*,_*.yaml")):
            try:
                doc = parse_report(p.read_text(encoding="utf-8"))
            except (ReportError, UnicodeDecodeError):
                continue
            kws = (doc.get("run") or {}).get("keywords") or []
            if want <= {k for k in kws if isinstance(k, str)}:
                return p
    return None


def adoptable_mix(target, setup: str, arm: str, run_treatment: str, commit: str) -> Path | None:
    """The newest priority-mix run directory of this run treatment that ``read_mix_run`` can use and whose
    run_metadata.yaml names this arm, cell and commit in its keywords (``target.harness`` is the mix's).

    The arm too: the run treatment (``priority-mix-rate-<r>-rep-<n>``) is the same in both arms, so only the
    keywords tell a run that landed in the wrong arm's workspace; and only usable results: adopting a run whose
    results.json does not parse would set it aside where running it again gives a usable one."""
    from bot.bench.priority_mix import split_keywords

    want = {f"arm:{arm}", f"cell:{run_treatment}", f"commit:{commit}"}
    for d in reversed(run_dirs(target, setup, run_treatment)):
        try:
            _, meta = read_mix_run(d)
        except ReportError:
            continue
        if want <= set(split_keywords(meta.get("description_keywords"))):
            return d
    return None


def read_mix_run(where: Path | None) -> tuple[str, dict]:
    """(results.json text, run_metadata.yaml) of a priority-mix run directory; ReportError says why they cannot
    be used."""
    from bot.bench.priority_mix import METADATA_FILE, RESULTS_FILE, parse_results, read_metadata, split_keywords

    if where is None or not (where / RESULTS_FILE).is_file():
        raise ReportError(f"the priority-mix harness finished but left no {RESULTS_FILE}")
    try:
        text = (where / RESULTS_FILE).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ReportError(f"{RESULTS_FILE} is not UTF-8 text") from None
    parse_results(text)
    meta = read_metadata(where / METADATA_FILE)
    if not split_keywords(meta.get("description_keywords")):
        raise ReportError(
            f"{METADATA_FILE} records no description_keywords, so nothing binds the run to its arm "
            "(the runner passed --run-keywords; this llm-d-benchmark did not record them)"
        )
    return text, meta
