"""Where each artifact lives on the promotion branch. One place, so stages and reviewers agree."""

from __future__ import annotations

from dataclasses import dataclass

DICTIONARY_DOC = "docs/promotion/translation-dictionary.md"
RUNNER_GO = "cmd/epp/runner/runner.go"


@dataclass(frozen=True)
class PromotionPaths:
    slug: str

    @property
    def docs(self) -> str:
        return f"docs/promotion/{self.slug}"

    @property
    def translation_report(self) -> str:
        return f"{self.docs}/translation-report.md"

    @property
    def translation_json(self) -> str:
        return f"{self.docs}/translation.json"

    @property
    def translation_checks(self) -> str:
        """gofmt/vet/build/test of the plugin and its generated tests, with the hashes of the files checked."""
        return f"{self.docs}/translation-checks.json"

    @property
    def hypotheses_dir(self) -> str:
        return f"{self.docs}/hypotheses"

    @property
    def hypotheses_excluded(self) -> str:
        """The hypotheses a person excluded at gate 2, and why (``bot.hypotheses.document.EXCLUDED_FILE``)."""
        return f"{self.hypotheses_dir}/excluded.json"

    def hypothesis(self, hid: str) -> str:
        return f"{self.hypotheses_dir}/{hid}.md"

    @property
    def benchmarks(self) -> str:
        return f"benchmarks/promotion/{self.slug}"

    @property
    def evaluation_spec(self) -> str:
        return f"{self.benchmarks}/evaluation.yaml"

    @property
    def request_json(self) -> str:
        """The request stage 4 planned for (``bot.bench.experiment``): `promote bench run` and `promote evaluate
        --request` read it from the branch."""
        return f"{self.benchmarks}/request.json"

    @property
    def run_limits(self) -> str:
        """The fixed plan's GPU-minutes, the runner's default cap and the GPU job's time limit (stage 4)."""
        return f"{self.benchmarks}/run-limits.json"

    @property
    def validation_dir(self) -> str:
        return f"{self.docs}/validation"

    @property
    def verdicts_json(self) -> str:
        return f"{self.validation_dir}/verdicts.json"

    @property
    def verdicts_md(self) -> str:
        return f"{self.validation_dir}/verdicts.md"

    @property
    def gpu_time(self) -> str:
        return f"{self.validation_dir}/gpu-time.json"

    @property
    def testbed(self) -> str:
        """What the used benchmark reports ran on (bot.bench.testbed.summarize), for the report's testbed line."""
        return f"{self.validation_dir}/testbed.json"

    @property
    def priority_mix(self) -> str:
        """What stage 5 made of a planned priority mix (bot.stages.mix_validate): runs used per arm, why not."""
        return f"{self.validation_dir}/priority-mix.json"

    @property
    def reports_not_used(self) -> str:
        return f"{self.validation_dir}/reports-not-used.json"

    @property
    def go_checks(self) -> str:
        return f"{self.validation_dir}/go-checks.json"

    @property
    def findings_dir(self) -> str:
        return f"{self.docs}/findings"

    def findings(self, hid: str) -> str:
        return f"{self.findings_dir}/{hid}.md"

    @property
    def report(self) -> str:
        return f"{self.docs}/report.md"

    def epp_config(self, plugin_type: str) -> str:
        return f"deploy/config/{plugin_type}-epp-config.yaml"
