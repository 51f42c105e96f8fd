"""Pull mode on the lab: each host checks itself, node_exporter serves its metrics, a real Prometheus alerts.

Two hosts (one Debian 12, one Debian 13) get playbooks/pull.yml (roles/pull): the check's Python packages from
a wheelhouse built here (pip download for each host's Python, the rocm-fleet wheel of this checkout), the
collection tarball ansible-galaxy builds, Debian's prometheus-node-exporter (downloaded here with apt-get
download, as the lab's other tests get Debian's rocm-smi, and run by the host's systemd on a port of its own)
and the units, with a check every {INTERVAL} s. The hosts' systemd runs the timer: nothing in this test runs
the service. Debian's prometheus, on loopback with the shipped rules and 1 s intervals, scrapes each host's
node_exporter; a changed managed file on one host raises exactly that host's alerts at its next timer run,
found through the HTTP API, and they clear after site.yml and the run after; a host whose last report is older
than two of its check periods raises exactly its stale-report alert. systemd-analyze verify checks the units.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, adhoc
from fleet_testing.lab_helpers import REPO
from fleet_testing.lab_site import run_playbook

from rocm_fleet.lab.pull import (
    NODE_EXPORTER_DROP_IN,
    SERVICE,
    build_collection,
    build_wheelhouse,
    node_exporter_drop_in,
    start_prometheus,
)
from rocm_fleet.lab.pull import node_exporter_deb as node_exporter_package

# waits: two timer periods and more (WAIT): it runs right after the converge (conftest.py).
pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.waits]
HOSTS = ("mi300x-01", "rx7900xtx-01")
DRIFTED = "mi300x-01"
# A managed file changed by hand (roles/environment, ROCM-ENV-001), as test_drift.py changes it.
DRIFT_COMMAND = "echo 'export HSA_ENABLE_SDMA=0' >> /etc/profile.d/rocm.sh"
DRIFT_CHECK = "ROCM-ENV-001"
TIMER = "/etc/systemd/system/rocm-fleet-pull.timer"
INTERVAL_TEXTFILE = "/var/lib/prometheus/node-exporter/rocm_fleet_pull.prom"
RULES = REPO / "files" / "prometheus" / "rocm-fleet.rules.yml"
PORTS = range(9300, 9400)  # this test's loopback ports: node_exporters and Prometheus
# A check every minute (the role's shortest period), the first right away: the alerts follow a drift at the next.
INTERVAL = 60
TIMER_VARS = ("-e", json.dumps({"pull_interval_seconds": INTERVAL, "pull_boot_delay_seconds": 1,
                                "pull_randomized_delay_seconds": 0}))
WAIT = 3 * INTERVAL + 60  # two timer periods and a run, with room for a loaded machine
__doc__ = __doc__.replace("{INTERVAL}", str(INTERVAL))


def free_port(taken: set[int]) -> int:
    for port in PORTS:
        if port in taken:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        taken.add(port)
        return port
    raise AssertionError(f"no free loopback port in {PORTS}")


def shell(host: str, command: str, timeout: float = 600) -> dict:
    return adhoc(host, "ansible.builtin.shell", command, timeout=timeout)[host]


def root_shell(host: str, command: str) -> str:
    result = shell(host, command)
    assert not result.get("failed"), (host, command, result.get("stderr") or result.get("msg"))
    return result["stdout"]


@pytest.fixture(scope="module")
def hosts(compliant_lab) -> tuple[str, ...]:
    inventory = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(LAB_INVENTORY), "--list"],
                               capture_output=True, text=True, check=True)
    known = set(json.loads(inventory.stdout)["_meta"]["hostvars"])
    missing = [host for host in HOSTS if host not in known]
    assert not missing, f"{LAB_INVENTORY} lacks {missing}"
    return HOSTS


@pytest.fixture(scope="module")
def wheelhouse(hosts, tmp_path_factory) -> Path:
    """<dir>/<python version>/: what the check needs, for each Python the hosts run (as a site builds it)."""
    started = time.monotonic()
    versions = {root_shell(host, "python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'").strip()
                for host in hosts}
    directory = build_wheelhouse(tmp_path_factory.mktemp("wheelhouse"), versions, REPO)
    print(f"wheelhouse for Python {', '.join(sorted(versions))} built in {time.monotonic() - started:.0f} s")
    return directory


@pytest.fixture(scope="module")
def collection_tarball(tmp_path_factory) -> Path:
    return build_collection(tmp_path_factory.mktemp("collection"), REPO)


@pytest.fixture(scope="module")
def node_exporter_deb(tmp_path_factory) -> Path:
    return node_exporter_package(tmp_path_factory.mktemp("debs"))


def pull_playbook(hosts, wheelhouse: Path, tarball: Path, *args: str):
    return run_playbook("playbooks/pull.yml", "--limit", ",".join(hosts), "-e", f"pull_wheelhouse={wheelhouse}",
                        "-e", f"pull_collection_tarball={tarball}", *TIMER_VARS, *args)


def unit_state(host: str, unit: str, *properties: str) -> dict[str, str]:
    lines = root_shell(host, f"systemctl show {unit} " + " ".join(f"-p {name}" for name in properties))
    return dict(line.split("=", 1) for line in lines.splitlines() if "=" in line)


@pytest.fixture(scope="module")
def pull_fleet(hosts, wheelhouse, collection_tarball, node_exporter_deb):
    """The hosts in pull mode, each serving its textfile through its own node_exporter; {host: exporter port}."""
    seconds = {}
    taken: set[int] = set()
    ports = {host: free_port(taken) for host in hosts}
    for host, port in ports.items():
        adhoc(host, "ansible.builtin.copy", f"src={node_exporter_deb} dest=/tmp/{node_exporter_deb.name}")
        drop_in = shlex.quote(node_exporter_drop_in(port))
        root_shell(host, f"mkdir -p {Path(NODE_EXPORTER_DROP_IN).parent}"
                         f" && printf %s {drop_in} > {NODE_EXPORTER_DROP_IN} && systemctl daemon-reload")
        root_shell(host, f"DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "
                         f"/tmp/{node_exporter_deb.name}")
        assert unit_state(host, "prometheus-node-exporter.service", "ActiveState")["ActiveState"] == "active"
    # --check first, on hosts that have never been in pull mode: every change shown, none made.
    started = time.monotonic()
    check = pull_playbook(hosts, wheelhouse, collection_tarball, "--check", "--diff")
    seconds["check run (fresh hosts)"] = time.monotonic() - started
    assert check.returncode == 0, check.tail()
    assert all(check.recap[host]["changed"] > 0 for host in hosts), check.recap
    assert "+ExecStart=/usr/bin/python3 -m rocm_fleet.cli drift" in check.output
    for host in hosts:
        assert root_shell(host, f"ls /opt/rocm-fleet {SERVICE} 2>&1 || true").count("No such file") == 2
    started = time.monotonic()
    first = pull_playbook(hosts, wheelhouse, collection_tarball)
    seconds["first run"] = time.monotonic() - started
    assert first.returncode == 0, first.tail()
    started = time.monotonic()
    second = pull_playbook(hosts, wheelhouse, collection_tarball)
    seconds["second run"] = time.monotonic() - started
    assert second.returncode == 0, second.tail()
    assert {host: second.recap[host]["changed"] for host in hosts} == dict.fromkeys(hosts, 0), second.changed_tasks
    for host in hosts:
        timer = unit_state(host, "rocm-fleet-pull.timer", "UnitFileState", "ActiveState")
        assert timer == {"UnitFileState": "enabled", "ActiveState": "active"}, (host, timer)
    print("pull.yml: " + ", ".join(f"{name} {value:.0f} s" for name, value in seconds.items()))
    yield ports
    for host in hosts:  # the other tests' hosts check nothing on their own
        shell(host, "systemctl disable --now rocm-fleet-pull.timer prometheus-node-exporter.service;"
                    " systemctl stop rocm-fleet-pull.service")


class Prometheus:
    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}"

    def get(self, path: str, **params) -> dict:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}{path}{query}", timeout=5) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def alerts(self) -> set[tuple[str, str, str | None]]:
        """(alert, host, check) of every firing rocm-fleet alert; the stale-report alert names its instance."""
        return {(labels["alertname"], labels.get("host") or labels["instance"], labels.get("check"))
                for labels in (alert["labels"] for alert in self.get("/api/v1/alerts")["alerts"]
                               if alert["state"] == "firing")
                if labels["alertname"].startswith("RocmFleet")}

    def compliant(self) -> dict[str, float]:
        return {sample["metric"]["host"]: float(sample["value"][1])
                for sample in self.get("/api/v1/query", query="rocm_fleet_host_compliant")["result"]}

    def wait(self, what: str, read, expected, timeout: float = 60):
        deadline, seen = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError, AssertionError):
                seen = read()
                if seen == expected:
                    return time.monotonic()
            time.sleep(0.5)
        raise AssertionError(f"Prometheus: {what} is {seen!r}, not {expected!r}, after {timeout} s")


@pytest.fixture(scope="module")
def prometheus(pull_fleet, tmp_path_factory):
    """Debian's prometheus on loopback: 1 s scrapes and rule evaluations, the shipped rules."""
    directory = tmp_path_factory.mktemp("prometheus")
    port = free_port(set(pull_fleet.values()))
    targets = [f"127.0.0.1:{node_port}" for node_port in pull_fleet.values()]
    server = start_prometheus(directory, port, targets, RULES, "1s")
    client = Prometheus(port)
    try:
        client.wait("readiness", lambda: urllib.request.urlopen(f"{client.url}/-/ready", timeout=2).status, 200, 30)
        yield client
    finally:
        server.terminate()
        server.wait(timeout=30)


