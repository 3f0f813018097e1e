"""Where a benchmark report sits says which run it is: the bot's layout and llm-d-benchmark's own.

Two layouts are read, so results from either home need no copying by hand:

- the bot's: ``RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>/benchmark_report_v0.2,_<native>.yaml``
  (what ``promote bench run`` writes and commits to the promotion branch);
- llm-d-benchmark's, as ``llmdbenchmark experiment`` / ``run -e`` leave it in a workspace:
  ``setup-treatment-<treatment>/results/<harness>-<run-treatment>-<ts>-<rand>[_<pod>]/benchmark_report_v0.2,_<native>.yaml``,
  where the run treatment's name (``RUN_TREATMENT_PATTERN``) encodes workload, rate and repetition.

A workload may carry a Track B run condition (a fault treatment) after ``CONDITION_SEP``:
``load-spikes+pod-failure`` is the load-spikes workload run with one model-server pod deleted
mid-run. Workload names cannot contain ``+`` (``bot.model.Workload``), so the split is exact.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.bench.errors import ReportError

TREATMENTS = ("baseline", "evolved")
CONDITION_SEP = "+"
RUN_TREATMENT_PATTERN = "{workload}-rate-{rate:g}-rep-{n}"
LAYOUT = (
    "RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>/benchmark_report_v0.2,_<native-file>.yaml "
    "(treatment: baseline or evolved), or llm-d-benchmark's "
    "setup-treatment-<treatment>/results/<harness>-<workload>-rate-<rate>-rep-<n>-<ts>-<rand>/"
)
#: ``--results`` in ``promote run --help`` and ``promote evaluate --help``: both layouts, as the README's
#: "Benchmark results layout" gives them (argparse wraps it).
RESULTS_HELP = (
    "llm-d-benchmark v0.2 reports (benchmark_report_v0.2,_*.yaml) in either layout: "
    "(1) the bot's own, as `promote bench run` writes it: RESULTS/<baseline|evolved>/<workload>/rate-<rate>/rep-<n>/ "
    "(2) an llm-d-benchmark workspace, as `experiment` / `run -e` leave it: "
    "RESULTS/setup-treatment-<baseline|evolved>/results/<harness>-<workload>-rate-<rate>-rep-<n>-<ts>-<rand>/"
)
#: Harnesses llm-d-benchmark runs (workload/harnesses/*), the prefix of its results directories.
HARNESSES = (
    "inference-perf",
    "guidellm",
    "vllm-benchmark",
    "inferencemax",
    "lm-eval",
    "priority-mix",
    "aiperf",
    "eval-containers",
    "nop",
)

_NUM = r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_RATE_DIR = re.compile(rf"^rate-({_NUM})$")
_REP_DIR = re.compile(r"^rep-([0-9]+)$")
_RUN_TREATMENT = re.compile(rf"^(?P<workload>[a-z0-9][a-z0-9+-]*?)-rate-(?P<rate>{_NUM})-rep-(?P<n>[0-9]+)$")
_UPSTREAM_RUN_DIR = re.compile(
    r"^(?P<harness>"
    + "|".join(map(re.escape, HARNESSES))
    + r")-(?P<run>.+)-(?P<ts>[0-9]{9,})-(?P<rand>[A-Za-z0-9]{3,})"
    r"(?:_(?P<pod>[0-9]+))?$"
)
SETUP_PREFIX = "setup-treatment-"


@dataclass(frozen=True, order=True)
class RunKey:
    treatment: str
    workload: str
    rate: float
    repetition: int


def split_condition(workload: str) -> tuple[str, str | None]:
    """('load-spikes', 'pod-failure') for 'load-spikes+pod-failure'; (workload, None) without a condition."""
    base, sep, condition = workload.partition(CONDITION_SEP)
    return base, (condition if sep else None)


def with_condition(workload: str, condition: str | None) -> str:
    return f"{workload}{CONDITION_SEP}{condition}" if condition else workload


def rate_dir(rate: float) -> str:
    """Directory name of a rate: ``rate-<rate:g>`` (10.0 -> rate-10, 2.5 -> rate-2.5)."""
    return f"rate-{rate:g}"


def run_dir(treatment: str, workload: str, rate: float, repetition: int) -> str:
    """Results-relative directory of one run; the inverse of what ``parse_layout`` parses."""
    return f"{treatment}/{workload}/{rate_dir(rate)}/rep-{repetition}"


def run_treatment_name(workload: str, rate: float, n: int) -> str:
    return RUN_TREATMENT_PATTERN.format(workload=workload, rate=rate, n=n)


def parse_run_treatment(name: str) -> tuple[str, float, int]:
    """(workload, rate, repetition) from a run treatment name; ReportError when it does not follow the pattern."""
    m = _RUN_TREATMENT.match(name)
    if not m:
        raise ReportError(
            f"run treatment {name!r} does not name a cell; expected {RUN_TREATMENT_PATTERN} "
            "(the stage 4 experiment's run treatments)"
        )
    return m.group("workload"), float(m.group("rate")), int(m.group("n"))


#: The setup condition under which ``promote bench run`` stands up an arm for the priority mix in its own
#: workspace (``bot.bench.run.mix.SUFFIX``); its runs are copied into the bot's layout under --results.
MIX_CONDITION = "priority-mix"


def _treatment(name: str, workload: str) -> str:
    arm, condition = split_condition(name)
    if arm not in TREATMENTS:
        raise ReportError(f"unknown treatment {name!r}; expected one of {', '.join(TREATMENTS)}")
    if condition == MIX_CONDITION:
        raise ReportError(
            f"a priority-mix run in the runner's own workspace (setup-treatment-{arm}{CONDITION_SEP}{MIX_CONDITION}/), "
            f"which stage 5 does not read: pass the --results directory `promote bench run` wrote (it holds these "
            f"runs under {arm}/priority-mix/), or move this run's directory into setup-treatment-{arm}/results/"
        )
    if condition is not None and split_condition(workload)[1] != condition:
        raise ReportError(
            f"setup treatment {name!r} runs condition {condition!r}, but the run treatment's workload is {workload!r}"
        )
    return arm


def parse_layout(rel: Path) -> RunKey:
    """RunKey from a results-relative report path in either layout; ReportError says how it breaks both."""
    parts = rel.parts
    setup = [i for i, p in enumerate(parts) if p.startswith(SETUP_PREFIX)]
    if setup:
        return _parse_upstream(parts[setup[-1] :])
    if len(parts) != 5:
        raise ReportError(f"not in the results layout {LAYOUT}")
    treatment, workload, rate_s, rep_s, _ = parts
    if treatment not in TREATMENTS:
        raise ReportError(f"unknown treatment directory {treatment!r}; expected one of {', '.join(TREATMENTS)}")
    rm = _RATE_DIR.match(rate_s)
    if not rm:
        raise ReportError(f"bad rate directory {rate_s!r}; expected rate-<number>, e.g. rate-10")
    pm = _REP_DIR.match(rep_s)
    if not pm:
        raise ReportError(f"bad repetition directory {rep_s!r}; expected rep-<n>, e.g. rep-1")
    return RunKey(treatment, workload, float(rm.group(1)), int(pm.group(1)))


def arm_of(rel: str) -> str:
    """The arm (treatment) a results-relative report path is filed under, or "other" when it is in neither
    layout: for counting the reports each arm used and left out."""
    try:
        return parse_layout(Path(rel)).treatment
    except ReportError:
        return "other"


#: How the flag starts that stage 5 puts on every benchmarked verdict when an arm has no report it could use: the
#: headline and gate 3 read it, so "no regression found" is never said of a plugin that was never measured.
UNMEASURED = "nothing measured for the "


def unmeasured_flag(arm: str, left_out: int) -> str:
    """The flag of an arm with no usable report: the results hold none of it, or every one was left out."""
    why = (
        f"all {left_out} of its reports were left out (listed with the reason)" if left_out else "the results hold none"
    )
    return f"{UNMEASURED}{arm} arm: no {arm} report was used ({why}), so no cell compares the two arms"


def unmeasured_arms(loaded: list[str]) -> list[str]:
    """The arms none of the results-relative reports ``loaded`` is filed under."""
    used = {arm_of(rel) for rel in loaded}
    return [arm for arm in TREATMENTS if arm not in used]


def flagged_unmeasured(flags: list[str]) -> list[str]:
    """The arms an ``unmeasured_flag`` among ``flags`` names."""
    return [f[len(UNMEASURED) :].split(" arm", 1)[0] for f in flags if f.startswith(UNMEASURED)]


def is_warmup(rel: Path) -> bool:
    """Whether a results-relative path is in a warm-up run that ``promote bench run`` leaves in its workspace
    (``warmup-<setup treatment, + as ->``, one discarded run after each stand-up or swap): not a cell and not
    evidence, so a reader of the workspace skips it rather than list it as a report that failed validation."""
    parts = rel.parts
    setup = [i for i, p in enumerate(parts) if p.startswith(SETUP_PREFIX)]
    if not setup or len(parts) - setup[-1] < 3 or parts[setup[-1] + 1] != "results":
        return False
    name = parts[setup[-1]].removeprefix(SETUP_PREFIX)
    m = _UPSTREAM_RUN_DIR.match(parts[setup[-1] + 2])
    return (
        bool(m)
        and split_condition(name)[0] in TREATMENTS
        and m.group("run") == "warmup-" + name.replace(CONDITION_SEP, "-")
    )


def _parse_upstream(parts: tuple[str, ...]) -> RunKey:
    if len(parts) != 4 or parts[1] != "results":
        raise ReportError(
            "not in llm-d-benchmark's layout setup-treatment-<treatment>/results/<harness>-<run-treatment>-<ts>-<rand>/"
        )
    m = _UPSTREAM_RUN_DIR.match(parts[2])
    if not m:
        raise ReportError(
            f"results directory {parts[2]!r} is not <harness>-<run-treatment>-<ts>-<rand> "
            f"(harness one of {', '.join(HARNESSES)})"
        )
    if m.group("pod") not in (None, "1"):
        raise ReportError(
            f"results of harness pod {m.group('pod')}: with -j > 1 each report holds one pod's share of the load; "
            "run the plan with -j 1"
        )
    workload, rate, n = parse_run_treatment(m.group("run"))
    treatment = _treatment(parts[0].removeprefix(SETUP_PREFIX), workload)
    return RunKey(treatment, workload, rate, n)


# --------------------------------------------------------------------------
# Files under --results: regular files only, links listed
# --------------------------------------------------------------------------


def link_reason(root: Path, link: Path) -> str:
    """Why a symbolic link under the results directory was not read. Links are never followed, wherever they
    point: one outside would let a report or a file elsewhere on the machine (its text quoted in an error) into
    pages that are committed and posted, and one inside repeats a file that is read where it is."""
    kind = "directory" if link.is_dir() else "file"
    try:
        inside = link.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a loop of links
        inside = False
    where = "inside" if inside else "outside"
    what = "nothing under it was read" if kind == "directory" else "it was not read"
    return (
        f"a symbolic link to a {kind} {where} the results directory: links under --results are never followed, so "
        f"{what}; copy the {kind} itself into the results directory"
    )


def results_files(root: Path, wanted: Callable[[str], bool]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The regular files under ``root`` whose name ``wanted`` accepts, and every symbolic link that is such a file
    or a directory (which could hold them), as (results-relative path, why it was not read). One policy for every
    reader of --results: nothing is read through a link, and no link is skipped without a word."""
    files: list[Path] = []
    links: list[tuple[str, str]] = []
    for top, dirs, names in os.walk(root):  # followlinks=False: a linked directory is listed in dirs, not entered
        here = Path(top)
        for name in dirs:
            if (here / name).is_symlink():
                links.append(((here / name).relative_to(root).as_posix(), link_reason(root, here / name)))
        for name in names:
            path = here / name
            if not wanted(name):
                continue
            if path.is_symlink():
                links.append((path.relative_to(root).as_posix(), link_reason(root, path)))
            elif path.is_file():
                files.append(path)
    return sorted(files, key=lambda p: p.as_posix()), sorted(links)
