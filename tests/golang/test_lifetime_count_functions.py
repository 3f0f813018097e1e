"""hazard.lifetime-count (and the unbounded map under it) through a plain function of the file, and a cap that is
another map's.

Evolved code hands the receiver, or one of its maps, to a plain function: ``activeTenants(a)`` returning
``len(a.tenants)``, ``record(a.counts, t)`` doing ``m[k]++``. A map passed by value shares its storage, so the
count is read or grown there as in a method (``receiver_views``, one level of calls). A cap, a length comparison
around the write, bounds the map whose write it guards and no other: a sample capped at 64 leaves the map of every
tenant beside it growing for the EPP's life.
"""

from __future__ import annotations

import pytest

from bot.golang import hazards, lifetime_count
from tests.golang.conftest import FIXTURES

LIFETIME = FIXTURES / "lifetime"


def found(an) -> dict[str, int]:
    """check -> line of each of the two hazards raised."""
    return {f.check: f.source_line for f in an.findings if f.check in (hazards.UNBOUNDED_STATE, lifetime_count.CHECK)}


def analyze_fixture(analyze_text, name: str, edit=lambda text: text):
    return analyze_text(edit((LIFETIME / name).read_text()), name)


def test_a_count_a_plain_function_returns_from_the_receiver_is_found_at_the_decision(analyze_text):
    an = analyze_fixture(analyze_text, "func_len.go")
    [f] = [f for f in an.findings if f.check == lifetime_count.CHECK]
    assert f.source_line == 25, f  # `if activeTenants(a) > 4 && …`
    assert "decides on `activeTenants(a)` (`len(a.tenants)`, returned by `activeTenants`)" in f.message, f


def test_a_map_grown_by_a_plain_function_it_is_passed_to_is_unbounded_and_its_len_a_lifetime_count(analyze_text):
    an = analyze_fixture(analyze_text, "func_map_write.go")
    assert found(an) == {hazards.UNBOUNDED_STATE: 24, lifetime_count.CHECK: 25}
    [grows] = [f for f in an.findings if f.check == hazards.UNBOUNDED_STATE]
    assert "`record(a.counts, req.TenantID)` adds an entry to the receiver map `counts`" in grows.message, grows
    [count] = [f for f in an.findings if f.check == lifetime_count.CHECK]
    assert "decides on `len(a.counts)`" in count.message and "return before the write" not in count.message
    assert an.client_keyed_maps == {"counts": 24}  # so the plugin caps it (state_caps: cleared, written in record)


RECORD = "func record(m map[string]int, k string) {\n\tm[k]++\n}\n"


@pytest.mark.parametrize(
    "record",
    [
        "func record(m map[string]int, k string) {\n\tif len(m) < 64 {\n\t\tm[k]++\n\t}\n}\n",  # capped inside
        # forgets the tenants with few requests once there are many
        (
            "func record(m map[string]int, k string) {\n\tm[k]++\n\tif len(m) > 1000 {\n\t\tfor t, n := range m {\n"
            "\t\t\tif n < 2 {\n\t\t\t\tdelete(m, t)\n\t\t\t}\n\t\t}\n\t}\n}\n"
        ),
    ],
)
def test_a_plain_function_that_caps_or_deletes_from_the_map_it_is_passed_bounds_it(analyze_text, record):
    an = analyze_fixture(analyze_text, "func_map_write.go", lambda t: t.replace(RECORD, record))
    assert found(an) == {} and an.client_keyed_maps == {}


def test_a_plain_function_reassigning_its_map_parameter_resets_only_its_own_copy(analyze_text):
    reset = "func record(m map[string]int, k string) {\n\tm[k]++\n\tif len(m) > 1000 {\n\t\tm = nil\n\t}\n}\n"
    an = analyze_fixture(analyze_text, "func_map_write.go", lambda t: t.replace(RECORD, reset))
    assert found(an) == {hazards.UNBOUNDED_STATE: 27, lifetime_count.CHECK: 28}  # record is 3 lines longer


