"""JSON form of a drift report: ``DriftReport.to_dict()``, for machines."""

from __future__ import annotations

import json
from pathlib import Path

from rocm_fleet.drift.model import DriftReport
from rocm_fleet.drift.writers.atomic import atomic_write_text


def render_json(report: DriftReport) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def write_json(report: DriftReport, path: str | Path) -> Path:
    return atomic_write_text(path, render_json(report))


def read_json(path: str | Path) -> DriftReport:
    return DriftReport.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
