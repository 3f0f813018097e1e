"""The corpus README's promotion templates (examples/corpus/promote/): each loads, names a corpus file of its
kind, and its claim becomes a hypothesis the benchmark decides (a02's ttft_p95_ms once had no metric)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.hypotheses import generate_hypotheses
from bot.hypotheses.generate import claim_metric
from bot.model import PolicyKind, PromotionRequest, Track

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "corpus"
TEMPLATES = sorted((CORPUS / "promote").glob("*.yaml"))


def test_one_template_per_kind_named_in_the_readme():
    readme = (CORPUS / "README.md").read_text()
    kinds = {PromotionRequest.load(t).kind.value for t in TEMPLATES}
    assert kinds == {"routing", "admission", "scheduling"}
    for t in TEMPLATES:
        assert f"promote/{t.name}" in readme, t.name
    assert "make_sample_reports.py --request examples/corpus/promote/a02-admission.yaml" in readme


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.stem)
def test_template_loads_and_names_a_corpus_file_of_its_kind(template):
    req = PromotionRequest.load(template)
    manifest = {i["file"]: i for i in yaml.safe_load((CORPUS / "manifest.yaml").read_text())["inputs"]}
    entry = manifest[Path(req.source).name]
    assert req.source_path.resolve().parent == CORPUS
    assert entry["kind"] == req.kind.value and entry["expect"] == "translates"
    for claim in req.claims:
        assert claim_metric(claim).short is not None, claim.metric  # every template claim is benchmarked


def test_a02_template_claim_on_ttft_p95_is_decided_by_the_benchmark(summary, dictionary):
    req = PromotionRequest.load(CORPUS / "promote" / "a02-admission.yaml")
    assert "SaturationShedder" in req.source_text
    admitter = summary.model_copy(update={"kind": PolicyKind.ADMISSION, "plugin_type": req.plugin_type})
    a = [h for h in generate_hypotheses(req, admitter, dictionary) if h.track is Track.A]
    assert [h.prediction.metric for h in a] == ["ttft_p95"]
