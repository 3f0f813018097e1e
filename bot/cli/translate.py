"""`promote translate`: stage 2 on its own, for researchers and for CI.

Writes the plugin package (branch-relative paths under --out), the translation
report, ``findings.json`` and ``translation.json``, then compiles, vets and
tests the package with the pinned toolchain against the offline llm-d-router
mirror. Exit 0: translated with no CRITICAL finding; 1: translated, but a
CRITICAL finding (from the analysis or the toolchain) blocks it; 2: unusable
input, one line on stderr, or an evolved program that does not compile as BLIS
Go (its CRITICAL ``translate.program-does-not-compile`` and the fix on stderr).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from bot.cli.files import output_dir, write_files
from bot.model import counted_noun


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "translate",
        help="translate an evolved BLIS policy into an llm-d-router plugin",
        description=(
            "Translate an evolved BLIS policy (routing Route, admission Admit, scheduling OrderQueue; a package file, "
            "an OpenEvolve .py program, a Go file or one function) into an llm-d-router v0.10.0 plugin, with a "
            "translation report and findings, and check it with go vet / go test offline."
        ),
    )
    p.add_argument("source", help="the evolved program (.go or OpenEvolve .py)")
    p.add_argument(
        "--kind", choices=["routing", "admission", "scheduling"], help="policy kind (default: from the host function)"
    )
    p.add_argument("--out", required=True, help="directory to write the plugin package, report and findings to")
    p.add_argument(
        "--plugin-type", help="kebab-case plugin type (default: evolved-<receiver>, a scorer's ending in -scorer)"
    )
    p.add_argument("--feedback", help="reviewer feedback to address (recorded in the report)")
    p.add_argument(
        "--fidelity-floor",
        type=_floor,
        metavar="SHARE",
        help="the agreement with the BLIS original below which the translation gets an IMPORTANT finding, "
        "0.5-1 (default 0.99 when every signal is high-fidelity, else 0.95)",
    )
    p.add_argument("--no-check", action="store_true", help="skip the toolchain check (gofmt, vet, test)")
    p.add_argument("--json", action="store_true", help="print the translation summary as JSON on stdout")
    p.set_defaults(func=handle)


def _floor(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share (e.g. 0.9 or 90%)") from None
    if not 0.5 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is outside 0.5-1 (50%-100%)")
    return value


#: The last word of a BLIS receiver that names its BLIS role; a scorer's default type says ``scorer`` instead.
_BLIS_ROLE_WORDS = ("scheduler", "scheduling", "scoring", "router", "routing", "policy")


def default_plugin_type(host: str, extension_point: str = "") -> str:
    """``evolved-<receiver>`` in kebab case, named for what the translation emits (``extension_point``, the
    dictionary's ``llmd_extension_point``). A ``scheduling.Scorer`` ends in ``-scorer``, as every upstream scorer's
    type does (queue-scorer, kv-cache-utilization-scorer, prefix-cache-scorer): a config author reads
    ``…-scheduler`` in ``schedulingProfiles`` as a profile handler or a queue-ordering policy, and s01's
    ``SLOAgingScheduler`` is a queue-position scorer (``evolved-slo-aging-scorer``). A BLIS role word the receiver
    ends in (Scheduler, Scoring, ...) gives way to ``scorer`` rather than doubling up, and a receiver already
    ending in ``scorer`` stays as it is. An admitter keeps ``evolved-<receiver>``. Only the default: a type the
    person gives is used as given."""
    recv = host.split(".")[0] if "." in host else host
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", recv)
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", words).lower()
    slug = re.sub(r"[^a-z0-9]+", "-", words).strip("-") or "policy"
    slug = slug if slug.startswith("evolved") else f"evolved-{slug}"
    if extension_point.rsplit(".", 1)[-1] != "Scorer" or slug.endswith("scorer"):
        return slug
    head, _, last = slug.rpartition("-")
    return f"{head}-scorer" if last in _BLIS_ROLE_WORDS and head else f"{slug}-scorer"


def handle(args: argparse.Namespace) -> int:
    from bot.dictionary import load_dictionary
    from bot.golang.analyze import analyze
    from bot.golang.harness_failed import CHECK_DOES_NOT_COMPILE
    from bot.golang.source import load_evolved_source
    from bot.golang.translate import REPORT_NAME, translate
    from bot.model import Severity
    from bot.model.findings import tally

    src = load_evolved_source(Path(args.source))
    refused = _refuse_unsafe(src, Path(args.out), args.json)
    if refused is not None:
        return refused
    dictionary = load_dictionary()
    analysis = analyze(src, dictionary, args.kind)
    plugin_type = args.plugin_type or default_plugin_type(
        analysis.host, dictionary.interface(analysis.kind).llmd_extension_point
    )
    tr = translate(
        src, analysis, dictionary, plugin_type=plugin_type, feedback=args.feedback, floor=args.fidelity_floor
    )

    out = output_dir(Path(args.out))
    refuse_stale(out, {*tr.files, *OWN_FILES, REPORT_NAME})
    if args.no_check and (out / TOOLCHAIN_LOG).is_file():
        (out / TOOLCHAIN_LOG).unlink()  # an earlier check's log would read as this plugin's
        print(f"  removed {out / TOOLCHAIN_LOG}: an earlier run's check, not this plugin's (--no-check)")
    write_files(out, tr.files)

    findings = list(tr.findings)
    report = tr.report_markdown
    toolchain_line = "toolchain check skipped (--no-check)"
    if not args.no_check:
        from bot.golang.failing_tests import with_causes
        from bot.golang.toolchain import ToolchainMissing, check_plugin

        try:
            rep = check_plugin(
                tr.files, registration_import=tr.registration_import, registration_line=tr.registration_line
            )
        except ToolchainMissing as exc:
            toolchain_line = f"toolchain check not run: {exc}"
        else:
            findings += with_causes(rep.findings, tr.findings)  # a failing test names the cause the translation found
            toolchain_line = (
                f"gofmt {'ok' if rep.gofmt_ok else 'FAILED'}, build {'ok' if rep.build_ok else 'FAILED'}, "
                f"vet {'ok' if rep.vet_ok else 'FAILED'}, test {'ok' if rep.test_ok else 'FAILED'} "
                f"({rep.test_counts})"
            )
            (out / TOOLCHAIN_LOG).write_text(rep.output + "\n", encoding="utf-8")
    report += f"\n## Toolchain check\n\n{toolchain_line}.\n"
    findings.sort(key=lambda f: f.sort_key())
    (out / REPORT_NAME).write_text(report, encoding="utf-8")
    (out / "findings.json").write_text(
        json.dumps([json.loads(f.model_dump_json()) for f in findings], indent=2, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    summary = tr.summary.model_copy(update={"findings": findings})
    (out / "translation.json").write_text(tr.to_json(), encoding="utf-8")

    critical = [f for f in findings if f.severity == Severity.CRITICAL]
    if args.json:
        print(summary.model_dump_json(indent=2))
    else:
        print(f"translated {args.source} ({analysis.kind.value}, {analysis.host}) -> {out / tr.summary.package_dir}")
        print(
            f"  {counted_noun(len(summary.signals), 'signal')}, {counted_noun(len(summary.thresholds), 'parameter')}, "
            f"{counted_noun(len(findings), 'finding')} ({tally(findings)}); {toolchain_line}"
        )
        fid = summary.fidelity
        if fid is not None and fid.measured:
            verdict = f"{'BELOW' if fid.below_floor else 'at or above'} the floor ({fid.floor_pct})"
            if (chosen := fid.floor_missed_by_choice) is not None:
                verdict = (
                    f"below the floor ({fid.floor_pct}) only through the --feedback values "
                    f"({chosen.agreement_without:.1%} with the evolved ones)"
                )
            print(
                f"  decides like the BLIS original in {fid.agreement:.1%} of {fid.states} sampled states: {verdict}; "
                "the report's Fidelity section says why they differ"
            )
        for f in critical:
            where = f" line {f.source_line}" if f.source_line else (f" {f.file}:{f.line}" if f.file else "")
            print(f"  CRITICAL {f.check}{where}: {f.message}", file=sys.stderr)
    # A program BLIS could not have run is unusable input, like a syntax error: refused, not merely blocked.
    if any(f.check == CHECK_DOES_NOT_COMPILE for f in critical):
        print(f"  fix: {next(f.fix for f in critical if f.check == CHECK_DOES_NOT_COMPILE)}", file=sys.stderr)
        return 2
    return 1 if critical else 0


TOOLCHAIN_LOG = "toolchain.log"
#: What `promote translate` writes beside the plugin package, whichever plugin it is.
OWN_FILES = ("findings.json", "translation.json", TOOLCHAIN_LOG)  # and the report (REPORT_NAME)


def refuse_stale(out: Path, writing: set[str]) -> None:
    """Refuse an ``--out`` holding files this translation does not write: an earlier translation's plugin and
    config (another --plugin-type, or an older bot's default name) would stay beside the new ones, which
    translation.json and the report do not mention, and be copied into the fork with them. The same
    translation again (the same files) is fine. Nothing is deleted: the directory may hold a person's work."""
    if not out.is_dir():
        return
    stale = sorted(
        rel
        for p in out.rglob("*")
        if (p.is_file() or p.is_symlink()) and (rel := p.relative_to(out).as_posix()) not in writing
    )
    if stale:
        from bot.cli.files import OutputError

        more = f" and {len(stale) - 5} more" if len(stale) > 5 else ""
        raise OutputError(
            f"--out {out}: holds {len(stale)} file(s) this translation does not write ({', '.join(stale[:5])}{more}), "
            "an earlier translation's (another plugin type, or an older bot)?; they would stay beside the new plugin "
            "unnoticed. Remove them, or pass an empty or new --out directory"
        )


def _refuse_unsafe(src, out: Path, as_json: bool) -> int | None:
    """Exit 1 with the CRITICAL safety findings (also in OUT/findings.json) before anything is analysed or built."""
    from bot.golang.safety import check_evolved_source, critical

    findings = check_evolved_source(src)
    crit = critical(findings)
    if not crit:
        return None
    output_dir(out)
    (out / "findings.json").write_text(
        json.dumps([json.loads(f.model_dump_json()) for f in findings], indent=2, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    if as_json:
        print(json.dumps({"refused": True, "findings": [json.loads(f.model_dump_json()) for f in findings]}, indent=2))
    else:
        print(
            f"refused {src.path}: {counted_noun(len(crit), 'CRITICAL safety finding')}; nothing was analysed, built or run"
        )
    for f in crit:
        print(f"  CRITICAL {f.check} line {f.source_line}: {f.message}; fix: {f.fix}", file=sys.stderr)
    print(f"  all findings: {out / 'findings.json'}", file=sys.stderr)
    return 1
