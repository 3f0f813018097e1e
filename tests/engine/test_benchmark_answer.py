"""Whose reports stage 5 takes as the answer of the GPU run it waits for (``branch_history.other_runs``)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from bot.stages.branch_history import other_runs


def _ctx(manifest):
    text = manifest if isinstance(manifest, str) or manifest is None else json.dumps(manifest)
    files = {} if text is None else {"benchmarks/promotion/x/results/manifest.json": text}
    return SimpleNamespace(paths=SimpleNamespace(benchmarks="benchmarks/promotion/x"), read=files.get)


@pytest.mark.parametrize(
    "manifest, waits_for, others",
    [
        ({"runs": [41]}, 42, [41]),  # the run `/retry 5` replaced (older), which GitHub would not cancel
        ({"runs": [40, 41]}, 42, [40, 41]),  # it resumed an older one: still not the new run's
        ({"runs": [42]}, 42, []),  # the run waited for
        ({"runs": [41, 42]}, 42, []),  # the run waited for, resuming an older run's results
        ({"runs": [43]}, 42, []),  # a later run (by hand): the same approved commit, judged as before
        ({"runs": []}, 42, []),  # results made outside Actions: nothing says whose they are
        ({}, 42, []),  # an older bot's manifest
        ({"runs": [41]}, None, []),  # GitHub never named the run waited for
        ({"runs": ["41"]}, 42, []),  # not what the bot writes: stage 5 reads the reports and says what is wrong
        ("not json", 42, []),
        (None, 42, []),  # no manifest on the branch
    ],
)
def test_reports_count_for_the_run_waited_for_unless_only_older_runs_made_them(manifest, waits_for, others):
    assert other_runs(_ctx(manifest), waits_for) == others
