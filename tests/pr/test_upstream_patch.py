"""`promote upstream-patch`: the minimal llm-d-router change, that applies to the mirror and, through the lines its
runner.go shares with v0.10.0, to llm-d-router itself, and passes its checks."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from bot.cli import main
from bot.escape import commit_body
from bot.model import Fidelity, Finding, PolicyKind, Severity, TranslationSummary
from bot.upstream import (
    MIRROR,
    RUNNER_GO,
    UPSTREAM_RUNNER,
    UpstreamError,
    about,
    apply_to_mirror,
    format_patch,
    upstream_change,
    upstream_runner,
)

PKG = "pkg/epp/framework/plugins/scheduling/scorer/demo"
SUMMARY = TranslationSummary(
    kind=PolicyKind.ROUTING,
    plugin_type="demo-scorer",
    package_dir=PKG,
    signals=["QueueDepth"],
    registration_import=f'demo "github.com/llm-d/llm-d-router/{PKG}"',
    registration_line="fwkplugin.Register(demo.DemoType, fwkplugin.StabilityAlpha, demo.DemoFactory)",
)
BRANCH_FILES = {
    f"{PKG}/demo.go": "package demo\n",
    f"{PKG}/demo_test.go": "package demo\n",
    f"{PKG}/README.md": "# demo\n",
    "deploy/config/demo-scorer-epp-config.yaml": "kind: EndpointPickerConfig\n",
    "docs/promotion/demo-scorer/report.md": "# the evidence stays on the fork\n",
    "benchmarks/promotion/demo-scorer/README.md": "plan\n",
}


def _change():
    runner = upstream_runner()
    return upstream_change(
        SUMMARY, BRANCH_FILES, runner, origin={"framework": "openevolve", "run": "r", "iteration": 3}
    )


def test_the_change_carries_the_package_the_config_and_the_registration_only():
    change = _change()
    assert change.paths == sorted(
        [
            f"{PKG}/README.md",
            f"{PKG}/demo.go",
            f"{PKG}/demo_test.go",
            "deploy/config/demo-scorer-epp-config.yaml",
            RUNNER_GO,
        ]
    )
    assert SUMMARY.registration_line in change.files[RUNNER_GO]
    assert change.subject == "Add the demo-scorer routing plugin (Alpha)"
    with pytest.raises(UpstreamError, match="no Go code"):
        upstream_change(SUMMARY, {"deploy/config/demo-scorer-epp-config.yaml": ""}, "")


@pytest.mark.parametrize(
    ("kind", "phrase"), [(PolicyKind.ADMISSION, "an admission"), (PolicyKind.ROUTING, "a routing")]
)
def test_the_commit_message_names_the_policy_kind_with_its_article(kind, phrase):
    """The message goes into llm-d-router's history: "from a admission policy" is not English."""
    change = upstream_change(SUMMARY.model_copy(update={"kind": kind}), BRANCH_FILES, (MIRROR / RUNNER_GO).read_text())
    assert f"from {phrase} policy evolved" in " ".join(change.message.split())


