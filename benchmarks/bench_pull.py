"""A pull fleet on the lab: every host checks itself at once; how long until Prometheus knows the fleet's state.

    ROCM_FLEET_LAB_DIR=/var/lib/rocm-fleet/lab-bench ROCM_FLEET_LAB_MIRROR_PORT=9150 \\
    ROCM_FLEET_LAB_INVENTORY=/tmp/bench-inv .venv/bin/python benchmarks/bench_pull.py \\
        [--sizes 16,64,128] [--inventory DIR] [--json FILE|-] [--deploy-only]

Run it as root with its own lab instance (as bench_scale.py, which calls it with the inventory it
built; alone, it builds one the same way). It puts the generated scale hosts in pull mode as a site
does (docs/pull-mode.md, src/rocm_fleet/lab/pull.py): a wheelhouse and the collection tarball built
here, playbooks/pull.yml, Debian's node_exporter on each host (loopback ports 9401 and up), and one
Debian prometheus scraping them every 2 s. Then, for each size, every one of that many hosts starts
rocm-fleet-pull.service at once (`systemctl start --no-block`, as its timer would; the timer itself is left
off), and the clock runs until Prometheus has a `rocm_fleet_drift_last_run_timestamp_seconds` newer than the
start for every one of them.

With --deploy-only it stops once the fleet is in pull mode: the row is the time that took (run it from a checkout
of the commit before a change of the pull role, then from this one, on the same lab, for a before and after).

First every host's first check after the install, which compiles what it imports (pip installs the wheels
without bytecode), as a row of its own; then, per size, what every later period costs. Per row it prints: the
wall seconds until the fleet's state was known; the control node's CPU
seconds in that time (Prometheus, and the one command that fired the checks); and the CPU seconds
each host spent on its own check (the machine's CPU in that time, less the control node's, per host:
here every host runs on the same 2 cores, so the checks queue, which a real fleet's do not).
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from bench_lab import BIN, REPO, bench_inventory, lab_env

from rocm_fleet.lab.pull import (
    NODE_EXPORTER_DROP_IN,
    build_collection,
    build_wheelhouse,
    node_exporter_deb,
    node_exporter_drop_in,
    start_prometheus,
)

FIRST_PORT = 9401  # node_exporters; the pull lab test takes 9300-9399
PROMETHEUS_PORT = 9600
SCRAPE = "2s"
TICKS = 100  # /proc's clock ticks per second on Linux


def ansible(env: dict, inventory: Path, pattern: str, module: str, args: str, *options: str) -> str:
    result = subprocess.run([str(BIN / "ansible"), "-i", str(inventory), pattern, "-b", "-m", module, "-a", args,
                             "-f", "64", *options], cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        raise SystemExit(f"ansible {module} {args[:80]} exited {result.returncode}:\n{result.stdout[-3000:]}")
    return result.stdout


def machine_ticks() -> int:
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    return sum(int(value) for index, value in enumerate(fields[:8]) if index != 3)  # all but idle


def process_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def fresh_reports(port: int, since: float) -> int:
    query = urllib.parse.urlencode({"query": f"count(rocm_fleet_drift_last_run_timestamp_seconds > {since})"})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?{query}", timeout=5) as response:
        result = json.load(response)["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


def deploy(env: dict, inventory: Path, hosts: list[str], work: Path) -> float:
    started = time.monotonic()
    versions = set(ansible(env, inventory, ",".join(hosts), "ansible.builtin.command",
                           "python3 -c 'import sys; print(\"PY=%d.%d\" % sys.version_info[:2])'").split())
    versions = {word[3:] for word in versions if word.startswith("PY=")}
    wheelhouse = build_wheelhouse(work / "wheelhouse", versions, REPO)
    tarball = build_collection(work, REPO)
    deb = node_exporter_deb(work)
    pattern = ",".join(hosts)
    ansible(env, inventory, pattern, "ansible.builtin.copy", f"src={deb} dest=/tmp/{deb.name}")
    # Each host's node_exporter on its own port (scale-NN: FIRST_PORT + NN - 1), set before the package's
    # postinst starts it: the hosts share the machine's network.
    drop_in = shlex.quote(node_exporter_drop_in(0))
    ansible(env, inventory, pattern, "ansible.builtin.shell",
            # POSIX sh (the shell module's /bin/sh is dash): scale-08 -> 8, not octal.
            f"n=$(hostname); n=${{n#scale-}}; n=${{n#0}}; port=$(({FIRST_PORT - 1} + n));"
            f" mkdir -p {Path(NODE_EXPORTER_DROP_IN).parent} && printf %s {drop_in}"
            f" | sed \"s/127.0.0.1:0 /127.0.0.1:$port /\" > {NODE_EXPORTER_DROP_IN} && systemctl daemon-reload")
    ansible(env, inventory, pattern, "ansible.builtin.apt", f"deb=/tmp/{deb.name}")
    result = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), "playbooks/pull.yml", "--limit",
                             pattern, "-f", "64", "-e", "rocm_fleet_pull_hosts=scale_hosts",
                             "-e", f"pull_wheelhouse={wheelhouse}", "-e", f"pull_collection_tarball={tarball}",
                             # The benchmark starts each round's checks itself, all at once.
                             "-e", "pull_timer_enabled=false"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=7200)
    if result.returncode != 0:
        raise SystemExit(f"pull.yml exited {result.returncode}:\n{result.stdout[-3000:]}")
    took = time.monotonic() - started
    print(f"{len(hosts)} hosts in pull mode in {took:.0f} s", file=sys.stderr, flush=True)
    return took


def check_round(env: dict, inventory: Path, hosts: list[str], server, timeout: float, first: bool = False) -> dict:
    """Every host of ``hosts`` starts its check at once; the row of figures once Prometheus has every report."""
    size = len(hosts)
    since = time.time()
    before_machine, before_server = machine_ticks(), process_ticks(server.pid)
    before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    # Started at once and left running, as each host's timer would start it.
    ansible(env, inventory, ",".join(hosts), "ansible.builtin.command",
            "systemctl start --no-block rocm-fleet-pull.service")
    after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    while fresh_reports(PROMETHEUS_PORT, since) < size:
        if time.monotonic() - started > timeout:
            raise SystemExit(f"{size} hosts: not every report reached Prometheus in {timeout:.0f} s"
                             " (journalctl -u rocm-fleet-pull.service on a host says why)")
        time.sleep(1)
    known = time.monotonic() - started
    fired = (after_children.ru_utime - before_children.ru_utime
             + after_children.ru_stime - before_children.ru_stime)
    scraping = (process_ticks(server.pid) - before_server) / TICKS
    machine = (machine_ticks() - before_machine) / TICKS
    row = {"hosts": size, "first_after_install": first, "known_s": known, "control_cpu_s": scraping + fired,
           "prometheus_cpu_s": scraping, "fire_cpu_s": fired, "host_cpu_s": (machine - scraping - fired) / size}
    print(f"{size:>5} hosts{' (first check after the install)' if first else ''}: every report in Prometheus"
          f" {known:.1f} s after the start; control node {row['control_cpu_s']:.1f} CPU s (Prometheus"
          f" {scraping:.1f}, firing {fired:.1f}); {row['host_cpu_s']:.1f} CPU s per host check",
          file=sys.stderr, flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda text: [int(part) for part in text.split(",")], default=[16, 64, 128])
    parser.add_argument("--inventory", type=Path, help="an inventory with the scale hosts (default: built)")
    parser.add_argument("--json", help="also write the figures here (- : the last line of standard output)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a size may take to be known")
    parser.add_argument("--deploy-only", action="store_true", help="stop once the fleet is in pull mode")
    args = parser.parse_args()
    env = lab_env()
    if env is None:
        return 2
    hosts = [f"scale-{number:02d}" for number in range(1, max(args.sizes) + 1)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-pull-") as directory:
        work = Path(directory)
        inventory = args.inventory or bench_inventory(env, work)
        took = deploy(env, inventory, hosts, work)
        if args.deploy_only:
            rows.append({"hosts": len(hosts), "deploy_s": took})
            hosts = []  # nothing checked, nothing to stop
        if not hosts:
            return _written(rows, args.json)
        ports = {host: FIRST_PORT + number for number, host in enumerate(hosts)}
        (work / "prometheus").mkdir()
        targets = [f"127.0.0.1:{port}" for port in ports.values()]
        server = start_prometheus(work / "prometheus", PROMETHEUS_PORT, targets,
                                  REPO / "files" / "prometheus" / "rocm-fleet.rules.yml", SCRAPE)
        try:
            time.sleep(5)
            # The first check after the install compiles what it imports (the wheels are installed without
            # bytecode): once per host, not what every period costs, so it is its own row.
            rows.append(check_round(env, inventory, hosts, server, args.timeout, first=True))
            for size in args.sizes:
                rows.append(check_round(env, inventory, hosts[:size], server, args.timeout))
        finally:
            server.terminate()
            server.wait(timeout=60)
            subprocess.run([str(BIN / "ansible"), "-i", str(inventory), ",".join(hosts), "-b", "-m",
                            "ansible.builtin.shell", "-a", "systemctl disable --now prometheus-node-exporter.service"],
                           cwd=REPO, env=env, capture_output=True, timeout=600)
    return _written(rows, args.json)


def _written(rows: list[dict], where: str | None) -> int:
    if where == "-":
        print(json.dumps(rows))
    elif where:
        Path(where).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
