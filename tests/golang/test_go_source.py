"""Input forms, line mapping, EVOLVE markers and unusable input (bot.golang.source)."""

from __future__ import annotations

import pytest

from bot.golang.source import SourceError, load_evolved_source, parse_evolved_source
from bot.model import RequestError

FUNC = """func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	return NewRoutingDecision(state.Snapshots[0].ID, "x")
}
"""


def test_function_form_is_wrapped_and_lines_map_back():
    src = parse_evolved_source(FUNC, "f.go")
    assert src.form == "function"
    assert src.go_text.startswith("package sim\n")
    assert src.to_original_line(2) == 1  # Go line 2 is the first line of the input
    assert not src.tree.root_node.has_error


def test_package_file_with_markers():
    text = "package sim\n\n" + FUNC.replace("\treturn", "\t// EVOLVE-BLOCK-START\n\treturn").replace(
        "\n}\n", "\n\t// EVOLVE-BLOCK-END\n}\n"
    )
    src = parse_evolved_source(text, "routing.go")
    assert src.form == "package-file"
    assert src.evolve_block == (4, 6)


def test_go_file_without_markers():
    src = parse_evolved_source("package sim\n\n" + FUNC, "best_program.go")
    assert src.form == "go-file" and src.evolve_block is None


def test_openevolve_python_maps_lines_to_the_py_file():
    py = (
        '"""doc"""\n\nGO_ROUTING_CODE = """package sim\n\n'
        + FUNC.replace("\treturn", "\t// EVOLVE-BLOCK-START\n\treturn").replace("\n}\n", "\n\t// EVOLVE-BLOCK-END\n}\n")
        + '"""\n'
    )
    src = parse_evolved_source(py, "best_program.py")
    assert src.form == "openevolve-python"
    assert src.code_variable == "GO_ROUTING_CODE"
    assert src.to_original_line(1) == 3  # `GO_ROUTING_CODE = """package sim` is line 3 of the .py file
    assert src.evolve_block == (6, 8)


def test_other_go_code_variable_names_are_accepted():
    src = parse_evolved_source('GO_ADMISSION_CODE = """package sim\n\nfunc f() {}\n"""\n', "p.py")
    assert src.code_variable == "GO_ADMISSION_CODE"


def test_python_without_go_string_is_rejected():
    with pytest.raises(SourceError) as exc:
        parse_evolved_source("print('hello')\n", "program.py")
    assert exc.value.check == "source.not-go"
    assert isinstance(exc.value, RequestError)


def test_non_go_text_is_rejected():
    with pytest.raises(SourceError) as exc:
        parse_evolved_source("name: value\nother: 3\n", "config.yaml")
    assert exc.value.check == "source.not-go"


def test_syntax_error_reports_original_line_and_column():
    bad = "func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {\n\tx := (1 +\n}\n"
    with pytest.raises(SourceError) as exc:
        parse_evolved_source(bad, "bad.go")
    assert exc.value.check == "source.syntax-error"
    assert exc.value.line == 2  # original coordinates, not the wrapped Go's
    assert exc.value.column is not None
    assert "bad.go:2:" in str(exc.value)


def test_two_evolve_blocks_is_an_error_naming_the_second():
    body = "\t// EVOLVE-BLOCK-START\n\tx := 1\n\t// EVOLVE-BLOCK-END\n\t// EVOLVE-BLOCK-START\n\t_ = x\n\t// EVOLVE-BLOCK-END\n"
    with pytest.raises(SourceError) as exc:
        parse_evolved_source("package sim\n\nfunc f() {\n" + body + "}\n", "two.go")
    assert exc.value.check == "source.two-evolve-blocks"
    assert exc.value.line == 7


@pytest.mark.parametrize(
    "body, line",
    [
        ("\t// EVOLVE-BLOCK-END\n\tx := 1\n\t_ = x\n\t// EVOLVE-BLOCK-START\n", 4),  # inverted
        ("\t// EVOLVE-BLOCK-START\n\tx := 1\n\t_ = x\n", 4),  # missing end
    ],
)
def test_broken_markers_are_errors_with_a_line(body, line):
    with pytest.raises(SourceError) as exc:
        parse_evolved_source("package sim\n\nfunc f() {\n" + body + "}\n", "m.go")
    assert exc.value.check == "source.evolve-markers"
    assert exc.value.line == line


def test_binary_file_is_rejected(tmp_path):
    p = tmp_path / "x.go"
    p.write_bytes(b"\x00\x01\x02")
    with pytest.raises(SourceError):
        load_evolved_source(p)


def test_missing_file_is_rejected(tmp_path):
    with pytest.raises(SourceError):
        load_evolved_source(tmp_path / "nope.go")