def test_the_commit_message_says_what_the_plugin_does_its_fidelity_findings_and_where_the_fork_is():
    """upstream2 #1-#3: the message was "Alpha, translated by a bot" and a branch name of a fork it did not name.
    A maintainer reads only the patch: s01's scorer decides like BLIS in 88.8% of states, queue-scorer alone in
    94.9%, and on priority-0 traffic it is queue-scorer again; a01's open IMPORTANT findings are README caveats."""
    pkg = "pkg/epp/framework/plugins/scheduling/scorer/sloaging"
    fidelity = Fidelity(
        decision="the same endpoint",
        states=500,
        agreement=0.888,
        floor=0.95,
        reference="queue-scorer alone (the shortest scraped queue)",
        reference_agreement=0.949,
    )
    found = [
        Finding(
            severity=Severity.IMPORTANT, check="hazard.unbounded-client-keyed-state", message="m", file=f"{pkg}/e.go"
        ),
        Finding(severity=Severity.SUGGESTION, check="translate.queue-order-as-score", message="s", file=f"{pkg}/e.go"),
        Finding(
            severity=Severity.IMPORTANT, check="translate.fidelity-below-reference", message="r", file=f"{pkg}/e.go"
        ),
    ]
    summary = SUMMARY.model_copy(
        update={
            "kind": PolicyKind.SCHEDULING,
            "plugin_type": "slo-aging-scheduler",
            "package_dir": pkg,
            "signals": ["ArrivalTime", "QueueDepth", "SLOClass"],
            "fidelity": fidelity,
            "findings": found,
        }
    )
    files = {f"{pkg}/demo.go": "package demo\n", f"{pkg}/README.md": "# demo\n"}
    change = upstream_change(
        summary,
        files,
        (MIRROR / RUNNER_GO).read_text(),
        origin={"framework": "openevolve", "run": "corpus/s01", "iteration": 0},
        title="SLO-class aging scheduler",
        fork_repo="example-org/llm-d-router",
        branch="promotion/s01-slo-aging-scheduler",
        commit="7c4951318697" + "0" * 28,
    )
    assert all(len(ln) <= 72 for ln in change.message.splitlines()), change.message
    text = " ".join(change.message.split())
    assert "`slo-aging-scheduler` prefers endpoints where the evolved BLIS scheduling policy's queue order" in text
    assert "SLO-class aging scheduler, from 3 signals (ArrivalTime, QueueDepth, SLOClass)" in text
    assert "decides like the BLIS original (the same endpoint) in 88.8% of them (floor 95%)" in text
    assert "queue-scorer alone (the shortest scraped queue) decides like the BLIS original in 94.9%" in text
    assert "priority 0, no InferenceObjective) it scores like queue-scorer" in text
    assert "adds weight to queue length; the sample config says so at its weight" in text
    # check ids name the translator's checklist, which upstream does not have: the message counts the caveats
    assert "The plugin's README names 2 known limitations in its Caveats." in text
    assert "hazard.unbounded-client-keyed-state" not in text
    assert "queue-order-as-score" not in text  # a SUGGESTION is not a caveat
    assert "branch promotion/s01-slo-aging-scheduler of the fork example-org/llm-d-router at 7c4951318697." in text
    # Found by an llm-d maintainer: that patch read as ready. It says it is not, in the message and the notes.
    caution = (
        "Not ready for upstream review: on the sampled states the plugin decides like the BLIS original in 88.8% of "
        "them and queue-scorer alone (the shortest scraped queue), already in llm-d-router, in 94.9%"
    )
    assert caution in text and any(caution in note for note in change.notes)
    above = summary.model_copy(update={"fidelity": fidelity.model_copy(update={"agreement": 0.96})})
    assert "Not ready" not in upstream_change(above, files, (MIRROR / RUNNER_GO).read_text()).message


def test_the_commit_message_says_the_readme_names_the_dead_code_evolved_go_carries():
    """A maintainer reading evolved.go must not be surprised by code that looks live (``bot.golang.dead_code``):
    the message says the README's Caveats name it, by count, and why it is there."""
    dead = Finding(
        severity=Severity.SUGGESTION,
        check="translate.dead-code",
        message="the loop over `ws.observers` never runs: never set",
        file=f"{PKG}/evolved.go",
        line=181,
    )
    text = " ".join(about(SUMMARY.model_copy(update={"findings": [dead, dead.model_copy(update={"line": 98})]})))
    assert "The plugin's README also names 2 carried lines of evolved.go that change no decision in the plugin" in text
    assert "line for line like the BLIS original" in text and "dead-code" not in text
    assert "evolved.go" not in " ".join(about(SUMMARY))


def test_the_patch_applies_to_the_mirror_and_not_to_a_tree_whose_runner_differs(tmp_path, monkeypatch):
    patch = format_patch(_change())
    assert patch.startswith("From ") and "Subject: [PATCH] Add the demo-scorer routing plugin (Alpha)" in patch
    assert "docs/promotion" not in patch and "benchmarks/" not in patch
    applied = apply_to_mirror(patch)
    assert set(applied) == set(_change().files)
    assert applied[RUNNER_GO] == _change().files[RUNNER_GO]
    other = tmp_path / "runner.go.txt"
    other.write_text(re.sub(r"import \((.|\n)*?\)", 'import (\n\t"fmt"\n)', upstream_runner(), count=1))
    monkeypatch.setattr("bot.upstream.UPSTREAM_RUNNER", other)
    with pytest.raises(UpstreamError, match="does not apply"):
        apply_to_mirror(patch)


#: Lines of llm-d-router v0.10.0's cmd/epp/runner/runner.go, recorded verbatim with their line numbers: the two
#: in-tree scorers the mirror also registers, and where a registration once went.
UPSTREAM_EXCERPTS = Path(__file__).parent / "fixtures" / "runner_v0.10.0_excerpts.txt"


def _excerpts() -> list[tuple[int, list[str]]]:
    sections: list[tuple[int, list[str]]] = []
    for text in UPSTREAM_EXCERPTS.read_text().splitlines():
        if text.startswith("@@ "):
            sections.append((int(text[3:]), []))
        elif sections:
            sections[-1][1].append(text)
    return sections


