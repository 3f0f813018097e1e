"""The translation report says what the deployed EndpointPickerConfig does (consistency findings 1 and 4).

Found by an llm-d reader: for the bundled example, whose config runs the scorer alone with inflight-load-producer,
the report's Map C section said the prefix term was "carried by prefix-cache-scorer", the Signals table called
every EffectiveLoad term scraped and sent the InFlightRequests gap to the metric-staleness hypothesis (which B7
says cannot change it), and the fidelity cause in-flight-counting described a deployment without the producer.
"""

from __future__ import annotations

from bot.golang import harness_build
from bot.golang.generate import generate

from .conftest import EXAMPLE, translate_path


def _row(report: str, signal: str) -> str:
    table = report.split("## Signals")[1].split("## Mapping decisions")[0]
    return next(line for line in table.splitlines() if line.startswith(f"| `{signal}`"))


def test_the_report_follows_the_deployed_config(dictionary):
    _, _, tr = translate_path(EXAMPLE, dictionary)
    assert tr.summary.epp_plugins == ["approx-prefix-cache-producer", "inflight-load-producer"]
    assert "- type: inflight-load-producer" in tr.epp_config and "- type: prefix-cache-scorer" not in tr.epp_config
    report = tr.report_markdown

    gaps = report.split("## Map C gaps touched")[1].split("## Fidelity")[0]
    prefix = next(line for line in gaps.splitlines() if "`prefix-cache-signal`" in line)
    assert "prefix-cache-scorer in the profile" not in prefix and "carried by prefix-cache-scorer" not in prefix
    assert "no prefix-cache-scorer in its profile" in prefix
    pod = next(line for line in gaps.splitlines() if "`pod-health`" in line).split("Track B:")[1]
    assert "deleted mid-benchmark" in pod and "within 10 s" not in pod

    in_flight = _row(report, "InFlightRequests")
    assert "metric-staleness" not in in_flight and "No Track B run condition changes it" in in_flight
    assert "the deployed EndpointPickerConfig runs inflight-load-producer" in in_flight
    load = _row(report, "EffectiveLoad")
    assert "All components scraped" not in load
    assert "InFlightRequests synchronous" in load and "runs inflight-load-producer" in load
    assert "Track B decides it under the `metric-staleness` run condition" in load
    assert "Track B decides it under the `metric-staleness` run condition" in _row(report, "QueueDepth")
    assert "Verify via" not in report and "verify via" not in report


def test_the_in_flight_cause_describes_the_deployed_producer(dictionary):
    src, an, _ = translate_path(EXAMPLE, dictionary)
    gen = generate(src, an, dictionary, "t-best-program")
    assert "inflight-load-producer" in gen.producers
    _, meaning = harness_build.run_plan(an, gen, dictionary)
    why = meaning["in-flight-counting"]["why"]
    assert "gauges do not see requests routed" not in why
    assert "inflight-load-producer counts a request from dispatch" in why
