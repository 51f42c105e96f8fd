"""Pull mode on the lab: the artifacts a site builds for roles/pull, and node_exporter's port per host.

The lab test (tests/integration/lab/test_pull_mode.py) and the pull fleet benchmark
(benchmarks/bench_pull.py) both put lab hosts in pull mode with these, as docs/pull-mode.md
tells a site to: a wheelhouse per Python version of the hosts, the collection tarball, and
Debian's node_exporter, which the hosts' systemd runs on a port of each host's own.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from ansible.release import __version__ as ANSIBLE_CORE_VERSION

SERVICE = "/etc/systemd/system/rocm-fleet-pull.service"
REPORT = "/var/lib/rocm-fleet/pull/drift.json"
# manylinux tags of the wheels the hosts' Pythons take (x86_64).
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")


def _run(command: list[str], cwd: Path | None = None, timeout: float = 600) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {result.returncode}: {(result.stdout + result.stderr)[-2000:]}")


def build_wheelhouse(directory: Path, python_versions: set[str], source: Path) -> Path:
    """``directory``/<version>/: ansible-core and ansible-runner as this controller runs them, pip, and the
    rocm-fleet wheel built from ``source``, for each Python version the hosts run (pull_wheelhouse)."""
    built = directory / ".rocm-fleet"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--quiet", "--no-deps", "-w", str(built), str(source)])
    runner = importlib.metadata.version("ansible-runner")
    for version in sorted(python_versions):
        target = directory / version
        platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
        _run(
            [
                *pip,
                "download",
                "--quiet",
                "--only-binary=:all:",
                "--python-version",
                version,
                *platforms,
                "-d",
                str(target),
                f"ansible-core=={ANSIBLE_CORE_VERSION}",
                f"ansible-runner=={runner}",
                "pip",
            ]
        )
        for wheel in built.glob("*.whl"):
            (target / wheel.name).write_bytes(wheel.read_bytes())
    return directory


def build_collection(directory: Path, source: Path) -> Path:
    """The collection tarball of ``source`` (pull_collection_tarball)."""
    _run(
        [
            sys.executable,
            "-m",
            "ansible.cli.galaxy",
            "collection",
            "build",
            "--output-path",
            str(directory),
            str(source),
        ],
        cwd=source,
        timeout=300,
    )
    return next(directory.glob("rocm_fleet-core-*.tar.gz"))


def node_exporter_deb(directory: Path) -> Path:
    """Debian's prometheus-node-exporter for the hosts (the lab mirror serves only what the ROCm packages need)."""
    cached = sorted(Path("/var/cache/apt/archives").glob("prometheus-node-exporter_*.deb"))
    if cached:
        return cached[-1]
    _run(["apt-get", "download", "prometheus-node-exporter"], cwd=directory, timeout=300)
    return next(directory.glob("prometheus-node-exporter_*.deb"))


NODE_EXPORTER_DROP_IN = "/etc/systemd/system/prometheus-node-exporter.service.d/50-lab-listen.conf"


def node_exporter_drop_in(port: int) -> str:
    """A drop-in for Debian's prometheus-node-exporter.service: the host's own loopback port (the lab's hosts
    share the machine's network), and only the textfile collector (to save CPU). Written before the package is
    installed, so the unit its postinst starts listens there from the first start."""
    return (
        "# rocm-fleet lab: this host's node_exporter port on the machine's loopback\n"
        "[Service]\nExecStart=\n"
        f"ExecStart=/usr/bin/prometheus-node-exporter --web.listen-address=127.0.0.1:{port}"
        " --collector.disable-defaults --collector.textfile\n"
    )


def start_prometheus(directory: Path, port: int, targets: list[str], rules: Path, interval: str) -> subprocess.Popen:
    """Debian's prometheus on loopback, scraping ``targets`` and evaluating ``rules`` every ``interval``."""
    import shutil

    import yaml

    config = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "rule_files": [str(rules)],
        "scrape_configs": [{"job_name": "node", "static_configs": [{"targets": targets}]}],
    }
    (directory / "prometheus.yml").write_text(yaml.safe_dump(config))
    with (directory / "prometheus.log").open("w") as log:
        return subprocess.Popen(
            [
                shutil.which("prometheus") or "/usr/bin/prometheus",
                f"--config.file={directory / 'prometheus.yml'}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
