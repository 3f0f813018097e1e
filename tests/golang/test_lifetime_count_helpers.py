"""hazard.lifetime-count across the receiver's methods: the count kept, grown or returned by a helper method.

Evolved admitters split their state into small methods of the receiver (``a.note(req)``, ``a.remember(tenant)``,
``a.active()``); the count is as much a lifetime count when a helper keeps it, and as little of one when a helper
resets it, deletes from the map, or caps it.
"""

from __future__ import annotations

import pytest

from bot.golang import lifetime_count
from tests.golang.conftest import FIXTURES

LIFETIME = FIXTURES / "lifetime"


def lifetime(an):
    return [f for f in an.findings if f.check == lifetime_count.CHECK]


def analyze_fixture(analyze_text, name: str, edit=lambda text: text):
    return analyze_text(edit((LIFETIME / name).read_text()), name)


@pytest.mark.parametrize(
    ("name", "line", "decides_on"),
    [
        # `a.seen++` in note(), called from Admit; Admit compares `a.seen > 500`
        ("helper_counter.go", 26, "`a.seen`, a receiver counter"),
        # Admit compares `a.active() > 4`, and active() returns len(a.tenants)
        ("helper_len.go", 25, "`a.active()` (`len(a.tenants)`, returned by `active`), the number of distinct TenantID"),
        # the map is written in remember(req.TenantID) and deleted nowhere; Admit divides by its len
        ("helper_map_write.go", 29, "`len(a.tenants)`, the number of distinct TenantID"),
    ],
)
def test_a_count_a_helper_method_keeps_is_found_at_the_decision(analyze_text, name, line, decides_on):
    [f] = lifetime(analyze_fixture(analyze_text, name))
    assert f.source_line == line and f"decides on {decides_on}" in f.message, f


def test_a_counter_a_helper_returns_is_found_where_it_is_compared(analyze_text):
    def through_count(text: str) -> str:
        text = text.replace("if a.seen > 500", "if a.count() > 500")
        return (
            text
            + "\n// count is how many requests it has seen.\nfunc (a *WarmupAdmission) count() int {\n\treturn a.seen\n}\n"
        )

    [f] = lifetime(analyze_fixture(analyze_text, "helper_counter.go", through_count))
    assert f.source_line == 26 and "decides on `a.count()` (`a.seen`, returned by `count`)" in f.message, f
    assert "(line 15)" in f.message  # the increment, in note()


def test_a_helper_returning_a_helper_that_returns_the_count_carries_it(analyze_text):
    def chained(text: str) -> str:
        text = text.replace("if a.active() > 4", "if a.crowd() > 4")
        return text + "\nfunc (a *TenantCrowdAdmission) crowd() int {\n\tn := a.active()\n\treturn n\n}\n"

    [f] = lifetime(analyze_fixture(analyze_text, "helper_len.go", chained))
    assert f.source_line == 25 and "`a.crowd()` (`len(a.tenants)`, returned by `crowd`)" in f.message, f


@pytest.mark.parametrize(
    "name",
    [
        "helper_counter_reset.go",  # roll() sets `a.seen = 0` every 10 s
        "helper_map_delete.go",  # forget() deletes the tenants silent for a minute
        "helper_len_capped.go",  # `if a.active() < 64 { a.tenants[...]++ }`: at most 64 tenants
    ],
)
def test_a_helper_that_resets_deletes_or_caps_clears_the_count(analyze_text, name):
    assert not lifetime(analyze_fixture(analyze_text, name))


def test_a_cap_in_the_writing_helper_clears_it_and_one_the_host_returns_on_decides_on_it(analyze_text):
    saturating = "\tif a.seen < 1000 {\n\t\ta.seen++\n\t}\n"
    an = analyze_fixture(analyze_text, "helper_counter.go", lambda t: t.replace("\ta.seen++\n", saturating))
    assert not lifetime(an)
    # a return from Admit past the cap is the decision itself: once 64 tenants ever came, every request is
    # admitted and the crowd rule skipped, until the EPP restarts (test_lifetime_count_caps: the rejecting form)
    early = '\tif a.active() >= 64 {\n\t\treturn true, ""\n\t}\n\ta.tenants[req.TenantID]++\n'
    capped = "\tif a.active() < 64 {\n\t\ta.tenants[req.TenantID]++\n\t}\n"
    [f] = lifetime(analyze_fixture(analyze_text, "helper_len_capped.go", lambda t: t.replace(capped, early)))
    assert f.source_line == 24 and "decides on `a.active()`" in f.message and "until the EPP restarts" in f.message
    # a guard with another clause that still needs the count below 64 caps it; one any request passes does not
    both = '\tif a.active() < 64 && req.SLOClass == "sheddable" {\n\t\ta.tenants[req.TenantID]++\n\t}\n'
    assert not lifetime(analyze_fixture(analyze_text, "helper_len_capped.go", lambda t: t.replace(capped, both)))
    either = '\tif a.active() < 64 || req.SLOClass == "critical" {\n\t\ta.tenants[req.TenantID]++\n\t}\n'
    assert lifetime(analyze_fixture(analyze_text, "helper_len_capped.go", lambda t: t.replace(capped, either)))


def test_the_sequence_screen_sees_a_count_kept_by_a_helper(analyze_text):
    """sequences.choose never asserts a row decided otherwise without its long-gone requests: the screen applies
    (``<sequence>:<spacing>:recent`` candidates) when the count is found through a helper too. A searched
    candidate whose earlier requests are 100 s apart keeps its spacing, past what a windowed count remembers."""
    from bot.golang import sequences
    from bot.golang.probe_inputs import PROBE, make_endpoint, make_request, make_state
    from bot.golang.probes import ADMISSION_POOLS

    eps = [make_endpoint(PROBE, dict(ADMISSION_POOLS["idle"]))]
    warm = [make_request(priority=-1, tenant=f"tenant-{k}", rid=f"w-{k}") for k in range(6)]
    searched = [{"role": "threshold", "candidates": [make_state(eps, make_request(priority=-1), warm, 100_000_000)]}]

    def recent(name: str) -> list[str]:
        an = analyze_fixture(analyze_text, name)
        [spec] = sequences.sequence_specs("admission", True, an, {}, searched)
        return [label.split(":", 1)[1] for label in spec["labels"] if label.endswith(":" + sequences.RECENT)]

    assert recent("helper_len.go") == ["100000000:recent"]
    assert recent("helper_map_write.go") == ["100000000:recent"]
    assert recent("helper_len_capped.go") == []
