"""Impossible values in a request are refused by the model, naming the field, before anything is planned."""

from __future__ import annotations

import pytest
import yaml

from bot.cli import main
from bot.model import Hypothesis, PromotionRequest, RequestError
from tests.conftest import EXAMPLE, REQUEST, git


def _request(tmp_path, mutate) -> str:
    doc = yaml.safe_load(REQUEST.read_text())
    mutate(doc)
    (tmp_path / "best_program.py").write_text((EXAMPLE / "best_program.py").read_text())
    path = tmp_path / "promotion.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _set_rate(value):
    def mutate(doc):
        doc["workloads"][0]["rates"] = [value]

    return mutate


BAD = [
    (_set_rate(-5), "workloads.0.rates.0", "greater than 0"),
    (_set_rate(0), "workloads.0.rates.0", "greater than 0"),
    (_set_rate(float("nan")), "workloads.0.rates.0", "finite number"),
    (_set_rate(float("inf")), "workloads.0.rates.0", "finite number"),
    (lambda d: d["workloads"][0].update(rates=[20, 35, 20]), "workloads.0.rates", "20 is listed twice"),
    (lambda d: d["workloads"][0].update(duration_s=0), "workloads.0.duration_s", "greater than 0"),
    (lambda d: d["workloads"][0].update(duration_s=10**7), "workloads.0.duration_s", "less than or equal to 86400"),
    (lambda d: d["baselines"][0].update(rate=-1), "baselines.0.rate", "greater than 0"),
    (lambda d: d["baselines"][0].update(rate=float("nan")), "baselines.0.rate", "finite number"),
    (lambda d: d["claims"][0].update(rate=0), "claims.0.rate", "greater than 0"),
    (lambda d: d["claims"][0].update(rate=float("inf")), "claims.0.rate", "finite number"),
    (lambda d: d["claims"][0].update(magnitude=float("nan")), "claims.0.magnitude", "finite number"),
    (lambda d: d["claims"][0].update(magnitude=-1.5), "claims.0.magnitude", "greater than -1"),
    (lambda d: d["claims"][0].update(magnitude=0.24), "claims.0", "contradicts direction 'decrease'"),
    (lambda d: d["origin"].update(fitness=float("-inf")), "origin.fitness", "finite number"),
]


@pytest.mark.parametrize(("mutate", "field", "message"), BAD, ids=[f"{b[1]}:{b[2]}" for b in BAD])
def test_impossible_values_name_the_field(tmp_path, mutate, field, message):
    with pytest.raises(RequestError) as exc:
        PromotionRequest.load(_request(tmp_path, mutate))
    assert f"field '{field}'" in str(exc.value) and message in str(exc.value), str(exc.value)


@pytest.mark.parametrize("value", ["-5", "0", ".nan", ".inf"])
def test_run_refuses_an_impossible_rate_before_touching_the_fork(tmp_path, capsys, value):
    doc_text = REQUEST.read_text().replace("rates: [20, 35]", f"rates: [{value}, 35]")
    (tmp_path / "best_program.py").write_text((EXAMPLE / "best_program.py").read_text())
    (tmp_path / "promotion.yaml").write_text(doc_text)
    fork = tmp_path / "fork"
    code = main(
        ["run", str(tmp_path / "promotion.yaml"), "--work", str(tmp_path / "w"), "--fork", str(fork), "--quiet"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "field 'workloads.0.rates.0'" in err, err
    assert not (fork / ".git").exists() or "promotion/" not in git(fork, "branch", "--list")


def test_hypothesis_front_matter_rates_are_positive_and_finite():
    base = {
        "id": "A1",
        "track": "A",
        "title": "t",
        "statement": "s",
        "family": "cross-policy-comparative",
        "vvuq": "validation",
        "type": "statistical/dominance",
        "diagnostic": "If this fails, it would indicate x",
        "workloads": ["w"],
        "source": "c",
    }
    assert Hypothesis.model_validate(base | {"rates": [10.0]}).rates == [10.0]
    for bad in (-1.0, 0.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="rates"):
            Hypothesis.model_validate(base | {"rates": [bad]})


def test_the_bundled_example_still_loads():
    assert PromotionRequest.load(REQUEST).workloads[0].rates == [20.0, 35.0]
