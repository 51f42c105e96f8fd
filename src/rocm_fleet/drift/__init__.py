"""Nightly drift check: what every host differs in from what the inventory declares.

``model`` holds the report, ``waivers`` excuses known exceptions, ``writers``
turns a report into JSON, JUnit XML, HTML and a Prometheus textfile, and
``summary`` prints the short per-host lines at the end of a run.
"""

from rocm_fleet.drift.model import (
    EXIT_CANNOT_RUN,
    EXIT_DRIFT,
    EXIT_OK,
    EXIT_UNREACHABLE,
    AppliedWaiver,
    Change,
    CheckResult,
    DriftReport,
    GpuSummary,
    HostResult,
    RunInfo,
    exit_code,
)
from rocm_fleet.drift.schema import ReportFormatError

__all__ = [
    "EXIT_CANNOT_RUN",
    "EXIT_DRIFT",
    "EXIT_OK",
    "EXIT_UNREACHABLE",
    "AppliedWaiver",
    "Change",
    "CheckResult",
    "DriftReport",
    "GpuSummary",
    "HostResult",
    "ReportFormatError",
    "RunInfo",
    "exit_code",
]