def test_the_bundled_upstream_runner_is_v0_10_0s():
    """gomirror/upstream/ holds v0.10.0's runner.go verbatim: the recorded excerpts are its lines, at their numbers."""
    lines = UPSTREAM_RUNNER.read_text().splitlines()
    for start, section in _excerpts():
        assert lines[start - 1 : start - 1 + len(section)] == section


def _upstream(tmp_path: Path) -> Path:
    """A git repository holding llm-d-router v0.10.0's runner.go (the verbatim copy): what the patch meets."""
    repo = tmp_path / "upstream"
    (repo / RUNNER_GO).parent.mkdir(parents=True)
    (repo / RUNNER_GO).write_text(upstream_runner())
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "v0.10.0"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True)
    return repo


SCORERS_ALPHA = (
    "\tfwkplugin.Register(headerlabelaffinity.PluginType, fwkplugin.StabilityAlpha, headerlabelaffinity.Factory)"
)
ADMITTERS = "\tfwkplugin.Register(probabilisticadmitter.Type, fwkplugin.StabilityBeta, probabilisticadmitter.Factory)"


@pytest.mark.parametrize(
    "package, alias, after, between",
    [
        (PKG, "demo", [SCORERS_ALPHA], ("scorer/contextlengthaware", "scorer/endpointattribute")),
        (
            "pkg/epp/framework/plugins/requestcontrol/admitter/evolvedsaturationshedder",
            "evolvedsaturationshedder",
            [ADMITTERS, "\t// Alpha"],
            ("usagelimits/softreflectiveceiling", "admitter/latencyslo"),
        ),
        (
            "pkg/epp/framework/plugins/scheduling/scorer/evolvedsjfguard",
            "zzz",
            [SCORERS_ALPHA],
            ("scorer/endpointattribute", "scorer/headerlabelaffinity"),
        ),
    ],
)
def test_the_patch_registers_the_plugin_with_its_kind_and_applies_to_upstreams_runner(
    tmp_path, package, alias, after, between
):
    """Found by a maintainer reviewing the s01 and a02 patches: both registrations landed under "register request
    header processor plugins", the import in a group of its own with an alias equal to the package name. A scorer
    goes with the extra scheduling scorers (Alpha), an admitter beside probabilisticadmitter under a new Alpha
    heading, the import sorted into llm-d-router's group; `git am` applies the hunk to v0.10.0's runner.go."""
    summary = SUMMARY.model_copy(
        update={
            "package_dir": package,
            "registration_import": f'{alias} "github.com/llm-d/llm-d-router/{package}"',
            "registration_line": f"fwkplugin.Register({alias}.T, fwkplugin.StabilityAlpha, {alias}.F)",
        }
    )
    files = {f"{package}/{p.rsplit('/', 1)[1]}": t for p, t in BRANCH_FILES.items() if p.startswith(PKG)}
    patch = format_patch(upstream_change(summary, files, upstream_runner()))
    repo = _upstream(tmp_path)
    am = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "am", "-s"],
        cwd=repo,
        input=patch,
        capture_output=True,
        text=True,
        check=False,
    )
    assert am.returncode == 0, am.stdout + am.stderr
    runner = (repo / RUNNER_GO).read_text().splitlines()
    at = runner.index(after[0])
    assert runner[at : at + len(after) + 2] == [*after, f"\t{summary.registration_line}", ""]
    spec = f'"github.com/llm-d/llm-d-router/{package}"'
    imported = next(i for i, ln in enumerate(runner) if ln.endswith(spec))
    assert runner[imported].strip() == (spec if alias == package.rsplit("/", 1)[1] else f"{alias} {spec}")
    assert between[0] in runner[imported - 1] and between[1] in runner[imported + 1]


def test_the_mirror_registers_the_in_tree_scorers_at_v0_10_0s_stability():
    """The mirror's registrations are upstream's lines (Beta), not the Stable it once claimed."""
    mirror = (MIRROR / RUNNER_GO).read_text().splitlines()
    recorded = dict(_excerpts())[624]
    assert recorded and all(line in mirror for line in recorded)
    assert not [line for line in mirror if "StabilityStable" in line]


