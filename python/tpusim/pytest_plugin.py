"""A pytest plugin that makes each tpusim scenario file a test.

Enable it with `-p tpusim.pytest_plugin` (or `pytest_plugins =
["tpusim.pytest_plugin"]` in a conftest.py) and point pytest at the scenario
directories:

    pytest -p tpusim.pytest_plugin scenarios/ --tpusim-golden-dir golden

Every `*.yaml` file pytest visits that is a scenario (a top-level `module:`
key, docs/scenarios.md) becomes one test item, run by `tpusim run FILE` in its
own process; the item fails with tpusim's messages when the scenario fails,
is stale or cannot be loaded. pytest's own options (-k, -x, -n with xdist,
--junitxml) then apply to scenarios like to any test.
"""

import os
import re

import pytest

import tpusim

_MODULE_KEY = re.compile(r"^module\s*:", re.MULTILINE)


def pytest_addoption(parser):
    group = parser.getgroup("tpusim", "tpusim scenarios")
    group.addoption("--tpusim-golden-dir", metavar="DIR",
                    help="root of the golden store (tpusim run --golden-dir)")
    group.addoption("--tpusim-update-golden", action="store_true",
                    help="write each scenario's golden instead of comparing (tpusim run "
                         "--update-golden)")
    group.addoption("--tpusim-binary", metavar="PATH",
                    help="the tpusim executable (default: $TPUSIM, then tpusim on the PATH)")


def pytest_collect_file(parent, file_path):
    if file_path.suffix != ".yaml":
        return None
    try:
        text = file_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not _MODULE_KEY.search(text):
        return None  # not a scenario: a study, a validation suite, any other YAML
    return ScenarioFile.from_parent(parent, path=file_path)


class ScenarioFile(pytest.File):
    def collect(self):
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioFailed(Exception):
    """A scenario that tpusim reported as failed, stale or in error."""


class ScenarioItem(pytest.Item):
    def runtest(self):
        options = self.config.option
        report = tpusim.run(self.path, golden_dir=options.tpusim_golden_dir,
                            update_golden=options.tpusim_update_golden,
                            binary=options.tpusim_binary)
        scenarios = report.data.get("scenarios", [])
        if not scenarios:
            raise ScenarioFailed(f"tpusim ran no scenario from {self.path}")
        bad = [s for s in scenarios if s.get("status") != "pass"]
        if bad or report.returncode != 0:
            lines = []
            for s in bad or scenarios:
                lines.append(f"{s.get('name')}: {s.get('status', 'unknown').upper()}")
                lines += [f"  {m}" for m in s.get("messages", [])]
            raise ScenarioFailed("\n".join(lines))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, (ScenarioFailed, tpusim.TpusimError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"tpusim scenario {os.fspath(self.path)}"
