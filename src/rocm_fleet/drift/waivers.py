"""Waivers: known exceptions to a compliance check, each with a reason and an expiry date.

A waiver file is YAML, a list of entries (or a mapping with a ``waivers:`` list)::

    - check: ROCM-TOPO-001          # a check ID, or a glob such as ROCM-TOPO-*
      hosts: "gpu-rack2-*:!gpu-rack2-07"  # or a list: [gpu-rack2-*, "!gpu-rack2-07"]
      reason: rack 2 waits for the xGMI bridge swap (TICKET-123)
      expires: 2025-09-30            # last day the waiver holds

Host patterns follow Ansible's syntax: items separated by ``:`` or ``,``;
plain items are unions, ``&item`` intersects, ``!item`` excludes; each item is
an fnmatch glob over the host name and, when group membership is known, over
its group names. A pattern of only exclusions starts from all hosts.

Rules ``apply_waivers`` follows:

* A check with status "fail", "unknown" or "warn" (``WAIVABLE_STATUSES``: every
  finding of a check that ran) can be waived. "error" means the check could
  not run; waiving it would hide a broken check.
* An unexpired matching waiver turns the finding into "waived" (the first one
  in file order wins); the message (the failure, the reason it is unknown, the
  warning) stays.
* When the only matching waivers have expired, the check keeps its status and
  its message starts with "waiver expired on DATE: REASON": an expired waiver
  fails (or stays unknown, or warns).
* A waiver that matched checks on some host but none of them was a finding is
  stale: the exception is gone. It is listed in ``report.stale_waivers`` (and so in
  every form of the report) and changes no status. A waiver that matched no
  check at all is not listed: under ``--limit`` its hosts were not looked at.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import fnmatch
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from rocm_fleet.drift.model import WAIVABLE_STATUSES, AppliedWaiver, DriftReport

ENTRY_KEYS = ("check", "hosts", "reason", "expires")
_PATTERN_SEPARATORS = re.compile(r"[:,]")
_CHECK_GLOB = re.compile(r"^[A-Z0-9*?\[\]!-]+$")


class WaiverError(ValueError):
    """A waiver file that cannot be used; the message names the file, entry and field."""


class _DatesAsTextLoader(yaml.SafeLoader):
    """SafeLoader that leaves dates as text: PyYAML raises a bare ValueError on 2025-13-01,
    which could not name the entry; ``_parse_date`` checks them instead."""


_DatesAsTextLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclasses.dataclass(frozen=True)
class Waiver:
    check: str
    hosts: str | tuple[str, ...]
    reason: str
    expires: datetime.date
    # "waivers.yml entry 3": where a reader finds it to edit or remove it.
    source: str

    @property
    def host_patterns(self) -> list[str]:
        items = [self.hosts] if isinstance(self.hosts, str) else list(self.hosts)
        return [part.strip() for item in items for part in _PATTERN_SEPARATORS.split(item) if part.strip()]

    def expired(self, today: datetime.date) -> bool:
        return today > self.expires

    def matches_check(self, check_id: str) -> bool:
        return fnmatch.fnmatchcase(check_id, self.check)

    def matches_host(self, host: str, groups: Iterable[str] = ()) -> bool:
        return host_pattern_matches(self.host_patterns, host, groups)

    def applied(self) -> AppliedWaiver:
        hosts = self.hosts if isinstance(self.hosts, str) else list(self.hosts)
        return AppliedWaiver(reason=self.reason, expires=self.expires.isoformat(), hosts=hosts)

    def describe(self) -> str:
        hosts = self.hosts if isinstance(self.hosts, str) else ",".join(self.hosts)
        return f"{self.source}: {self.check} on {hosts} (expires {self.expires.isoformat()}): {self.reason}"


def host_pattern_matches(patterns: list[str], host: str, groups: Iterable[str] = ()) -> bool:
    names = [host, *groups]

    def hit(glob: str) -> bool:
        return any(fnmatch.fnmatchcase(name, glob) for name in names)

    included = [item for item in patterns if item[0] not in "!&"]
    if included and not any(hit(item) for item in included):
        return False
    if not included and not any(item.startswith("!") for item in patterns):
        return False
    if not all(hit(item[1:]) for item in patterns if item.startswith("&")):
        return False
    return not any(hit(item[1:]) for item in patterns if item.startswith("!"))


def load_waivers(path: str | Path) -> list[Waiver]:
    path = Path(path)
    try:
        # A SafeLoader subclass: as safe as yaml.safe_load.
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=_DatesAsTextLoader)
    except OSError as exc:
        raise WaiverError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise WaiverError(f"{path}: not valid YAML: {exc}") from exc
    return parse_waivers(document, str(path))


def parse_waivers(document: object, source: str) -> list[Waiver]:
    if document is None:
        return []
    if isinstance(document, Mapping) and set(document) == {"waivers"}:
        document = document["waivers"] or []
    if not isinstance(document, list):
        raise WaiverError(f"{source}: expected a list of waivers (or a mapping with a 'waivers' list)")
    return [_parse_entry(entry, f"{source} entry {number}") for number, entry in enumerate(document, start=1)]


def _parse_entry(entry: object, where: str) -> Waiver:
    if not isinstance(entry, Mapping):
        raise WaiverError(f"{where}: expected a mapping with {', '.join(ENTRY_KEYS)}")
    unknown = sorted(str(key) for key in entry if key not in ENTRY_KEYS)
    if unknown:
        raise WaiverError(f"{where}: field '{unknown[0]}': unknown (fields are {', '.join(ENTRY_KEYS)})")
    for key in ENTRY_KEYS:
        if entry.get(key) in (None, "", []):
            raise WaiverError(f"{where}: field '{key}': required")
    check = entry["check"]
    if not isinstance(check, str) or not _CHECK_GLOB.match(check):
        raise WaiverError(f"{where}: field 'check': {check!r} is not a check ID or glob like ROCM-TOPO-*")
    reason = entry["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise WaiverError(f"{where}: field 'reason': must be a non-empty text")
    return Waiver(
        check=check,
        hosts=_parse_hosts(entry["hosts"], where),
        reason=reason.strip(),
        expires=_parse_date(entry["expires"], where),
        source=where,
    )


def _parse_hosts(hosts: object, where: str) -> str | tuple[str, ...]:
    if isinstance(hosts, str) and hosts.strip():
        return hosts.strip()
    if isinstance(hosts, list) and hosts and all(isinstance(item, str) and item.strip() for item in hosts):
        return tuple(item.strip() for item in hosts)
    raise WaiverError(f"{where}: field 'hosts': expected a host pattern or a list of patterns, got {hosts!r}")


def _parse_date(value: object, where: str) -> datetime.date:
    # Dates arrive as text from load_waivers, as date objects from other YAML loaders.
    if isinstance(value, datetime.datetime):
        value = value.isoformat()
    if isinstance(value, datetime.date):
        return value
    text = str(value).strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return datetime.date.fromisoformat(text)
        except ValueError as exc:
            raise WaiverError(f"{where}: field 'expires': {text!r} is not a date: {exc}") from None
    if re.match(r"\d{4}-\d{2}-\d{2}[ T]", text):
        raise WaiverError(f"{where}: field 'expires': {text!r} has a time; give a date (YYYY-MM-DD)")
    raise WaiverError(f"{where}: field 'expires': {value!r} is not a date (YYYY-MM-DD)")


def apply_waivers(
    report: DriftReport,
    waivers: list[Waiver],
    today: datetime.date,
    host_groups: Mapping[str, Iterable[str]] | None = None,
) -> DriftReport:
    """Return a copy of ``report`` with waivers applied (rules in the module docstring).

    ``report`` is left as it was. Only a host that a waiver matches is copied (deeply: its checks change);
    the others are shared, so a fleet without waivers costs no copy at all.
    """
    host_groups = host_groups or {}
    hosts = dict(report.hosts)
    matched_any: set[int] = set()
    matched_failing: set[int] = set()
    for name, original in report.hosts.items():
        groups = list(host_groups.get(name, ()))
        host = None
        for position, check in enumerate(original.checks):
            matching = [
                index
                for index, waiver in enumerate(waivers)
                if waiver.matches_check(check.id) and waiver.matches_host(name, groups)
            ]
            matched_any.update(matching)
            if check.status not in WAIVABLE_STATUSES or not matching:
                continue
            matched_failing.update(matching)
            if host is None:
                host = hosts[name] = copy.deepcopy(original)
            check = host.checks[position]
            active = [waivers[index] for index in matching if not waivers[index].expired(today)]
            if active:
                check.status = "waived"
                check.waiver = active[0].applied()
                continue
            expired = waivers[matching[0]]
            note = f"waiver expired on {expired.expires.isoformat()}: {expired.reason}"
            check.message = f"{note}; {check.message}" if check.message else note
            check.waiver = expired.applied()
    stale = sorted(matched_any - matched_failing)
    return dataclasses.replace(
        report, hosts=hosts,
        stale_waivers=list(report.stale_waivers) + [_stale_note(waivers[index], today) for index in stale],
    )


def _stale_note(waiver: Waiver, today: datetime.date) -> str:
    state = "expired and " if waiver.expired(today) else ""
    return f"{waiver.describe()} -- {state}no longer needed: no check it covers fails, is unknown or warns"
