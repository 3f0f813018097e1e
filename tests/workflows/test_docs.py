"""The README and docs/ say what the code does: the command line, adopting the bot on GitHub, the issue form.

A new user copies these lines; each test reads the text and the thing it describes, so neither moves alone.
"""

from __future__ import annotations

import argparse
import re

from bot import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"


def _section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


# --------------------------------------------------------------------------
# README "Command line" against `promote --help`
# --------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every leaf command, e.g. ``"bench run"``, with its parser."""
    out: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = _commands(sub, f"{prefix}{name} ")
                out.update(inner or {f"{prefix}{name}": sub})
    return out


def _options(parser: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """(every long option, the required ones), without --help."""
    every, required = set(), set()
    for action in parser._actions:
        longs = [s for s in action.option_strings if s.startswith("--") and s != "--help"]
        every.update(longs)
        if action.required and longs:
            required.update(longs)
    return every, required


def _readme_command_lines() -> tuple[dict[str, str], dict[str, str]]:
    """The README's ``promote ...`` lines by command, and its option groups (``NAME = [...]``) by name."""
    block = re.search(r"```text\n(.*?)```", _section(README.read_text(), "## Command line"), re.S).group(1)
    lines, groups = {}, {}
    for line in block.splitlines():
        usage = line.split("  #", 1)[0].rstrip()
        if m := re.match(r"^([A-Z][A-Z_]*)\s+=\s+(.+)$", usage):
            groups[m.group(1)] = m.group(2)
        elif usage.startswith("promote ") and not usage.startswith("promote --"):
            words = usage.split()[1:]
            name = " ".join(words[:2]) if words[0] == "bench" else words[0]
            lines[name] = usage
    return lines, groups


def test_the_readme_lists_every_command_and_option_of_promote_and_no_other():
    from bot.cli import build_parser

    commands = _commands(build_parser())
    lines, groups = _readme_command_lines()
    assert set(lines) == set(commands), "the README's command list and `promote --help` name different commands"
    for name, parser in commands.items():
        line = lines[name]
        expanded = re.sub(r"\b[A-Z][A-Z_]*\b", lambda m: groups.get(m.group(), m.group()), line)
        listed = set(re.findall(r"(--[a-z][a-z-]*)", expanded))
        every, required = _options(parser)
        assert listed == every, f"promote {name}: README lists {sorted(listed - every)}, lacks {sorted(every - listed)}"
        outside_brackets = re.sub(r"\[[^\]]*\]", "", line)
        for opt in required:
            assert opt in outside_brackets, f"promote {name}: {opt} is required, so not in [brackets]"
    assert "promote --version" in README.read_text()


# --------------------------------------------------------------------------
# docs/issue-form.md against the form and its parser
# --------------------------------------------------------------------------

ISSUE_FORM_DOC = PROJECT_ROOT / "docs" / "issue-form.md"


def _form_table() -> list[tuple[str, str, str]]:
    """docs/issue-form.md's field table: (form field id or the row's first cell, promotion.yaml cell, how)."""
    rows = []
    for line in _section(ISSUE_FORM_DOC.read_text(), "## Field by field").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and not set(cells[0]) <= {"-"} and cells[0] != "Form field (id)":
            m = re.search(r"\(`([a-z_]+)`\)", cells[0])
            rows.append((m.group(1) if m else cells[0], cells[1], cells[2]))
    return rows


def test_the_issue_form_page_maps_every_form_field_and_every_request_field():
    from bot.github.issue_form import FIELDS
    from bot.model import PromotionRequest

    rows = _form_table()
    by_id = {key: (field, how) for key, field, how in rows}
    assert set(FIELDS) <= set(by_id), f"form fields docs/issue-form.md does not map: {set(FIELDS) - set(by_id)}"
    mapped = " ".join(field for _, field, _ in rows)
    top = [n for n, f in PromotionRequest.model_fields.items() if not f.exclude]
    assert all(f"`{n}" in mapped for n in top), (
        f"request fields not on the page: {[n for n in top if f'`{n}' not in mapped]}"
    )
    assert by_id["openevolve_run"][0] == "`origin.run`" and by_id["blis_version"][0] == "`origin.blis_version`"
    assert ("(none)", "`stack`") in [(k, f) for k, f, _ in rows], "stack: is not on the form"


def test_the_issue_form_pages_baselines_are_the_parsers():
    from bot.github.issue_form import STANDARD_BASELINES
    from bot.hypotheses.generate import DEFAULT_GUARDED
    from bot.model.request import BaselineScenario

    how = {key: how for key, _, how in _form_table()}["baselines"]
    for name, std in STANDARD_BASELINES.items():
        assert f"`{name}`" in how and f"rate: {std['rate']:g}" in how
    assert tuple(BaselineScenario.model_fields["guarded_metrics"].default_factory()) == DEFAULT_GUARDED
    assert ", ".join(f"`{m}`" for m in DEFAULT_GUARDED) in how


def test_the_issue_form_does_not_claim_the_same_fields_as_promotion_yaml():
    import yaml

    form = yaml.safe_load((PROJECT_ROOT / ".github" / "ISSUE_TEMPLATE" / "promotion.yml").read_text())
    intro = " ".join(i["attributes"]["value"] for i in form["body"] if i["type"] == "markdown")
    assert "same fields" not in intro and "docs/issue-form.md" in intro
    for said in ("`origin.run`", "`origin.blis_version`", "`stack:`", "title"):
        assert said in intro


# --------------------------------------------------------------------------
# Adopting the bot: README and docs/github-setup.md against the workflows and action.yml
# --------------------------------------------------------------------------

SETUP = PROJECT_ROOT / "docs" / "github-setup.md"


def _local_action_steps() -> list[tuple[str, str, dict]]:
    """(workflow file, job, the step's `with:`) of every `uses: ./` a fork must replace."""
    import yaml

    out = []
    for name in ("promotion.yml", "benchmark.yml"):
        doc = yaml.safe_load((PROJECT_ROOT / ".github" / "workflows" / name).read_text())
        for job, body in doc["jobs"].items():
            out += [(name, job, step.get("with", {})) for step in body["steps"] if step.get("uses") == "./"]
    return out


def _row(text: str, workflow: str, job: str) -> str:
    rows = [ln for ln in text.splitlines() if ln.lstrip().startswith("|") and f"`{workflow}`" in ln]
    rows = [ln for ln in rows if f"`{job}`" in ln]
    assert len(rows) == 1, f"one table row for {workflow}'s {job} job, found {len(rows)}"
    return rows[0]


def test_adoption_names_every_uses_line_to_replace_with_its_command_and_inputs():
    import yaml

    steps = _local_action_steps()
    assert len(steps) == 5
    inputs = yaml.safe_load((PROJECT_ROOT / "action.yml").read_text())["inputs"]
    readme, setup = _section(README.read_text(), "## On GitHub"), SETUP.read_text()
    for text in (readme, setup):
        assert "five `uses: ./` lines" in text
        for workflow, job, given in steps:
            row = _row(text, workflow, job)
            command = given.get("command", inputs["command"]["default"])
            assert (f"`command: {command}`" if "command" in given else f"`{command}`") in row
            assert all(f"`{key}" in row for key in given), f"{workflow} {job}: {sorted(given)} vs {row}"
            assert all(key in inputs for key in given)


def test_adoption_names_the_four_files_check_config_looks_for():
    from bot.github.config import CONFIG_PATH
    from bot.github.setup_check import FORM, WORKFLOWS

    files = [f".github/workflows/{w}" for w in WORKFLOWS] + [FORM, CONFIG_PATH]
    readme, setup = _section(README.read_text(), "## On GitHub"), SETUP.read_text()
    table = _section(setup, "## 1. Copy four files into the fork's default branch")
    assert len(files) == 4 and "four files" in readme
    for path in files:
        assert f"`{path}`" in readme and f"| `{path}` |" in table


# --------------------------------------------------------------------------
# README "Rehearsing your own promotion": the sample-data script as it is
# --------------------------------------------------------------------------


def test_the_readme_shows_how_to_make_sample_data_for_your_own_promotion_and_what_it_is_not():
    import importlib.util
    import subprocess
    import sys

    script = PROJECT_ROOT / "examples" / "weighted-adaptive" / "make_sample_reports.py"
    text = _section(README.read_text(), "## Rehearsing your own promotion")
    assert "make_sample_reports.py --request my/promotion.yaml --out " in text
    assert "**sample data**" in text and "**not measurements**" in text and "--allow-sample-data" in text
    assert "follow no gate decision" in text and "gate-1 `param` change" in text
    usage = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, check=True).stdout
    assert "--request" in usage and "--out" in usage
    spec = importlib.util.spec_from_file_location("make_sample_reports", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    named = re.search(r"sample profiles only for the example's workloads\s+\((.*?)\)", text, re.S).group(1)
    assert set(re.findall(r"`([a-z-]+)`", named)) == set(module.PROFILES)


def test_sample_reports_for_your_own_promotion_record_its_pinned_image_in_both_arms(tmp_path):
    """Found by a new user: sample data for a scheduler promotion said its evolved arm ran the routing example's
    image, which stage 5 now rightly leaves out; the script writes the image the request's plan pins, for the
    baseline too (it wrote an upstream release there, which stage 5 leaves out since the plan runs one image)."""
    import subprocess
    import sys

    import yaml

    from bot.bench.evaluation_spec import default_evolved_image
    from bot.bench.evidence import EvidencePolicy, is_sample, load_evidence
    from bot.bench.testbed import router_image_of
    from bot.model import PromotionRequest

    example = PROJECT_ROOT / "examples" / "weighted-adaptive"
    request = yaml.safe_load((example / "promotion.yaml").read_text())
    request["id"], request["fork"]["repo"] = "8", "Acme/llm-d-router"
    request["workloads"] = [w for w in request["workloads"] if w["name"] == "load-spikes"]
    request["claims"] = [c for c in request["claims"] if c["workload"] == "load-spikes"]
    request["baselines"] = []
    (tmp_path / "promotion.yaml").write_text(yaml.safe_dump(request))
    (tmp_path / request["source"]).write_text((example / request["source"]).read_text())
    script = example / "make_sample_reports.py"
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(script), "--request", str(tmp_path / "promotion.yaml"), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    pinned = default_evolved_image(PromotionRequest.load(tmp_path / "promotion.yaml"))
    assert pinned.endswith(":promotion-8-evolved-adaptive-scorer") and "acme/" in pinned
    docs = {p: yaml.safe_load(p.read_text()) for p in out.rglob("benchmark_report*.yaml")}
    assert docs and all(is_sample(d) for d in docs.values())
    assert {router_image_of(d) for d in docs.values()} == {pinned}  # both arms run the one image the plan pins
    reports = load_evidence(out, EvidencePolicy(promotion="8", evolved_image=pinned, allow_sample_data=True))
    assert reports.rejected == [] and reports.notes  # bound to this promotion, and still said to be sample data


def test_sample_reports_for_a_rate_with_no_sample_numbers_are_refused_with_the_rates_there_are(tmp_path):
    """Found by a new user: cache-warmup at 40 req/s stopped the script with a KeyError traceback."""
    import subprocess
    import sys

    import yaml

    example = PROJECT_ROOT / "examples" / "weighted-adaptive"
    request = yaml.safe_load((example / "promotion.yaml").read_text())
    request["workloads"][0]["rates"] = [20, 40]
    (tmp_path / "promotion.yaml").write_text(yaml.safe_dump(request))
    (tmp_path / request["source"]).write_text((example / request["source"]).read_text())
    proc = subprocess.run(
        [
            sys.executable,
            str(example / "make_sample_reports.py"),
            "--request",
            str(tmp_path / "promotion.yaml"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "Traceback" not in proc.stderr
    assert "no sample numbers for cache-warmup@40 (sample rates: 20, 35)" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_the_readme_says_where_hand_run_priority_mix_results_go_and_the_loader_reads_them_there(tmp_path):
    """F4 #7: the README said only "put its results under --results (either layout)": not that run_metadata.yaml
    sits beside each results.json, nor which <workload>/<rate> names to use. Each layout it gives now is loaded."""
    import shutil

    from bot.bench.priority_mix import load_priority_mix_results

    section = _section(README.read_text(), "## Benchmark results layout")
    layouts = [p for p in re.findall(r"`(DIR/[^`]+)`", section) if "priority-mix" in p]
    assert len(layouts) == 2 and "run_metadata.yaml" in section and "promotion:<id>,arm:<arm>" in section
    fixtures = PROJECT_ROOT / "tests" / "bench" / "fixtures" / "priority_mix"
    for i, layout in enumerate(layouts):
        root = tmp_path / str(i)
        for arm in ("baseline", "evolved"):
            rel = layout.removeprefix("DIR/").replace("<baseline|evolved>", arm).replace("<rate>", "6")
            run = root / rel.replace("<n>", "1").replace("<ts>", "1760000000").replace("<rand>", "ab1c")
            run.mkdir(parents=True)
            for name in ("results.json", "run_metadata.yaml"):
                shutil.copy(fixtures / arm / name, run / name)
        pm = load_priority_mix_results(root)
        assert pm.rejected == [] and sorted((r.key.treatment, r.key.workload, r.key.rate) for r in pm.runs) == [
            ("baseline", "priority-mix", 6.0),
            ("evolved", "priority-mix", 6.0),
        ], layout


# --------------------------------------------------------------------------
# README "Layout" and "Contributing" against the tree and the lint test
# --------------------------------------------------------------------------


def test_the_readme_layout_names_every_module_and_package_of_bot():
    """A contributor looks a module up here first: one missing (bot/dictionary.py was) sends them searching."""
    rows = re.findall(r"^\| `([^`]+)`", _section(README.read_text(), "## Layout"), re.M)
    named = {row.rstrip("/") for row in rows}
    bot = PROJECT_ROOT / "bot"
    ours = {
        f"bot/{p.name}"
        for p in bot.iterdir()
        if (p.is_dir() and (p / "__init__.py").is_file()) or (p.suffix == ".py" and p.name != "__init__.py")
    }
    assert sorted(ours - named) == [], "add a row to the README's ## Layout for each"
    events = _section(README.read_text(), "## Layout").split("| `bot/events/` |", 1)[1].split("\n", 1)[0]
    modules = {p.stem for p in (bot / "events").glob("*.py") if p.stem != "__init__"}
    assert sorted(m for m in modules if f"`{m}`" not in events) == []
    assert "one module per event" not in events


def test_contributing_states_the_rules_the_tests_hold():
    """pyproject.toml points here for module size; the 600-line cap, the layers and ruff are what the tests hold."""
    from tests.workflows import test_lint

    text = _section(README.read_text(), "## Contributing")
    assert "600 lines" in text and "tests/workflows/test_lint.py" in text
    assert test_lint.test_every_module_we_write_stays_under_600_lines.__name__ in text
    assert "entry" in text and "→ model" in text and "ruff" in text
    for needed in ("bot/github/commands.py", "bot/events/comments.py", "dictionary/map-b-signals.yaml"):
        assert needed in text
    pyproject = (PROJECT_ROOT / "pyproject.toml").read_text()
    assert 'README\'s "Contributing" section' in pyproject and "style notes" not in pyproject
