"""Track B follows the signals the plugin reads: no freshness hypothesis for a signal nothing in it reads.

Found by a researcher's trial: a router whose evolved block reads only QueueDepth and KVUtilization, beside BLIS's
default scorers (precise-prefix-cache, queue-depth, kv-utilization), got B6 "Map B freshness of InFlightRequests: no
planned run varies it", for a count the plugin read only because every weighted-scoring program was taken to read
what any BLIS scorer might (tests/golang/test_read_signals.py has the translation side).
"""

from __future__ import annotations

from bot.hypotheses import generate_hypotheses
from bot.model import Track
from tests.golang.conftest import FIXTURES, translate_path
from tests.hypotheses.conftest import make_request

BLEND = FIXTURES / "routing_regime_blend.go"


def test_no_track_b_hypothesis_for_a_signal_the_plugin_does_not_read(dictionary):
    _, _, tr = translate_path(BLEND, dictionary, "evolved-regime-blend")
    req = make_request(claims=[], source_text=BLEND.read_text())
    track_b = [h for h in generate_hypotheses(req, tr.summary, dictionary) if h.track is Track.B]
    for h in track_b:
        assert not {"BatchSize", "InFlightRequests", "EffectiveLoad"} & set(h.signals), (h.id, h.signals)
        assert "InFlightRequests" not in h.title and "BatchSize" not in h.title, h.title
    # both signals it reads are scraped gauges: the metric-staleness run decides their freshness, no other
    stale = next(h for h in track_b if h.source == "metric-staleness")
    assert stale.signals == ["KVUtilization", "QueueDepth"]
    assert not [h for h in track_b if h.title.startswith("Map B freshness")]
    # A router's score places a LoRA request whatever it reads, so lora-affinity stays a gap of every router
    # (dictionary Map C: touched by the routing kind); a scheduler or an admitter gets it only when it reads an adapter.
    assert [h.source for h in track_b] == [
        "concurrency-races",
        "lora-affinity",
        "metric-staleness",
        "pd-role-split",
        "pod-health",
    ]