def test_a_cap_through_a_plain_function_of_the_receiver_bounds_the_map(analyze_text):
    capped = "\tif activeTenants(a) < 64 {\n\t\ta.tenants[req.TenantID]++\n\t}\n"
    an = analyze_fixture(analyze_text, "func_len.go", lambda t: t.replace("\ta.tenants[req.TenantID]++\n", capped))
    assert found(an) == {}

    def given_the_receiver(text: str) -> str:  # record(a, t) writes a.counts[k] only below 64 entries
        text = text.replace("record(a.counts, req.TenantID)", "record(a, req.TenantID)")
        inside = (
            "func record(r *TenantCrowdAdmission, k string) {\n\tif len(r.counts) < 64 {\n\t\tr.counts[k]++\n\t}\n}\n"
        )
        return text.replace(RECORD, inside)

    assert found(analyze_fixture(analyze_text, "func_map_write.go", given_the_receiver)) == {}


def test_a_counter_a_plain_function_grows_or_resets_through_the_receiver_is_followed(analyze_text):
    """``note(a)`` increments ``a.seen`` as ``a.note()`` did; ``roll(a)`` resetting it clears the count."""

    def noting(text: str, also: str = "") -> str:
        text = text.replace("\ta.note(req)\n", "\tnote(a)\n" + also)
        text = text.replace("func (a *WarmupAdmission) note(req *Request) {", "func note(w *WarmupAdmission) {")
        return text.replace("\ta.seen++\n", "\tw.seen++\n")

    [f] = [
        f
        for f in analyze_fixture(analyze_text, "helper_counter.go", noting).findings
        if f.check == lifetime_count.CHECK
    ]
    assert f.source_line == 26 and "decides on `a.seen`" in f.message and "(line 15)" in f.message, f
    roll = "\nfunc roll(w *WarmupAdmission) {\n\tif w.seen > 10000 {\n\t\tw.seen = 0\n\t}\n}\n"
    an = analyze_fixture(analyze_text, "helper_counter.go", lambda t: noting(t, "\troll(a)\n") + roll)
    assert lifetime_count.CHECK not in found(an)


def test_a_cap_bounds_the_map_whose_write_it_guards_and_no_other(analyze_text):
    """``record(a.sample, t)`` under ``if len(a.sample) < 64`` keeps the sample at 64 tenants; ``record(a.counts, t)``
    beside it runs on every request: the same function, the other map, uncapped, and decided on."""
    an = analyze_fixture(analyze_text, "func_cap_other_map.go")
    assert found(an) == {hazards.UNBOUNDED_STATE: 31, lifetime_count.CHECK: 32}
    assert an.client_keyed_maps == {"counts": 31}  # the sample is capped by its guard, so the plugin leaves it

    def direct(text: str) -> str:  # the same written in Admit: the guard on the sample still caps only the sample
        text = text.replace("record(a.sample, req.TenantID)", "a.sample[req.TenantID]++")
        return text.replace("record(a.counts, req.TenantID)", "a.counts[req.TenantID]++")

    an = analyze_fixture(analyze_text, "func_cap_other_map.go", direct)
    assert found(an) == {hazards.UNBOUNDED_STATE: 31, lifetime_count.CHECK: 32}
    assert an.client_keyed_maps == {"counts": 31}


def test_a_map_made_under_another_maps_nil_check_is_made_once_not_reset(analyze_text):
    """``if a.sample == nil { a.sample = make(…); a.counts = make(…) }`` runs on the first request only: no reset of
    ``counts``, which still grows for the EPP's life. Once ``a.sample = nil`` resets the sample, the block remakes
    ``counts`` with it: then it is a reset."""

    def one_check(text: str) -> str:
        text = text.replace("\t}\n\tif a.counts == nil {\n", "")
        return text.replace("record(a.counts, req.TenantID)", "a.counts[req.TenantID]++")

    an = analyze_fixture(analyze_text, "func_cap_other_map.go", one_check)
    assert found(an) == {hazards.UNBOUNDED_STATE: 29, lifetime_count.CHECK: 30}
    reset = "\tif len(a.counts) > 1000 {\n\t\ta.sample = nil\n\t}\n\treturn true"
    an = analyze_fixture(analyze_text, "func_cap_other_map.go", lambda t: one_check(t).replace("\treturn true", reset))
    assert found(an) == {}
