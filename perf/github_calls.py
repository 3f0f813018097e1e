"""Count the REST calls each handled GitHub event costs, through the fake GitHub, and print the worst case.

GITHUB_TOKEN allows 1,000 REST requests per hour per repository; the target is
at most 30 calls per handled event, so a promotion's events never come near it.
The script files the bundled example as an issue on the fake (tests/github),
decides the three gates with a label, commands and a label again, lets the GPU
stand-in answer stage 5, then replays every event (a workflow re-run), and
prints one line per workflow run: the event, what the bot did, its REST calls.
Exits 1 when the worst case is over the target.

Usage:
    .venv/bin/python perf/github_calls.py [--target 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.github.actions_sim import REPO, standard_sim  # noqa: E402
from tests.github.fake_github import running_fake  # noqa: E402
from tests.github.forms import example_body  # noqa: E402

TITLE = "[promotion] Evolved adaptive weighted scorer (load-delta, session and KV-pressure adjustments)"


def _as(fake, login):
    from github import Auth, Github

    return Github(auth=Auth.Token(fake.token_for(login)), base_url=fake.api_url, retry=None).get_repo(REPO)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=30, help="most REST calls one handled event may cost")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_fake(Path(tmp) / "fake") as fake:
        sim = standard_sim(fake, Path(tmp))
        number = fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
        sim.event("issues", "opened", number, sender="researcher")
        for gate, how in ((1, "label"), (2, "/approve"), (3, "label")):
            if how == "label":
                _as(fake, "maria").get_issue(number).add_to_labels(f"gate-{gate}-approved")
                sim.event("issues", "labeled", number, sender="maria", label=f"gate-{gate}-approved")
            else:
                comment = _as(fake, "maria").get_issue(number).create_comment(how)
                sim.event("issue_comment", "created", number, sender="maria", comment_id=comment.id)
        handled = list(sim.runs)
        replays = [sim.replay(run) for run in handled]

    print(f"{'run':>6}  {'event':<18} {'calls':>5}  what the bot did")
    for run in handled:
        action = run.result.action if run.result else "?"
        print(f"{run.id:>6}  {run.event:<18} {run.calls:>5}  {action[:80]}")
    worst = max(handled, key=lambda r: r.calls)
    worst_replay = max(r.calls for r in replays)
    print(f"\n{len(handled)} runs for one promotion, {sum(r.calls for r in handled)} REST calls in all")
    print(
        f"worst case: {worst.calls} calls ({worst.event}, run {worst.id}); a replayed run costs at most {worst_replay}"
    )
    ok = worst.calls <= args.target
    print(f"{'OK' if ok else 'FAIL'}: target is at most {args.target} calls per handled event")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
