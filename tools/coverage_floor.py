"""Line coverage of plugins/ and src/ from a coverage data file, per area, failing below each area's floor.

    .venv/bin/python tools/coverage_floor.py .cache/coverage

tests/run-all runs it after the tests beside the lab stream, which collect the data (pytest --cov). The floors
sit just under what that stream covered on a clean clone of 4e42c97, after plugins/module_utils moved into packages
(plugins/ 92.2%, module_utils 92.5%, plugin_utils 94.8%, src/ 81.5%); before the move the unit tests alone covered
module_utils 92.4%, plugins/ 91.7%, src/ 72.9% (f1f7924). Coverage may rise, never fall. Exit 1 below a floor.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import coverage

REPO = Path(__file__).resolve().parents[1]
# Area -> lowest acceptable percentage of its lines run by the tests.
FLOORS = {
    "plugins": 92.0,
    "plugins/module_utils": 92.3,
    "plugins/plugin_utils": 94.5,
    "src": 80.5,
}


def area_totals(data_file: Path) -> dict[str, tuple[int, int]]:
    """{area: (statements, missed)} for every area of FLOORS, from ``data_file``."""
    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    totals = {area: [0, 0] for area in FLOORS}
    for measured in cov.get_data().measured_files():
        path = Path(measured).resolve()
        if not path.is_relative_to(REPO) or not path.exists():
            continue
        relative = path.relative_to(REPO).as_posix()
        _, statements, _, missing, _ = cov.analysis2(str(path))
        for area in FLOORS:
            if relative.startswith(area + "/"):
                totals[area][0] += len(statements)
                totals[area][1] += len(missing)
    return {area: (statements, missed) for area, (statements, missed) in totals.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_file", type=Path)
    args = parser.parse_args()
    failed = False
    for area, (statements, missed) in area_totals(args.data_file).items():
        percent = 100.0 * (statements - missed) / statements if statements else 0.0
        low = percent < FLOORS[area]
        failed |= low
        print(f"{area:<24} {statements:>6} lines {missed:>5} missed {percent:6.1f}%  (floor {FLOORS[area]}%)"
              f"{'  BELOW THE FLOOR' if low else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
