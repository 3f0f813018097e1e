"""A local rehearsal whose promotion.yaml is edited between runs: the same rules as an edited issue on GitHub."""

from __future__ import annotations

import shutil

import pytest

from bot.cli import main
from bot.model import PipelineState
from tests.conftest import EXAMPLE

pytestmark = pytest.mark.slow


def test_an_edit_no_finished_stage_read_goes_on_where_the_promotion_stands(tmp_path, capsys):
    """It used to stop with "use a new --work directory" for any edit, a changed title included."""
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("results"))
    request = example / "promotion.yaml"
    work = tmp_path / "work"
    common = ["--work", str(work), "--quiet", "--fork", str(tmp_path / "fork")]
    assert main(["run", str(request), *common]) == 0
    at_gate_1 = PipelineState.model_validate_json((work / "state.json").read_text())
    assert at_gate_1.open_gate == 1 and at_gate_1.request_parts

    text = request.read_text()
    request.write_text(text.replace("title: Evolved adaptive", "title: Retitled evolved adaptive", 1))
    assert main(["run", str(request), *common]) == 0
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.open_gate == 1 and state.stages == at_gate_1.stages and state.audit[-1].event == "request updated"
    assert "--work directory" not in capsys.readouterr().err
