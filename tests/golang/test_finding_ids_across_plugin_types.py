"""A finding's id names the finding, not the directory its plugin package happens to be generated in.

Found by a researcher rehearsing with `promote translate best_program.go --out DIR` and quoting an id
(`hazard.sim-scale-threshold#3fa2c1`) in a gate comment: `promote translate` picks the plugin type from the
receiver, the promotion names its own, and every id differed, because an id digested the finding's file, whose
directory (`pkg/.../scorer/<package>/`), main file (`<type>.go`) and EndpointPickerConfig
(`deploy/config/<type>-epp-config.yaml`) are named for the plugin type. The harness is answered here without Go
(the not-measured finding it then raises is anchored at the plugin's main file too); the translations differ
only in their plugin type.
"""

from __future__ import annotations

import re

import pytest

from bot.cli import main
from bot.dictionary import load_dictionary
from bot.golang.analyze import analyze
from bot.golang.gonames import id_places
from bot.golang.source import load_evolved_source
from bot.golang.translate import translate
from bot.model import Finding, ReviewRound, Severity, finding_ids

from .conftest import EXAMPLE, FIXTURES

#: A capped client-keyed map: its finding names where the plugin caps it (the main file and a line of it).
CAPPED = FIXTURES / "admission_class_key.go"
TYPES = ("first-kind", "zz-another-plugin-name")


class _NotRun:
    """The harness's answer when it could not build: no Go runs here."""

    def run(self, request):
        return {"ok": False, "build_log": "not run in this test"}


def _report_ids(markdown: str) -> list[str]:
    """The ids in the translation report's findings table, in order."""
    section = markdown.split("## Findings", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \w+ \| `([^`]+)` \|", section, re.M)


@pytest.mark.parametrize("path", [EXAMPLE, CAPPED], ids=lambda p: p.stem)
def test_two_plugin_types_give_every_finding_the_same_id(path):
    d = load_dictionary()
    src = load_evolved_source(path)
    an = analyze(src, d)
    first, other = (translate(src, an, d, plugin_type=t, executor=_NotRun()) for t in TYPES)
    assert first.summary.package_dir != other.summary.package_dir
    # the ids are about files named for the plugin type: the package, its main file, its config
    files = {f.file for f in first.findings}
    assert any(f and f.endswith("/first_kind.go") for f in files), files
    if path == EXAMPLE:
        assert "deploy/config/first-kind-epp-config.yaml" in files
    ids = _report_ids(first.report_markdown)
    assert ids and len(ids) == len(first.findings)
    assert _report_ids(other.report_markdown) == ids
    # what gate 1's review round shows: the same ids, from the round's own record of where the package is
    for tr in (first, other):
        places = id_places(tr.summary.package_dir, tr.summary.plugin_type)
        assert finding_ids(tr.findings, places) == ids
        assert ReviewRound(gate=1, round=1, findings=tr.findings, places=places).ids() == ids


class _MeasuredOnce:
    """The real harness for the first translation; its answer again for the second, the same plugin under
    another name (one Go build, not two)."""

    answer = None

    def run(self, request):
        from bot.execution import DirectExecutor

        if self.answer is None:
            self.answer = DirectExecutor().run(request)
        return self.answer


@pytest.mark.slow
def test_measured_findings_keep_their_ids_under_another_plugin_type_too():
    d = load_dictionary()
    src = load_evolved_source(CAPPED)
    an = analyze(src, d)
    harness = _MeasuredOnce()
    first, other = (translate(src, an, d, plugin_type=t, executor=harness) for t in TYPES)
    assert first.summary.fidelity is not None and first.summary.fidelity.measured
    assert _report_ids(first.report_markdown) == _report_ids(other.report_markdown) != []


def test_an_id_still_tells_apart_the_package_s_files_and_a_model_s_finding_elsewhere_keeps_its_path():
    places = id_places("pkg/epp/framework/plugins/scheduling/scorer/firstkind", "first-kind")
    pkg = "pkg/epp/framework/plugins/scheduling/scorer/firstkind"

    def ident(file: str, by: str | None = "claude") -> tuple:
        return Finding(severity=Severity.IMPORTANT, check="R1", message="m", file=file, by=by).identity(places)

    assert ident(f"{pkg}/first_kind.go") == ("R1", "{package}/{plugin}.go")
    assert ident(f"{pkg}/first_kind_test.go") == ("R1", "{package}/{plugin}_test.go")
    assert ident(f"{pkg}/evolved.go") == ("R1", "{package}/evolved.go")
    assert ident(f"{pkg}/README.md") == ("R1", "{package}/README.md")
    assert ident("deploy/config/first-kind-epp-config.yaml") == ("R1", "{config}")
    assert ident(pkg) == ("R1", "{package}")  # gate 1's finding on a package with no Go source
    # not the package: a sibling whose name starts like it, an upstream scorer, the runner, the docs
    for other in (
        f"{pkg}x/first_kind.go",
        "pkg/epp/framework/plugins/scheduling/scorer/prefix/plugin.go",
        "cmd/epp/runner/runner.go",
        "docs/promotions/x/README.md",
    ):
        assert ident(other) == ("R1", other)
    # without places (a round saved before rounds kept them): the file as it is, so its ids read as they did
    assert Finding(severity=Severity.IMPORTANT, check="R1", message="m", file=f"{pkg}/evolved.go").identity()[1] == (
        f"{pkg}/evolved.go"
    )


def test_promote_translate_with_two_plugin_types_reports_the_same_ids(tmp_path, monkeypatch, capsys):
    import bot.execution

    monkeypatch.setattr(bot.execution, "DirectExecutor", _NotRun)  # what translate runs the harness with
    ids = []
    for t in ("a-one", "b-two"):
        out = tmp_path / t
        main(["translate", str(EXAMPLE), "--out", str(out), "--plugin-type", t, "--no-check"])
        ids.append(_report_ids((out / "translation-report.md").read_text(encoding="utf-8")))
    capsys.readouterr()
    assert ids[0] and ids[0] == ids[1]
