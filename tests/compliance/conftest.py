"""The compliance suite: one test per host and check, evaluated in one node_compliance call per host.

    pytest tests/compliance --hosts 'ansible://all' --ansible-inventory inventory/lab [--compliance-waivers FILE]

testinfra's ansible backend resolves the hosts; the checks then run once for all
of them through the drift engine (playbooks/drift.yml: the roles' own desired
state plus the GPU class, evaluated in one node_compliance call per host), never a
round trip per check. Waivers excuse known exceptions as in `rocm-fleet drift`; an expired one fails.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from rocm_fleet.drift import engine  # noqa: E402
from rocm_fleet.drift.waivers import apply_waivers, load_waivers  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--compliance-waivers", help="YAML waiver file (check, hosts, reason, expires)")


def _host_names(config) -> list[str]:
    import testinfra

    spec = config.getoption("hosts", None)
    inventory = config.getoption("ansible_inventory", None)
    if not spec or not inventory:
        raise pytest.UsageError("the compliance suite needs --hosts 'ansible://PATTERN' --ansible-inventory INVENTORY")
    hosts = testinfra.get_hosts(spec.split(","), ansible_inventory=inventory)
    return sorted(host.backend.get_hostname() for host in hosts)


def _evaluate(config):
    """Every (host, check) of the hosts --hosts names: run once per session, at collection."""
    if not hasattr(config, "_compliance_checks"):
        names = _host_names(config)
        waivers = load_waivers(config.getoption("compliance_waivers")) if config.getoption("compliance_waivers") else []
        report, groups = engine.collect(config.getoption("ansible_inventory"), ",".join(names), lambda line: None)
        report = apply_waivers(report, waivers, datetime.date.today(), groups)
        config._compliance_checks = [
            (name, host, check) for name, host in sorted(report.hosts.items())
            for check in (host.checks or [None])
        ]
    return config._compliance_checks


def pytest_generate_tests(metafunc):
    if "compliance_check" in metafunc.fixturenames:
        checks = _evaluate(metafunc.config)
        ids = [f"{name}::{check.id if check else 'HOST'}" for name, _, check in checks]
        metafunc.parametrize("compliance_check", checks, ids=ids)
    if "compliance_host" in metafunc.fixturenames:
        hosts = sorted({name: host for name, host, _ in _evaluate(metafunc.config)}.items())
        metafunc.parametrize("compliance_host", hosts, ids=[name for name, _ in hosts])