def test_the_patch_asks_for_a_sign_off_and_repeats_why_the_promotion_is_not_ready():
    """Found by a maintainer: the patch had no Signed-off-by and read as ready, though its evidence was sample
    data and its gates were passed by --approve. A bot cannot sign off for a person: the notes ask for it."""
    reasons = ["its benchmark evidence is sample data", "gate 1, 2, 3 passed by --approve, not by a person"]
    runner = (MIRROR / RUNNER_GO).read_text()
    patch = format_patch(upstream_change(SUMMARY, BRANCH_FILES, runner, not_ready=reasons))
    message, _, rest = patch.partition("\n---\n")
    notes = rest.split("\n diff", 1)[0].split(" cmd/epp", 1)[0]
    assert "Not ready for upstream review" in message and "sample data" in message and "--approve" in message
    assert "`git commit -s`" in notes and "if the repository requires DCO" in notes and "sample data" in notes
    assert not re.search(r"^Signed-off-by:", patch, re.M)  # the submitter's, never the bot's
    assert set(apply_to_mirror(patch)) == set(_change().files)  # `git am` leaves the notes out
    ready = format_patch(_change())
    assert "`git commit -s`" in ready and "Not ready" not in ready


def _mailinfo(tmp_path: Path, mail: str, *options: str) -> str:
    """The commit message `git am` (with ``options``, e.g. ``--scissors``) makes from ``mail``: `git mailinfo`'s."""
    (tmp_path / "mail").write_text(mail, encoding="utf-8")
    with (tmp_path / "mail").open("rb") as stdin:
        subprocess.run(
            ["git", "mailinfo", *options, str(tmp_path / "msg"), str(tmp_path / "body")],
            stdin=stdin,
            check=True,
            capture_output=True,
        )
    return (tmp_path / "msg").read_text(encoding="utf-8")


#: Scissors lines as `git am --scissors` (or ``mailinfo.scissors``) sees them: git drops the message above one.
SCISSORS = [
    "------------------------ >8 ------------------------",
    "8<------------------------------------------------",
    "-------------------- %< --------------------",
    "---------------------->%----------------------",
]


@pytest.mark.parametrize(
    "words", ["--- KV-pressure adjustments", "diff -u of the old scorer", "Index: 3 modes", *SCISSORS]
)
@pytest.mark.parametrize("options", [(), ("--scissors",)], ids=["am", "am-scissors"])
def test_no_title_ends_the_message_git_am_commits(tmp_path, words, options):
    """Red team 10 item 5: `git am` (``git mailinfo``) takes a line that starts ``--- ``, ``diff -`` or ``Index: ``
    as the end of the message, so a request title the 72-column wrap broke before " --- " dropped the rest of the
    commit: the evidence pointer and the "Not ready for upstream review" caution, though the patch still applied.
    Such a line is indented (``escape.commit_body``): the commit `git am` makes keeps every paragraph. A title that
    is a scissors line (``-- >8 --``) would, under `git am --scissors`, drop every line above it instead (the
    one saying what the plugin does): its mark is broken, so git no longer sees scissors."""
    runner = (MIRROR / RUNNER_GO).read_text()

    def change(title: str):
        return upstream_change(
            SUMMARY,
            BRANCH_FILES,
            runner,
            title=title,
            branch="promotion/7-demo-scorer",
            fork_repo="acme/llm-d-router",
            commit="a" * 40,
            not_ready=["its benchmark evidence is sample data"],
        )

    def breaks_at_wrap(title: str) -> bool:  # the unescaped wrap would start a line with the words
        from bot.golang.plugin_summary import what_it_does

        text = what_it_does(SUMMARY.kind, SUMMARY.plugin_type, title, SUMMARY.signals, SUMMARY.thresholds)
        wrapped = textwrap.fill(text, 72, break_long_words=False, break_on_hyphens=False)
        return any(ln.startswith(words.split()[0]) for ln in wrapped.splitlines())

    title = next(t for pad in range(60) if breaks_at_wrap(t := "Adaptive weighted scorer" + " x" * pad + f" {words}"))
    patch = format_patch(change(title))
    message = _mailinfo(tmp_path, patch, *options)
    assert message.startswith("`demo-scorer` scores each request"), message  # nothing above a scissors line is cut
    assert "Not ready for upstream review" in message and "sample data" in message, message
    assert "branch promotion/7-demo-scorer of the fork acme/llm-d-router at aaaaaaaaaaaa" in " ".join(message.split())
    assert "".join(words.split()) in "".join(message.split())  # the title whole, whatever the wrap and escape add
    assert all(len(ln) <= 72 for ln in change(title).message.splitlines())
    assert set(apply_to_mirror(patch)) == set(change(title).files)


