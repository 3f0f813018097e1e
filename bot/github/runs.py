"""GitHub Actions through the client: dispatching a workflow, and the runs it starts (cancel, progress, listing).

A dispatch is not idempotent: a POST GitHub carried out but answered 5xx for (an edge timeout), or whose answer a
dropped connection lost, started a run all the same, and sending it again starts another. The GPU benchmark is
dispatched once per approved commit, so when its dispatch gets no clear answer the bot first looks for the run
it may have started (``live_run``: benchmark.yml's ``run-name`` carries the issue and the commit, which GitHub
shows as the run's ``display_title``) and adopts it; only when GitHub lists none is the dispatch sent again
(bounded, like every call). A run the same event asked GitHub to cancel is never adopted (``skip``): GitHub's
cancel is asynchronous, so the run `/retry 5` replaces still lists as in progress, with the same title, while its
``if: always()`` teardown runs. An error that leaves it open whether a run started says so (``may_have_started``).

``Actions`` is a part of ``bot.github.client.GitHub`` (its ``_call`` and ``repo``), kept here to keep each module
one subject.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from bot.github.errors import GitHubError
from bot.github.records import RunProgress, WorkflowRun, progress_from_json, run_from_json

#: How many of the workflow's newest dispatched runs the bot reads back after an unclear dispatch answer (one
#: page): the run it may have started is among the newest, and a burst of other promotions' runs is rare.
RECENT_RUNS = 30


def benchmark_run_title(issue: int | str, commit: str) -> str:
    """The ``display_title`` GitHub gives the benchmark run of ``issue`` at ``commit``: benchmark.yml's
    ``run-name`` (``benchmark #${{ inputs.issue }} ${{ inputs.commit }}``), so the bot can tell its run apart."""
    return f"benchmark #{issue} {commit}"


def live_run(runs: list[dict[str, Any]], title: str, skip: Collection[int] = ()) -> WorkflowRun | None:
    """The newest run titled ``title`` that has not ended, from a runs listing (newest first), or None.

    Such a run is the one the dispatch started, or one of the same issue and commit the bot lost track of: either
    way the run to wait for, never one to add a second to (benchmark.yml's concurrency group would hold the
    second until the first ended, then run the same benchmark again). A run that ended is not adopted, nor one in
    ``skip``: the runs this event asked GitHub to cancel (`/retry 5`'s), which stay in progress for a while after
    GitHub accepted the cancel, and which the dispatch is meant to replace."""
    for run in runs:
        found = run.get("id")
        if (
            run.get("display_title") == title
            and run.get("status") != "completed"
            and isinstance(found, int)
            and found not in skip
        ):
            return WorkflowRun(found, str(run.get("html_url") or ""))
    return None


def untitled(runs: list[dict[str, Any]], title: str) -> bool:
    """Whether a run that has not ended carries no benchmark title at all: a benchmark.yml without ``run-name``
    (copied before it had one) names no issue, so such a run may be the dispatch's, and nobody can tell."""
    prefix = title.split("#", 1)[0] + "#"
    return any(
        run.get("status") != "completed" and not str(run.get("display_title") or "").startswith(prefix) for run in runs
    )


class Actions:
    """Workflow dispatch and runs, for ``GitHub`` (which provides ``_call``, ``repo`` and ``cancelled_runs``)."""

    def dispatch(
        self, workflow: str, ref: str, inputs: dict[str, str], *, title: str = "", skip: Collection[int] = ()
    ) -> WorkflowRun | None:
        """Start ``workflow`` at ``ref``; the run it started when GitHub names it (None: an older GHES, 204).

        With ``title`` (the run's ``display_title``, ``benchmark_run_title``), an unclear answer (5xx, a dropped
        connection) is followed by a look at the workflow's runs: a live run with that title is adopted (never one
        in ``skip``, the runs the event cancelled: ``cancelled_runs``), and the dispatch is sent again only when
        there is none. Without it (the bot's own continuation, which a second
        copy only repeats harmlessly) it is sent again; its failure then says a run may have started."""
        what = f"POST dispatch {workflow}"

        def post() -> WorkflowRun | None:
            _, data = self.gh.requester.requestJsonAndCheck(
                "POST",
                f"{self.repo().url}/actions/workflows/{workflow}/dispatches",
                input={"ref": ref, "inputs": inputs, "return_run_details": True},
            )
            return run_from_json(data)

        def recover() -> WorkflowRun | None:
            try:
                runs = self.recent_runs(workflow)
            except GitHubError as exc:
                raise GitHubError(
                    f"{what}: GitHub gave no clear answer, and then listing the workflow's runs failed too ({exc}), "
                    "so the bot cannot tell whether the run started",
                    exc.status,
                    may_have_started=True,
                ) from None
            found = live_run(runs, title, skip)
            if found is None and untitled(runs, title):
                raise GitHubError(
                    f"{what}: GitHub gave no clear answer, and a run of {workflow} without the issue in its title "
                    f"is queued or running (its file has no `run-name`: copy it from the promotion bot again), so "
                    "the bot cannot tell whether it is this dispatch's run",
                    may_have_started=True,
                )
            return found

        try:
            return self._call(what, post, write=bool(title), recover=recover if title else None)
        except GitHubError as exc:
            if not title and (exc.status is None or exc.status >= 500):
                exc.may_have_started = True  # a 5xx or a dropped connection after the POST went out
            raise

    def recent_runs(self, workflow: str) -> list[dict[str, Any]]:
        """The newest dispatched runs of ``workflow`` (GitHub lists newest first), as GitHub's JSON."""

        def get() -> list[dict[str, Any]]:
            _, data = self.gh.requester.requestJsonAndCheck(
                "GET",
                f"{self.repo().url}/actions/workflows/{workflow}/runs",
                parameters={"event": "workflow_dispatch", "per_page": RECENT_RUNS},
            )
            runs = (data or {}).get("workflow_runs") if isinstance(data, dict) else None
            return [r for r in runs or [] if isinstance(r, dict)]

        return self._call(f"GET runs of {workflow}", get)

    def cancel_run(self, run_id: int) -> bool:
        """Cancel a workflow run: True when GitHub accepted (202), False when it had already finished (409).

        The run is kept in ``cancelled_runs`` whatever GitHub answers: the event wants it over, so a dispatch it
        sends next (`/retry 5`'s) must not take it for its own run (``live_run``)."""
        from github import GithubException

        self.cancelled_runs.add(run_id)

        def post() -> bool:
            try:
                self.gh.requester.requestJsonAndCheck("POST", f"{self.repo().url}/actions/runs/{run_id}/cancel")
            except GithubException as exc:
                if exc.status == 409:  # completed: there is nothing left to cancel
                    return False
                raise
            return True

        return self._call(f"POST cancel run {run_id}", post)

    def run_progress(self, run_id: int) -> RunProgress:
        """Where workflow run ``run_id`` is now: a benchmark run GitHub cancelled (a newer run displaced it in its
        concurrency group) or that failed publishes nothing, and nobody would tell the bot."""

        def get() -> RunProgress:
            _, data = self.gh.requester.requestJsonAndCheck("GET", f"{self.repo().url}/actions/runs/{run_id}")
            return progress_from_json(data)

        return self._call(f"GET run {run_id}", get)

    def workflow_files(self) -> dict[str, str]:
        """Every workflow file of the repository, path -> state (active, disabled_fork, ...: a fork's start
        disabled), across all pages of GitHub's listing (30 to a page by default; repositories have more)."""

        def get() -> dict[str, str]:
            return {w.path: w.state or "active" for w in self.repo().get_workflows()}

        return self._call("GET workflows", get)
