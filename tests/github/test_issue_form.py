"""The issue form read back: the rendered body becomes the same request as promotion.yaml, or a list of fixes."""

from __future__ import annotations

import re

import pytest

from bot.github.issue_form import FIELDS, FormError, parse_sections, request_from_form, source_reference
from bot.model import PromotionRequest
from tests.github.forms import EXAMPLE, example_body, example_values, render_form, template


def _request(body: str, **kw):
    return request_from_form(
        parse_sections(body, template()),
        number=kw.pop("number", 1),
        title=kw.pop(
            "title", "[promotion] Evolved adaptive weighted scorer (load-delta, session and KV-pressure adjustments)"
        ),
        repository=kw.pop("repository", "example-org/llm-d-router"),
        **kw,
    )


def test_template_and_parser_agree_on_every_field():
    ids = [item["id"] for item in template()["body"] if item["type"] != "markdown"]
    assert ids == list(FIELDS)


def test_the_bundled_example_filed_as_an_issue_is_the_same_request_as_promotion_yaml():
    from_form = _request(example_body())
    from_file = PromotionRequest.load(EXAMPLE / "promotion.yaml")
    exclude = {"source": True, "origin": {"metadata_file"}}
    assert from_form.model_dump(exclude=exclude) == from_file.model_dump(exclude=exclude)
    assert from_form.source_text == from_file.source_text
    assert from_form.branch == "promotion/1-evolved-adaptive-scorer"


def test_sections_are_found_by_label_in_any_order_with_edits_around_them():
    body = example_body()
    head, _, rest = body.partition("### Evolved program\n")
    edited = "(edited: a note above the form)\n\n### Evolved program\n" + rest + "\n" + head
    assert _request(edited).model_dump() == _request(body).model_dump()


def test_checkboxes_are_read_case_insensitively_and_empty_fields_are_no_response():
    fields = parse_sections(example_body().replace("- [X] sanity", "- [x] sanity"), template())
    assert [o.split(":")[0] for o in fields.ticked["baselines"]] == ["optimized-baseline", "sanity-random"]
    assert fields.get("source_ref") == "" and fields.get("fork") == ""


def test_every_problem_is_listed_at_once_with_its_section():
    values = example_values() | {"source": "", "openevolve_run": "", "claims": "- id: [unclosed\n"}
    with pytest.raises(FormError) as exc:
        _request(render_form(values, {"consent": []}))
    problems = exc.value.problems
    assert any(p.startswith("Evolved program: no code was pasted and no reference") for p in problems)
    assert any(p.startswith("OpenEvolve run: give the run name") for p in problems)
    assert any(p.startswith("BLIS claims: not valid YAML at line 1") for p in problems)
    assert any(p.startswith("Before you submit: tick the box") for p in problems)


def test_an_unknown_baseline_checkbox_is_a_problem_to_fix_not_a_crash():
    """An issue body edited by hand, or filed from an older form, can tick an option the template no longer has:
    the author is asked to fix it (needs-info), the workflow does not crash on it."""
    body = example_body().replace("- [X] sanity-random:", "- [X] sanity-randm:")
    with pytest.raises(FormError) as exc:
        _request(body)
    assert exc.value.problems == [
        "Baseline scenarios to guard: unknown option 'sanity-randm'; tick only the listed ones"
    ], exc.value.problems


def test_model_errors_name_the_section_and_the_item():
    values = example_values()
    values["claims"] = values["claims"].replace("workload: load-spikes", "workload: no-such-workload", 1)
    with pytest.raises(FormError, match="BLIS claims: .*'no-such-workload' is not one of workloads"):
        _request(render_form(values, {"consent": [0]}))
    values = example_values() | {"workloads": "- name: Bad Name\n  profile: x\n  rates: [1]\n"}
    with pytest.raises(FormError, match=r"^Workloads: item 1, field 'name'"):
        _request(render_form(values, {"consent": [0]}))


def test_every_model_error_is_listed_with_its_fix_including_a_name_no_workload_has():
    """Three field mistakes and an evolved_for typo in one submission: four fixes in one comment, no "(and N more)"."""
    values = example_values() | {"evolved_for": "load-spike"}
    values["claims"] = values["claims"].replace("direction: decrease", "direction: down", 1)
    values["workloads"] = values["workloads"].replace("rates:", "rats:", 1)
    with pytest.raises(FormError) as exc:
        _request(render_form(values, {"baselines": [0, 1], "consent": [0]}))
    problems = exc.value.problems
    assert not any("more)" in p for p in problems), problems
    assert problems[0].startswith("BLIS claims: item 1, field 'direction'")
    assert any(p.startswith("Workloads: item 1, field 'rates': Field required") for p in problems)
    assert any(p.startswith("Workloads: item 1, field 'rats': unknown field") for p in problems)
    assert any(p.startswith("Workload the program was evolved on: evolved_for: 'load-spike'") for p in problems)
    assert len(problems) == 4


def test_a_pasted_best_program_py_is_read_and_the_form_and_its_docs_say_it_can_be():
    """Found by a maintainer: the form and docs/issue-form.md said best_program.py cannot be pasted; it can."""
    from bot import PROJECT_ROOT

    assert 'GO_ROUTING_CODE = """' in example_values()["source"]
    assert "func " in _request(example_body()).source_text
    [field] = [item for item in template()["body"] if item.get("id") == "source"]
    docs = (PROJECT_ROOT / "docs" / "issue-form.md").read_text(encoding="utf-8")
    for text in (field["attributes"]["description"], docs):
        plain = " ".join(text.replace("`", "").split())
        assert "cannot be pasted" not in plain and re.search(r"best_program\.py (pasted )?as is", plain), plain[:300]


def test_pasted_code_and_a_reference_are_exclusive_and_references_must_pin_a_commit():
    values = example_values() | {"source_ref": "me/blis@" + "a" * 40 + ":out/best_program.py"}
    with pytest.raises(FormError, match="paste the code or give a reference, not both"):
        _request(render_form(values, {"consent": [0]}))
    for bad in ("me/blis@main:out/best_program.py", "me/blis@" + "a" * 40 + ":../../etc/passwd", "me/blis@" + "a" * 40):
        fields = parse_sections(render_form(example_values() | {"source": "", "source_ref": bad}), template())
        with pytest.raises(FormError, match="expected owner/repo@<40-character commit sha>:path"):
            source_reference(fields)
    ok = parse_sections(render_form(example_values() | {"source": "", "source_ref": values["source_ref"]}), template())
    ref = source_reference(ok)
    assert (ref.repo, ref.path) == ("me/blis", "out/best_program.py")
    req = _request(
        render_form(example_values() | {"source": "", "source_ref": str(ref)}),
        source_text=(EXAMPLE / "best_program.py").read_text(),
        source_name=ref.path,
    )
    assert req.source == "out/best_program.py" and "EVOLVE-BLOCK-START" in req.source_text


def test_a_yaml_bomb_in_a_field_is_refused_not_expanded():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    values = example_values() | {"origin": bomb}
    with pytest.raises(FormError, match="OpenEvolve metadata: aliases expand to .* a YAML bomb"):
        _request(render_form(values, {"consent": [0]}))


def test_fork_defaults_to_the_repository_the_issue_is_in():
    req = _request(example_body(), repository="acme/llm-d-router")
    assert req.fork.repo == "acme/llm-d-router" and req.fork.base_branch == "main"
