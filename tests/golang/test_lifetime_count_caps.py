"""What caps a client-keyed map: a comparison of its length that guards the WRITE, not one that only decides.

``if len(a.tenants) > 4 { return false, "too many tenants" }`` after ``a.tenants[req.TenantID]++`` rejects, but
the write still happens on every request: the map grows without limit (``hazard.unbounded-client-keyed-state``,
and the plugin caps it) and the decision reads every tenant since the EPP started (``hazard.lifetime-count``).
A cap stops the growth: the write inside ``if len(m) < cap``, after ``if len(m) >= cap { return … }``, or a
``delete``/``clear`` once the length passes it.
"""

from __future__ import annotations

import pytest

from bot.golang import hazards, lifetime_count
from tests.golang.conftest import FIXTURES

LIFETIME = FIXTURES / "lifetime"


def checks(an) -> set[str]:
    return {f.check for f in an.findings} & {hazards.UNBOUNDED_STATE, lifetime_count.CHECK}


def analyze_fixture(analyze_text, name: str, edit=lambda text: text):
    return analyze_text(edit((LIFETIME / name).read_text()), name)


def test_a_rejection_on_len_of_a_map_written_on_every_request_is_both_hazards(analyze_text):
    an = analyze_fixture(analyze_text, "len_plain.go")
    [grows] = [f for f in an.findings if f.check == hazards.UNBOUNDED_STATE]
    [count] = [f for f in an.findings if f.check == lifetime_count.CHECK]
    assert grows.source_line == 19 and "`a.tenants[req.TenantID]` adds an entry" in grows.message, grows  # the write
    assert count.source_line == 20 and "decides on `len(a.tenants)`" in count.message, count  # the rejection
    assert an.client_keyed_maps == {"tenants": 19}  # so the plugin caps it (state_caps)


@pytest.mark.parametrize(
    "name",
    [
        "len_guard_capped.go",  # `if len(a.tenants) < 64 { a.tenants[…]++ }`: at most 64 entries
        "len_clear_capped.go",  # `if len(a.tenants) > 1000 { clear(a.tenants) }`: forgets them all past 1000
    ],
)
def test_a_comparison_that_guards_the_write_or_a_clear_past_a_length_is_a_cap(analyze_text, name):
    an = analyze_fixture(analyze_text, name)
    assert not checks(an) and not an.client_keyed_maps


def test_a_delete_once_the_length_passes_a_bound_is_a_cap(analyze_text):
    def deleting(text: str) -> str:
        return text.replace("clear(a.tenants)", "for k := range a.tenants {\n\t\t\tdelete(a.tenants, k)\n\t\t}")

    assert not checks(analyze_fixture(analyze_text, "len_clear_capped.go", deleting))


def test_a_rejection_before_the_write_caps_the_map_but_decides_on_its_first_clients_for_life(analyze_text):
    """``if len(a.tenants) > 4 { return false, … }`` BEFORE the write: a refused tenant is not written, so the map
    stops at 5 entries (no memory hazard; the plugin needs no cap of its own). But nothing deletes: the five are
    the first tenants since the EPP started, and once they have come every request is refused until the EPP
    restarts. The count is bounded, not windowed: the rejection is a decision on a lifetime count."""
    an = analyze_fixture(analyze_text, "len_reject_first.go")
    assert checks(an) == {lifetime_count.CHECK} and not an.client_keyed_maps
    [f] = [f for f in an.findings if f.check == lifetime_count.CHECK]
    assert f.source_line == 19 and "decides on `len(a.tenants)`" in f.message, f
    assert "memory cap" not in f.message and "first" in f.message and "until the EPP restarts" in f.message, f


def test_an_early_return_in_a_helper_that_writes_is_bookkeeping_and_caps_the_count(analyze_text):
    """The same early return in the method that records the tenant only stops the recording: no decision."""

    def remembering(text: str) -> str:
        text = text.replace("\ta.tenants[req.TenantID]++\n", "\ta.remember(req.TenantID)\n")
        return text + (
            "\nfunc (a *TenantLimitAdmission) remember(t string) {\n"
            "\tif len(a.tenants) >= 64 {\n\t\treturn\n\t}\n\ta.tenants[t]++\n}\n"
        )

    assert not checks(analyze_fixture(analyze_text, "len_plain.go", remembering))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("if len(a.tenants) < 64 {", "if len(a.tenants) > 64 {"),  # writes only past 64: grows past it
        ("if len(a.tenants) < 64 {", 'if len(a.tenants) < 64 || req.SLOClass == "critical" {'),  # critical: always
    ],
)
def test_a_guard_that_does_not_keep_the_length_below_a_bound_is_no_cap(analyze_text, old, new):
    an = analyze_fixture(analyze_text, "len_guard_capped.go", lambda t: t.replace(old, new))
    assert checks(an) == {hazards.UNBOUNDED_STATE, lifetime_count.CHECK}


def test_a_guard_with_another_clause_still_caps_and_an_early_return_with_one_does_not(analyze_text):
    both = 'if len(a.tenants) < 64 && req.SLOClass != "sheddable" {'
    an = analyze_fixture(analyze_text, "len_guard_capped.go", lambda t: t.replace("if len(a.tenants) < 64 {", both))
    assert not checks(an)  # written only below 64 (and for some classes): still at most 64 entries

    def early(cond: str):
        return lambda t: t.replace(
            "\tif len(a.tenants) < 64 {\n\t\ta.tenants[req.TenantID]++\n\t}\n",
            f'\tif {cond} {{\n\t\treturn true, ""\n\t}}\n\ta.tenants[req.TenantID]++\n',
        )

    an = analyze_fixture(analyze_text, "len_guard_capped.go", early('len(a.tenants) >= 64 && req.SLOClass == "x"'))
    assert hazards.UNBOUNDED_STATE in checks(an)  # every other class passes the return and is written
    an = analyze_fixture(analyze_text, "len_guard_capped.go", early('len(a.tenants) >= 64 || req.SLOClass == "x"'))
    assert hazards.UNBOUNDED_STATE not in checks(an)  # past 64 every request returns first


def test_a_counter_the_host_returns_on_before_counting_is_a_lifetime_count_too(analyze_text):
    """``if a.seen >= 1000 { return false, … }`` then ``a.seen++``: bounded at 1000, and from the 1000th request
    since the EPP started every request is refused; the same return in the counting helper is bookkeeping."""
    early = '\tif a.seen >= 1000 {\n\t\treturn false, "warm"\n\t}\n\ta.note(req)\n'
    [f] = [
        f
        for f in analyze_fixture(
            analyze_text, "helper_counter.go", lambda t: t.replace("\ta.note(req)\n", early)
        ).findings
        if f.check == lifetime_count.CHECK
    ]
    assert f.source_line == 21 and "decides on `a.seen`" in f.message, f
    in_note = "\tif a.seen >= 1000 {\n\t\treturn\n\t}\n\ta.seen++\n"
    an = analyze_fixture(analyze_text, "helper_counter.go", lambda t: t.replace("\ta.seen++\n", in_note))
    assert not checks(an)
