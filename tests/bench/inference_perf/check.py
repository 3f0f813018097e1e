"""Runs inside a Python 3.12 venv with inference-perf 0.7.0: validate profiles and reports with its own models.

Input (argv[1]): JSON {"profiles": [paths], "reports": [paths], "vendored": {name: path}}.
Output (stdout): JSON {"profiles": {path: error|null}, "reports": {path: error|null}, "vendored": {name: same?}}.
"""

import json
import sys
from pathlib import Path

import yaml
from inference_perf.config import Config
from inference_perf.reportgen.br.v0_2 import schema_v0_2 as v02
from inference_perf.reportgen.br.v0_2.schema_v0_2 import BenchmarkReportV02
from inference_perf.reportgen.br.v0_2.schema_v0_2_1 import BenchmarkReportV021

MODELS = {"0.2": BenchmarkReportV02, "0.2.1": BenchmarkReportV021}


def _err(fn, *a):
    try:
        fn(*a)
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return None


def main():
    job = json.loads(Path(sys.argv[1]).read_text())
    out = {"profiles": {}, "reports": {}, "vendored": {}}
    for p in job["profiles"]:
        out["profiles"][p] = _err(lambda p=p: Config(**yaml.safe_load(Path(p).read_text())))
    for p in job["reports"]:
        doc = yaml.safe_load(Path(p).read_text())
        model = MODELS.get(str(doc.get("version")))
        out["reports"][p] = "unknown version" if model is None else _err(model.model_validate, doc)
    pkg = Path(v02.__file__).parent
    for name, path in job["vendored"].items():
        out["vendored"][name] = (pkg / name).read_bytes() == Path(path).read_bytes()
    print(json.dumps(out))


main()
