"""JSON form of a drift report: ``DriftReport.to_dict()``, for machines.

One line per host and one per check of ``by_check``, so that a thousand-host
report stays small and ``grep``/``less`` show one host at a time; ``jq .``
pretty-prints it whole.
"""

from __future__ import annotations

import json
from pathlib import Path

from rocm_fleet.drift.model import DriftReport
from rocm_fleet.drift.writers.atomic import atomic_write_text

# Top-level keys whose entries go one to a line.
LINE_PER_ENTRY = ("by_check", "hosts")


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_json(report: DriftReport) -> str:
    parts = []
    for key, value in report.to_dict().items():
        if key in LINE_PER_ENTRY and value:
            entries = ",\n".join(f"    {_dumps(name)}: {_dumps(entry)}" for name, entry in value.items())
            parts.append(f"  {_dumps(key)}: {{\n{entries}\n  }}")
        else:
            nested = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            parts.append(f"  {_dumps(key)}: {nested}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_json(report: DriftReport, path: str | Path) -> Path:
    return atomic_write_text(path, render_json(report))


def read_json(path: str | Path) -> DriftReport:
    return DriftReport.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