@pytest.mark.parametrize("mark", [*SCISSORS, "-- >8 --", "  -- 8< --  cut here", "\t%<------", "--->8---"])
def test_a_scissors_line_in_request_text_cuts_nothing_under_git_am_scissors(tmp_path, mark):
    """`git am --scissors` drops the message above a scissors line, which git finds after any indent: a request's
    line that is one would cut the caution and the evidence pointer. ``commit_body`` breaks its mark."""
    text = f"Not ready for upstream review: the evidence is sample data.\n{mark}\nEvidence: branch promotion/7."
    body = commit_body(text)
    mail = f"From: Promotion Bot <bot@example.com>\nSubject: [PATCH] Add a plugin\n\n{body}\n---\n x | 1 +\n"
    assert _mailinfo(tmp_path, mail, "--scissors").rstrip("\n") == body
    assert "".join(body.split()) == "".join(text.split())  # only spaces added


@pytest.mark.parametrize(
    "text", ["p99 >8 ms, queue 8< 9 and 5%< 7%", "-->8---", "-- >8 -- the old scorer's cut-off rule"]
)
def test_text_git_does_not_take_for_scissors_is_kept_as_written(text):
    """The mark is broken only on a line git would cut at: a comparison such as ">8 ms" is left alone."""
    assert commit_body(text) == text


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["upstream-patch", "--work", str(tmp_path / "none")]) == 2
    assert "no promotion here" in capsys.readouterr().err
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path / "fork")], check=True)
    assert main(["upstream-patch", "--fork", str(tmp_path / "fork"), "--branch", "promotion/x"]) == 2
    assert "is not a branch of the fork" in capsys.readouterr().err


@pytest.mark.slow
def test_the_bundled_examples_patch_applies_and_passes_go_vet_and_go_test(full_run, tmp_path, capsys):
    """The acceptance line: from the finished example, a patch that applies to llm-d-router and passes its checks."""
    _, work, fork = full_run
    out = tmp_path / "up" / "plugin.patch"
    code = main(["upstream-patch", "--work", str(work), "--out", str(out)])
    said = capsys.readouterr().out
    assert code == 0, said
    assert "applies with git am to gomirror/llm-d-router, the bot's stand-in for llm-d-router v0.10.0" in said
    assert "not an llm-d-router checkout" in said and "go vet: pass" in said and " 0 failed" in said
    assert re.search(r"go test: [1-9]\d* passed", said)
    assert "git am -s" in said and "checked below against the bot's mirror of it, not a checkout" in said
    assert "`git commit -s`" in said
    assert "its benchmark evidence is sample data" in said and "passed by --approve, not by a person" in said
    body = (work / "pr" / "pull-request.md").read_text()
    assert "checked with `go vet` and `go test` on the bot's stand-in for it (`gomirror/llm-d-router`, not an" in body
    patch = out.read_text()
    assert "Not ready for upstream review" in patch.partition("\n---\n")[0]
    message = " ".join(
        patch.partition("\n---\n")[0].split()
    )  # what `git am` commits: the plugin, its fidelity, the fork
    assert "`evolved-adaptive-scorer` scores each request's candidate endpoints" in message
    assert "Evolved adaptive weighted scorer" in message and "decides like the BLIS original" in message
    assert "of the fork example-org/llm-d-router at " in message
    files = re.findall(r"^diff --git a/(\S+) ", patch, flags=re.MULTILINE)
    assert RUNNER_GO in files and "deploy/config/evolved-adaptive-scorer-epp-config.yaml" in files
    assert any(f.endswith("_test.go") for f in files)
    assert all(f.startswith(("pkg/epp/framework/plugins/", "deploy/config/", "cmd/epp/runner/")) for f in files), files
    for local in (str(work), str(fork), str(PROJECT_ROOT), f"{Path.home()}/"):
        assert local not in patch


@pytest.mark.slow
def test_a_promotion_that_is_not_finished_is_refused_with_where_it_stands(tmp_path, capsys):
    """Found by a README audit: a patch was cut, exit 0, from a promotion still waiting at gate 1 (and from one
    rejected at gate 3), its notes never saying so; the README promises it "from a finished promotion"."""
    from tests.conftest import REQUEST

    work, fork = tmp_path / "work", tmp_path / "fork"
    assert main(["run", str(REQUEST), "--work", str(work), "--fork", str(fork), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["upstream-patch", "--work", str(work), "--no-check"]) == 2
    err = capsys.readouterr().err
    assert "is not finished (waiting for a decision at gate 1" in err and "promote status" in err
    assert not (work / "upstream").exists()
    assert main(["reject", "1", "--reason", "not this one", "--work", str(work), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["upstream-patch", "--work", str(work), "--no-check"]) == 2
    assert "is not finished (rejected at gate 1)" in capsys.readouterr().err
