"""The hidden markers are built in one module (contributor finding 8).

They were spelled out in seven modules: ``catch_up`` looked for ``promotion-bot:notice:reply-{id}`` by hand while
``Promotion.notice`` owned the format, so a change to one would have made every run answer dropped commands again.
Now ``bot.forge.markers`` builds each, every writer and reader calls it, and the texts are the ones existing issues
carry.
"""

from __future__ import annotations

from bot import PROJECT_ROOT
from bot.forge import markers
from bot.github.state import decode_state, encode_state
from bot.model import PipelineState


def test_no_module_but_markers_spells_a_marker():
    home = PROJECT_ROOT / "bot" / "forge" / "markers.py"
    spelled = [
        f"{p.relative_to(PROJECT_ROOT)}:{i}"
        for p in sorted((PROJECT_ROOT / "bot").rglob("*"))
        if p.is_file() and p != home and p.suffix in (".py", ".j2", ".md", ".yml", ".yaml")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "promotion-bot:" in line
    ]
    assert spelled == [], "build markers with bot.forge.markers, not by hand: " + ", ".join(spelled)


def test_every_marker_is_the_text_existing_issues_carry():
    assert markers.STATUS == "promotion-bot:status"
    assert markers.NEEDS_INFO == "promotion-bot:needs-info"
    assert markers.NOT_INSTALLED == "promotion-bot:not-installed"
    assert markers.FOREIGN_EDIT == "promotion-bot:notice:foreign-edit"
    assert markers.review(2) == "promotion-bot:review-gate-2"
    assert markers.notice("benchmark-7") == "promotion-bot:notice:benchmark-7"
    assert markers.reply(1234) == "promotion-bot:notice:reply-1234" == markers.notice(markers.reply_key(1234))
    assert markers.pr_closed(9, "2026-11-27T10:00:00Z") == "promotion-bot:notice:pr-closed-9-2026-11-27T10:00:00Z"
    assert markers.pr_closed(9, "") == "promotion-bot:notice:pr-closed-9-unknown"
    assert markers.feedback("req-1", "A2") == "promotion-bot:feedback:req-1:A2"


def test_the_state_marker_reads_what_it_wrote_and_what_issues_hold():
    state = PipelineState(request_id="7", request_fingerprint="f", branch="promotion/7-x")
    written = encode_state(state)
    assert written.startswith("<!-- promotion-bot:state v1 ") and written.endswith(" -->")
    assert decode_state(f"checklist\n\n{written}") == state
