"""tools/coverage_floor.py: the line coverage of plugins/ and src/ per area, and the floors CI holds it to."""

from __future__ import annotations

import importlib.util
import runpy
import sys
import warnings
from pathlib import Path

import pytest

# The checkout's .venv has coverage (pytest-cov, a test dependency); the Debian 13 controller root of
# test_newest_ansible_core.py runs tests/unit without it, and tools/coverage_floor.py is the .venv's CI tool.
coverage = pytest.importorskip("coverage")

REPO = Path(__file__).resolve().parents[3]
SPEC = importlib.util.spec_from_file_location("coverage_floor", REPO / "tools" / "coverage_floor.py")
coverage_floor = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(coverage_floor)


MODULE = REPO / "src" / "rocm_fleet" / "lab" / "paths.py"


def measured(tmp_path: Path, run_all: bool) -> Path:
    """A coverage data file in which a module of src/ was run (freshly, whatever is imported already) or not."""
    data = tmp_path / "coverage"
    cov = coverage.Coverage(data_file=str(data), include=[str(MODULE)])
    cov.start()
    if run_all:
        runpy.run_path(str(MODULE))
    cov.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cov.save()
    return data


def test_every_area_of_plugins_and_src_has_a_floor():
    assert {"plugins", "plugins/module_utils", "plugins/plugin_utils", "src"} <= set(coverage_floor.FLOORS)


def test_no_data_is_below_every_floor(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["coverage_floor", str(measured(tmp_path, run_all=False))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "No data was collected": the point of this test
        assert coverage_floor.main() == 1
    assert "src" in capsys.readouterr().out


def test_a_measured_file_counts_in_its_area(tmp_path):
    totals = coverage_floor.area_totals(measured(tmp_path, run_all=True))
    assert totals["src"][0] > 0 and totals["plugins"] == (0, 0)
