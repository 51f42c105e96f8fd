"""Time a rolling upgrade (playbooks/upgrade.yml, canary then 25% batches) against a plain site.yml converge of the
same release change, over the same 16 lab hosts, in the same run.

    ROCM_FLEET_LAB_DIR=/var/lib/rocm-fleet/lab-bench ROCM_FLEET_LAB_MIRROR_PORT=9150 \\
    ROCM_FLEET_LAB_INVENTORY=/tmp/bench-inv .venv/bin/python benchmarks/bench_upgrade.py [--repeat 1] [--hosts 16]

Run it as root from the repository root, with its OWN lab instance (the three variables above, and an inventory
copy whose ansible_port values and lab_mirror_port do not collide with another lab: docs/lab.md). It brings up the
generated scale hosts, and for each repeat: puts them on --from (site.yml with that release, the other releases
and the newer driver removed), times upgrade.yml to --to at upgrade_serial=25%, puts them back on --from, and
times site.yml with preflight_rocm_version=--to. Both moves change the amdgpu driver line (30.20 to 30.30 for
7.1.1 to 7.2.3), so both reboot every host. It prints the medians and their ratio. A script, not a test: timings
depend on the machine's load. Exit 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_lab import BIN, REPO, bench_inventory, lab_env


def run(command: list[str], env: dict, timeout: float = 7200) -> float:
    start = time.monotonic()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}")
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--from", dest="start", default="7.1.1", help="the release the hosts start on")
    parser.add_argument("--to", dest="target", default="7.2.3", help="the release both runs move them to")
    args = parser.parse_args()
    env = lab_env()
    if env is None:
        return 2
    run([str(BIN / "rocm-fleet"), "lab", "up", str(args.hosts)], env)
    with tempfile.TemporaryDirectory(prefix="bench-upgrade-") as work:
        inventory = bench_inventory(env, Path(work))
        limit = ",".join(f"scale-{number:02d}" for number in range(1, args.hosts + 1))
        playbook = [str(BIN / "ansible-playbook"), "-i", str(inventory), "--limit", limit]
        # Back on the start release: the target's packages and its newer driver removed, no upgrade record.
        reset = [*playbook, "site.yml", "-e", f"preflight_rocm_version={args.start}",
                 "-e", "packages_remove_unlisted_versions=true", "-e", "packages_amdgpu_dkms_downgrade=true"]
        forget = [str(BIN / "ansible"), "-i", str(inventory), limit, "-b", "-m", "ansible.builtin.file",
                  "-a", "path=/var/lib/rocm-fleet/upgrade.json state=absent"]
        upgrade = [*playbook, "playbooks/upgrade.yml", "-e", f"upgrade_rocm_version={args.target}",
                   "-e", "upgrade_serial=25%", "-e", f"rollout_reports_dir={work}"]
        converge = [*playbook, "site.yml", "-e", f"preflight_rocm_version={args.target}"]
        timings: dict[str, list[float]] = {"upgrade.yml": [], "site.yml": []}
        for number in range(args.repeat):
            for name, command in (("upgrade.yml", upgrade), ("site.yml", converge)):
                run(reset, env)
                run(forget, env)
                timings[name].append(run(command, env))
                print(f"repeat {number + 1}: {name} moved {args.hosts} hosts {args.start} -> {args.target}"
                      f" in {timings[name][-1]:.0f} s", flush=True)
        run(reset, env)
    upgrade_s, converge_s = statistics.median(timings["upgrade.yml"]), statistics.median(timings["site.yml"])
    print(f"{'hosts':>5} {'upgrade.yml s':>13} {'site.yml s':>10} {'upgrade/site':>12}")
    print(f"{args.hosts:>5} {upgrade_s:>13.0f} {converge_s:>10.0f} {upgrade_s / converge_s:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
