"""Data model of one drift run: what every host differs in from the inventory.

The JSON form of a report is exactly ``DriftReport.to_dict()``; ``from_dict``
reads it back and rejects anything that does not fit, so a report written by
one version is either understood by another or refused with a reason.

The JSON form leads with what is wrong and stays small at fleet scale (schema 3):
every check that is not a clean pass keeps its full detail; a passed check is
only its ID in the host's ``passed`` list (its title is in ``by_check``, the
fleet's view per check: counts and the hosts with a finding); a compliant
host's GPU summary leaves out the link matrix its passed topology check saw.
Read back, a passed check has no expected or actual value.

A host's status is derived, never stored independently: the engine marks a
host unreachable or errored (with a reason in ``error``); otherwise the checks
and the pending changes decide between "drift", "unverified" and "compliant".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from rocm_fleet.drift.schema import ReportFormatError, require, require_choice

# 2: a change is named by its object's label, no longer by a task's name. The check statuses
# "unknown" and "warn", the host status "unverified" and their summary counts came later without a
# bump: a report without them reads as before (SUMMARY_ADDED), and an older reader refuses a report
# that has them by naming the status it does not know.
# 3: a passed check is only its ID in the host's "passed" list; "by_check" is new; a compliant host's
# gpu has no link_type. Schema 2 reports still read (every check in full in "checks").
SCHEMA_VERSION = 3
READABLE_SCHEMAS = (2, 3)

# unverified: reached, nothing differs, but a check could not be measured ("unknown"): not compliant.
HOST_STATUSES = ("compliant", "drift", "unreachable", "error", "unverified")
# skipped: does not apply on this host now (a GPU check while amdgpu is not loaded).
# unknown: should be measurable but was not (an N/A counter, EINVAL, a max-uint placeholder, an
#   unreadable file); never a pass, and it keeps a host from being compliant.
# warn: a finding that is reported but does not fail (an unlisted GPU-group member, access not exclusive).
CHECK_STATUSES = ("pass", "fail", "waived", "error", "skipped", "unknown", "warn")
# What node_compliance gives an item: every check status but "waived", which only a waiver makes.
# Mirrors plugins/module_utils/common/status.CHECK_STATUSES, as DRIFT_STATUSES mirrors its DRIFT_STATUSES
# (tests/unit/plugins/module_utils/common/test_status.py keeps them equal): the controller package cannot
# import collection code when installed alone.
ITEM_STATUSES = tuple(status for status in CHECK_STATUSES if status != "waived")
# The check statuses that make a host drift (a check that counts as drift).
DRIFT_STATUSES = ("fail", "error")
# A waiver can excuse these; "error" (the check could not run) never: that would hide a broken check.
WAIVABLE_STATUSES = ("fail", "unknown", "warn")
# The check statuses that are findings: by_check names the hosts with each (a pass or a skip only counts).
FINDING_STATUSES = ("fail", "error", "unknown", "warn", "waived")
# Hosts most in need of a look first: in the HTML page, the printed summary and drift.json.
HOST_ORDER = ("unreachable", "error", "drift", "unverified", "compliant")
# Summary keys added to schema 2 later: a stored summary may lack them only where they are 0.
SUMMARY_ADDED = ("unverified", "unknown_checks", "warnings")
# Mirrors plugins/module_utils/gpu/model.py LINK_TYPES (a test keeps them equal);
# the controller package cannot import collection code when installed alone.
LINK_TYPES = ("SELF", "XGMI", "PCIE", "UNKNOWN")
# Stable check IDs look like ROCM-TOPO-001: upper-case words joined by dashes.
CHECK_ID_PATTERN = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")

EXIT_OK = 0
EXIT_CANNOT_RUN = 1
EXIT_DRIFT = 2
EXIT_UNREACHABLE = 3


@dataclasses.dataclass
class AppliedWaiver:
    """The waiver that excused (or, once expired, failed to excuse) a check."""

    reason: str
    expires: str  # YYYY-MM-DD
    hosts: str | list[str]

    def to_dict(self) -> dict:
        return {"reason": self.reason, "expires": self.expires, "hosts": self.hosts}

    @classmethod
    def from_dict(cls, data: Mapping, where: str) -> AppliedWaiver:
        return cls(
            reason=require(data, "reason", str, where),
            expires=require(data, "expires", str, where),
            hosts=require(data, "hosts", (str, list), where),
        )


@dataclasses.dataclass
class CheckResult:
    id: str
    title: str
    status: str
    expected: Any = None
    actual: Any = None
    message: str = ""
    waiver: AppliedWaiver | None = None
    # What repairs a failed check that no role task does (a reboot, a person); empty when site.yml does.
    repair: str = ""

    def __post_init__(self) -> None:
        if not CHECK_ID_PATTERN.match(self.id):
            raise ReportFormatError(f"check id {self.id!r} does not look like ROCM-AREA-NNN")
        if self.status not in CHECK_STATUSES:
            raise ReportFormatError(f"check {self.id}: status {self.status!r} is not one of {CHECK_STATUSES}")

    @property
    def counts_as_drift(self) -> bool:
        return self.status in DRIFT_STATUSES

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "expected": self.expected,
            "actual": self.actual,
            "message": self.message,
            "repair": self.repair,
            "waiver": self.waiver.to_dict() if self.waiver else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping, where: str) -> CheckResult:
        waiver = require(data, "waiver", Mapping, where, optional=True)
        values = {
            "id": require(data, "id", str, where),
            "title": require(data, "title", str, where),
            "status": require_choice(data, "status", CHECK_STATUSES, where),
            "expected": data.get("expected"),
            "actual": data.get("actual"),
            "message": require(data, "message", str, where),
            "repair": require(data, "repair", str, where),
            "waiver": AppliedWaiver.from_dict(waiver, f"{where}.waiver") if waiver is not None else None,
        }
        try:
            return cls(**values)
        except ReportFormatError as exc:
            raise ReportFormatError(f"{where}: {exc}") from None


@dataclasses.dataclass
class Change:
    """One managed object that ``ansible-playbook site.yml --check`` would change.

    ``label`` is the role's label for the object (``kernel: kernel.numa_balancing=0``),
    which the task applying it prints as its loop item: one name in both outputs.
    """

    label: str
    action: str
    role: str | None = None
    diff: str = ""

    def to_dict(self) -> dict:
        return {"label": self.label, "role": self.role, "action": self.action, "diff": self.diff}

    @classmethod
    def from_dict(cls, data: Mapping, where: str) -> Change:
        return cls(
            label=require(data, "label", str, where),
            role=require(data, "role", str, where, optional=True),
            action=require(data, "action", str, where),
            diff=require(data, "diff", str, where),
        )


@dataclasses.dataclass
class GpuSummary:
    count: int
    products: list[str]
    link_type: list[list[str]] | None = None
    numa_affinity: list | None = None

    def __post_init__(self) -> None:
        if self.link_type is None:
            return
        size = len(self.link_type)
        for row_number, row in enumerate(self.link_type):
            if not isinstance(row, list) or len(row) != size:
                raise ReportFormatError(f"gpu.link_type row {row_number}: not a row of a {size}x{size} matrix")
            unknown = [cell for cell in row if cell not in LINK_TYPES]
            if unknown:
                raise ReportFormatError(f"gpu.link_type row {row_number}: unknown link type {unknown[0]!r}")

    def to_dict(self) -> dict:
        return {
            "count": self.count,
            "products": list(self.products),
            "link_type": self.link_type,
            "numa_affinity": self.numa_affinity,
        }

    @classmethod
    def from_dict(cls, data: Mapping, where: str) -> GpuSummary:
        products = require(data, "products", list, where)
        if not all(isinstance(product, str) for product in products):
            raise ReportFormatError(f"{where}.products: expected a list of strings")
        values = {
            "count": require(data, "count", int, where),
            "products": products,
            "link_type": require(data, "link_type", list, where, optional=True),
            "numa_affinity": require(data, "numa_affinity", list, where, optional=True),
        }
        try:
            return cls(**values)
        except ReportFormatError as exc:
            raise ReportFormatError(f"{where}: {exc}") from None


@dataclasses.dataclass
class HostResult:
    checks: list[CheckResult] = dataclasses.field(default_factory=list)
    changes: list[Change] = dataclasses.field(default_factory=list)
    gpu: GpuSummary | None = None
    reached: bool = True
    # Why the host was unreachable, or why the checks could not run on it.
    error: str | None = None

    @classmethod
    def unreachable(cls, reason: str) -> HostResult:
        return cls(reached=False, error=reason)

    @property
    def status(self) -> str:
        if not self.reached:
            return "unreachable"
        if self.error:
            return "error"
        if self.changes or any(check.counts_as_drift for check in self.checks):
            return "drift"
        if self.unknown_checks:
            return "unverified"
        return "compliant"

    @property
    def failed_checks(self) -> list[CheckResult]:
        return [check for check in self.checks if check.counts_as_drift]

    @property
    def unknown_checks(self) -> list[CheckResult]:
        return [check for check in self.checks if check.status == "unknown"]

    @property
    def warnings(self) -> list[CheckResult]:
        return [check for check in self.checks if check.status == "warn"]

    @property
    def clean(self) -> bool:
        """Compliant and nothing to tell: the HTML page and the printed summary fold it into one line."""
        return self.status == "compliant" and not self.warnings

    def to_dict(self) -> dict:
        gpu = self.gpu.to_dict() if self.gpu else None
        if gpu and self.status == "compliant":  # the passed topology check saw the declared matrix
            gpu["link_type"] = None
        return {
            "status": self.status,
            "error": self.error,
            "checks": [check.to_dict() for check in self.checks if check.status != "pass"],
            "passed": [check.id for check in self.checks if check.status == "pass"],
            "changes": [change.to_dict() for change in self.changes],
            "gpu": gpu,
        }

    @classmethod
    def from_dict(cls, data: Mapping, where: str, titles: Mapping[str, str] | None = None) -> HostResult:
        """``titles`` (check ID -> title, from by_check) makes the "passed" list of schema 3 required."""
        status = require_choice(data, "status", HOST_STATUSES, where)
        gpu = require(data, "gpu", Mapping, where, optional=True)
        passed = []
        if titles is not None:
            for number, check_id in enumerate(require(data, "passed", list, where)):
                if check_id not in titles:
                    raise ReportFormatError(f"{where}.passed[{number}]: {check_id!r} is not in report.by_check")
                passed.append(CheckResult(check_id, titles[check_id], "pass"))
        host = cls(
            checks=[
                CheckResult.from_dict(item, f"{where}.checks[{n}]")
                for n, item in enumerate(require(data, "checks", list, where))
            ] + passed,
            changes=[
                Change.from_dict(item, f"{where}.changes[{n}]")
                for n, item in enumerate(require(data, "changes", list, where))
            ],
            gpu=GpuSummary.from_dict(gpu, f"{where}.gpu") if gpu is not None else None,
            reached=status != "unreachable",
            error=require(data, "error", str, where, optional=True),
        )
        if host.status != status:
            raise ReportFormatError(
                f"{where}.status: says {status!r} but its checks and changes make it {host.status!r}"
            )
        return host


@dataclasses.dataclass
class RunInfo:
    started: str  # ISO 8601, UTC
    finished: str
    inventory: str
    command: str
    rocm_fleet_version: str
    limit: str | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping, where: str = "run") -> RunInfo:
        return cls(
            started=require(data, "started", str, where),
            finished=require(data, "finished", str, where),
            inventory=require(data, "inventory", str, where),
            command=require(data, "command", str, where),
            rocm_fleet_version=require(data, "rocm_fleet_version", str, where),
            limit=require(data, "limit", str, where, optional=True),
        )


@dataclasses.dataclass
class DriftReport:
    run: RunInfo
    hosts: dict[str, HostResult] = dataclasses.field(default_factory=dict)
    # Waivers that matched only passing checks: the exception is gone, the
    # waiver file should lose the entry (see waivers.apply_waivers).
    stale_waivers: list[str] = dataclasses.field(default_factory=list)

    def summary(self) -> dict[str, int]:
        counts = {status: 0 for status in HOST_STATUSES}
        for host in self.hosts.values():
            counts[host.status] += 1
        return {
            "hosts": len(self.hosts),
            **counts,
            "failed_checks": sum(len(host.failed_checks) for host in self.hosts.values()),
            "changes": sum(len(host.changes) for host in self.hosts.values()),
            "unknown_checks": sum(len(host.unknown_checks) for host in self.hosts.values()),
            "warnings": sum(len(host.warnings) for host in self.hosts.values()),
        }

    def host_order(self) -> list[str]:
        """Host names, those most in need of a look first (HOST_ORDER; warnings before clean), then by name."""
        return sorted(self.hosts, key=lambda name: (HOST_ORDER.index(self.hosts[name].status),
                                                    self.hosts[name].clean, name))

    def by_check(self) -> dict[str, dict]:
        """Check ID -> {title, counts: {status: hosts}, hosts: {finding status: [host names]}}.

        Checks with failures or errors first (most hosts first), then by unknowns, warnings, waivers, ID.
        """
        view: dict[str, dict] = {}
        for name in sorted(self.hosts):
            for check in self.hosts[name].checks:
                entry = view.setdefault(check.id, {"title": check.title, "counts": {}, "hosts": {}})
                entry["counts"][check.status] = entry["counts"].get(check.status, 0) + 1
                if check.status in FINDING_STATUSES:
                    entry["hosts"].setdefault(check.status, []).append(name)

        def rank(check_id: str) -> tuple:
            counts = view[check_id]["counts"]
            return (-(counts.get("fail", 0) + counts.get("error", 0)), -counts.get("unknown", 0),
                    -counts.get("warn", 0), -counts.get("waived", 0), check_id)

        return {check_id: view[check_id] for check_id in sorted(view, key=rank)}

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA_VERSION,
            "run": self.run.to_dict(),
            "summary": self.summary(),
            "by_check": self.by_check(),
            "hosts": {name: self.hosts[name].to_dict() for name in self.host_order()},
            "stale_waivers": list(self.stale_waivers),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> DriftReport:
        schema = require(data, "schema", int, "report")
        if schema not in READABLE_SCHEMAS:
            raise ReportFormatError(f"report.schema: version {schema} is not one of {READABLE_SCHEMAS}")
        hosts = require(data, "hosts", Mapping, "report")
        stored_view = require(data, "by_check", Mapping, "report") if schema >= 3 else None
        titles = None
        if stored_view is not None:
            titles = {check_id: require(entry, "title", str, f"report.by_check[{check_id!r}]")
                      for check_id, entry in stored_view.items()}
        report = cls(
            run=RunInfo.from_dict(require(data, "run", Mapping, "report")),
            hosts={name: HostResult.from_dict(host, f"hosts[{name!r}]", titles) for name, host in hosts.items()},
            stale_waivers=list(data.get("stale_waivers") or []),
        )
        if stored_view is not None:
            computed = {check_id: {key: entry[key] for key in ("counts", "hosts")}
                        for check_id, entry in report.by_check().items()}
            stored = {check_id: {key: entry.get(key) for key in ("counts", "hosts")}
                      for check_id, entry in stored_view.items()}
            if stored != computed:
                raise ReportFormatError("report.by_check: does not match the hosts' checks")
        stored = data.get("summary")
        if stored is not None:
            if not isinstance(stored, Mapping):
                raise ReportFormatError(f"report.summary: expected an object, got {stored!r}")
            computed = report.summary()
            # A report written before these counts existed has none of them, and they are 0 there.
            expected = {key: value for key, value in computed.items()
                        if key in stored or key not in SUMMARY_ADDED or value != 0}
            if dict(stored) != expected:
                raise ReportFormatError(f"report.summary: {dict(stored)} does not match the hosts {computed}")
        return report


def exit_code(report: DriftReport) -> int:
    """The command's exit status for a finished run.

    3 when any host was unreachable (it wins: a host nobody could look at is
    the most urgent finding); else 2 when any host drifted or its checks could
    not run there (a per-host "error" is a finding about that host, not a
    failure of the command); else 0. A run that covered no host checked
    nothing, so it is 1, like a run that could not start.

    An "unverified" host (a check could not be measured, nothing differs) and
    warnings do not change it: nothing was found to differ from the inventory,
    and an N/A counter is no reason to repair a host. They are in every report
    form instead (the host status, the summary, rocm_fleet_host_unknown_checks).
    """
    if not report.hosts:
        return EXIT_CANNOT_RUN
    statuses = {host.status for host in report.hosts.values()}
    if "unreachable" in statuses:
        return EXIT_UNREACHABLE
    if statuses & {"drift", "error"}:
        return EXIT_DRIFT
    return EXIT_OK