def timer_runs(host: str) -> int:
    """How many times the host's systemd has started the check since the timer was enabled (none by hand)."""
    journal = root_shell(host, "journalctl -b -o cat -u rocm-fleet-pull.service | grep -c '^Starting' || true")
    return int(journal.strip() or 0)


def test_units_pass_systemd_analyze_verify(pull_fleet, tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze is missing: ./dev installs systemd")
    for unit in (SERVICE, TIMER):
        (tmp_path / Path(unit).name).write_text(root_shell(HOSTS[0], f"cat {unit}"))
    service = (tmp_path / "rocm-fleet-pull.service").read_text()
    assert "RandomizedDelaySec" in (tmp_path / "rocm-fleet-pull.timer").read_text()
    assert f"--limit {HOSTS[0]} " in service and "--textfile-dir /var/lib/prometheus/node-exporter" in service
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *map(str, sorted(tmp_path.iterdir()))],
                            capture_output=True, text=True, timeout=120)
    problems = [line for line in result.stderr.splitlines() if "rocm-fleet-pull" in line]
    assert result.returncode == 0 and not problems, result.stderr


def test_a_drift_on_one_host_raises_its_alerts_in_prometheus_and_site_yml_clears_them(hosts, pull_fleet, prometheus):
    started = time.monotonic()
    # The first timer run of each host: its report reaches Prometheus through its own node_exporter.
    prometheus.wait("rocm_fleet_host_compliant", prometheus.compliant, dict.fromkeys(hosts, 1.0), WAIT)
    prometheus.wait("the firing alerts", prometheus.alerts, set())

    root_shell(DRIFTED, DRIFT_COMMAND)
    drifted = time.monotonic()
    try:
        expected = {("RocmFleetHostNotCompliant", DRIFTED, None), ("RocmFleetCheckFailed", DRIFTED, DRIFT_CHECK)}
        raised = prometheus.wait("the firing alerts", prometheus.alerts, expected, WAIT)
        assert prometheus.compliant() == {host: 0.0 if host == DRIFTED else 1.0 for host in hosts}
    finally:
        repair = run_playbook("site.yml", "--limit", DRIFTED)
    assert repair.returncode == 0, repair.tail()
    repaired = time.monotonic()
    cleared = prometheus.wait("the firing alerts", prometheus.alerts, set(), WAIT)
    runs = {host: timer_runs(host) for host in hosts}
    assert all(count >= 2 for count in runs.values()), f"timer runs per host: {runs}"

    # A check that stopped: the other host's textfile says it checks every second, so its last report (from
    # before the repair) is older than two periods. Exactly its stale alert fires; the role's value clears it.
    other = next(host for host in hosts if host != DRIFTED)
    root_shell(other, f"sed -i.role 's/^rocm_fleet_pull_interval_seconds .*/rocm_fleet_pull_interval_seconds 1/'"
                      f" {INTERVAL_TEXTFILE}")
    try:
        prometheus.wait("the firing alerts", prometheus.alerts,
                        {("RocmFleetReportStale", f"127.0.0.1:{pull_fleet[other]}", None)})
    finally:
        root_shell(other, f"mv {INTERVAL_TEXTFILE}.role {INTERVAL_TEXTFILE}")  # a rename: never half a file
    prometheus.wait("the firing alerts", prometheus.alerts, set())
    print(f"alerts raised {raised - drifted:.1f} s after the drift, cleared {cleared - repaired:.1f} s after"
          f" site.yml; timer runs per host {runs}; the test took {time.monotonic() - started:.0f} s")


def test_the_service_command_is_the_one_the_issue_describes(hosts):
    """The check runs against the host itself: local connection, the host's own name, nothing sent anywhere."""
    [command] = [line.split("=", 1)[1] for line in root_shell(hosts[0], f"cat {SERVICE}").splitlines()
                 if line.startswith("ExecStart=")]
    assert shlex.split(command)[:4] == ["/usr/bin/python3", "-m", "rocm_fleet.cli", "drift"]
    assert yaml.safe_load(root_shell(hosts[0], "cat /etc/rocm-fleet/pull/local.yml"))["ansible_connection"] == "local"
