"""The scaling curve: push drift against `ansible -m ping`, and a pull fleet, at 16, 64 and 128 lab hosts.

    ROCM_FLEET_LAB_DIR=/var/lib/rocm-fleet/lab-bench ROCM_FLEET_LAB_MIRROR_PORT=9150 \\
    ROCM_FLEET_LAB_INVENTORY=/tmp/bench-inv .venv/bin/python benchmarks/bench_scale.py \\
        [--sizes 16,64,128] [--forks 16,64] [--repeat 3] [--no-converge] [--no-pull] [--json FILE]

Run it as root from the repository root with its OWN lab instance (as bench_drift.py). It brings up
the generated scale hosts (`rocm-fleet lab up N`, N the largest size) and converges them with
site.yml unless --no-converge. Then, for each size and forks setting, side by side, --repeat times:

- ping: `ansible -m ansible.builtin.ping`, one module call per host;
- nightly drift: `rocm-fleet drift`, with the fact cache and the declared-state cache of a run before
  (one node_compliance call per host; what a nightly run of an unchanged fleet costs);
- first look (once per size): the same with both caches empty (gpu_facts, node_compliance and the
  declared state rendered for every host).

Every command starts as a nightly run does, with no ssh connection of the command before still open (Ansible
keeps them 60 s: ControlPersist). Each row gives the median wall seconds (until the fleet's state is known: the
command's end) and the
control node's CPU seconds (user + system of the command and every process it waited for: Ansible's
workers and their ssh clients; not the lab hosts' sshd and module processes, which on a real fleet run
on the hosts). Then the pull fleet (--no-pull skips it), when playbooks/pull.yml exists: every host
runs its own check at once (what rocm-fleet-pull.service runs, benchmarks/bench_pull.py), and the wall
time until every host's report is written and the CPU seconds each host spent on itself.

It prints a table and the ratios nightly/ping, and writes the figures as JSON with --json. Exit 1
when the nightly/ping ratio at 64 hosts and forks 64 is above --max-ratio (default 1.5), 2 when it
cannot run. A script, not a test: timings depend on the machine's load (docs/scaling.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_lab import BIN, REPO, bench_inventory, close_kept_connections, lab_env


def measured(command: list[str], env: dict, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and the processes it waited for), started as a nightly run starts:
    no ssh connection of a command before kept open."""
    close_kept_connections()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_pair(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(wall for wall, _ in samples), statistics.median(cpu for _, cpu in samples)


def push_rows(args, env: dict, inventory: Path, work: Path) -> list[dict]:
    rows = []
    hosts = [f"scale-{number:02d}" for number in range(1, max(args.sizes) + 1)]
    for size in args.sizes:
        limit = ",".join(hosts[:size])
        for forks in args.forks:
            forked = {**env, "ANSIBLE_FORKS": str(forks)}
            caches = {**forked, "ROCM_FLEET_FACT_CACHE": tempfile.mkdtemp(dir=work)}
            drift = [str(BIN / "rocm-fleet"), "drift", "-i", str(inventory), "--limit", limit,
                     "--output-dir", str(work / "report")]
            ping = [str(BIN / "ansible"), "-i", str(inventory), limit, "-m", "ansible.builtin.ping"]
            first = measured(drift, caches, (0, 2))  # fills the caches the nightly runs read
            samples: dict[str, list[tuple[float, float]]] = {"ping": [], "nightly": []}
            for _ in range(args.repeat):
                samples["ping"].append(measured(ping, forked))
                samples["nightly"].append(measured(drift, caches, (0, 2)))
            (ping_wall, ping_cpu), (nightly_wall, nightly_cpu) = median_pair(samples["ping"]), median_pair(
                samples["nightly"])
            row = {"hosts": size, "forks": forks, "ping_s": ping_wall, "ping_cpu_s": ping_cpu,
                   "nightly_s": nightly_wall, "nightly_cpu_s": nightly_cpu, "first_s": first[0],
                   "first_cpu_s": first[1], "nightly_per_ping": nightly_wall / ping_wall}
            rows.append(row)
            print(f"{size:>5} {forks:>5} {ping_wall:>7.1f} {ping_cpu:>8.1f} {nightly_wall:>9.1f} {nightly_cpu:>10.1f}"
                  f" {first[0]:>7.1f} {first[1]:>9.1f} {row['nightly_per_ping']:>12.2f}", flush=True)
    return rows


def pull_rows(args, env: dict, inventory: Path) -> list[dict]:
    """The pull fleet, through benchmarks/bench_pull.py (it deploys playbooks/pull.yml on the scale hosts)."""
    script = REPO / "benchmarks" / "bench_pull.py"
    if args.no_pull or not script.exists():
        return []
    result = subprocess.run([sys.executable, str(script), "--inventory", str(inventory),
                             "--sizes", ",".join(map(str, args.sizes)), "--json", "-"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=7200)
    if result.returncode != 0:
        raise SystemExit(f"bench_pull.py exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}")
    return json.loads(result.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda text: [int(part) for part in text.split(",")], default=[16, 64, 128])
    parser.add_argument("--forks", type=lambda text: [int(part) for part in text.split(",")], default=[16, 64])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-ratio", type=float, default=1.5)
    parser.add_argument("--no-converge", action="store_true", help="the scale hosts are converged already")
    parser.add_argument("--no-pull", action="store_true", help="leave the pull fleet out")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    env = lab_env()
    if env is None:
        return 2
    largest = max(args.sizes)
    subprocess.run([str(BIN / "rocm-fleet"), "lab", "up", str(largest)], cwd=REPO, env=env, check=True,
                   capture_output=True)
    print(f"control node: {os.cpu_count()} CPUs; lab hosts share them (their sshd and modules are not counted as"
          " the control node's CPU)", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as directory:
        work = Path(directory)
        inventory = bench_inventory(env, work)
        if not args.no_converge:
            limit = ",".join(f"scale-{number:02d}" for number in range(1, largest + 1))
            converge = [str(BIN / "ansible-playbook"), "-i", str(inventory), "site.yml", "--limit", limit]
            wall, cpu = measured(converge, env)
            print(f"converged {largest} hosts with site.yml in {wall:.0f} s ({cpu:.0f} CPU s)", flush=True)
        print(f"{'hosts':>5} {'forks':>5} {'ping s':>7} {'ping cpu':>8} {'nightly s':>9} {'nightly cpu':>10}"
              f" {'first s':>7} {'first cpu':>9} {'nightly/ping':>12}", flush=True)
        push = push_rows(args, env, inventory, work)
        pull = pull_rows(args, env, inventory)
    for row in pull:
        print(f"pull {row['hosts']:>5} hosts: every report written {row['known_s']:.1f} s after the start;"
              f" {row['host_cpu_s']:.1f} CPU s per host check", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"push": push, "pull": pull}, indent=1) + "\n")
    at_64 = [row["nightly_per_ping"] for row in push if row["hosts"] == 64 and row["forks"] == 64]
    return 1 if at_64 and at_64[0] > args.max_ratio else 0


if __name__ == "__main__":
    sys.exit(main())
