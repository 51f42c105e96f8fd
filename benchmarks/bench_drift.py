"""Time `rocm-fleet drift` against `ansible -m ping` over the same 1, 4 and 16 lab hosts, in the same run.

    ROCM_FLEET_LAB_DIR=/var/lib/rocm-fleet/lab-bench ROCM_FLEET_LAB_MIRROR_PORT=9150 \\
    ROCM_FLEET_LAB_INVENTORY=/tmp/bench-inv .venv/bin/python benchmarks/bench_drift.py [--repeat 3] [--no-converge]

Run it as root from the repository root, with its OWN lab instance (the three
variables above, and an inventory copy whose ansible_port values and
lab_mirror_port do not collide with another lab: docs/lab.md). It brings up
the generated scale hosts (`rocm-fleet lab up 16`), converges them once with
site.yml (skip with --no-converge when they already are), then for each size
times, --repeat times each, side by side: ping; drift's first look (an empty
fact cache: gpu_facts and node_compliance per host); and the nightly run (the
facts of the run before cached: one node_compliance call per host). It prints
the medians and their ratios to ping. Exit 1 when the nightly ratio at the
largest size is above --max-ratio (default 4), 2 when it cannot run. A script,
not a test: timings depend on the machine's load.

--baseline REF also times the drift of an earlier commit (a git worktree of
REF, its own engine and collection) in the same run, each repeat of the two
taken one after the other, and prints its ratios beside this checkout's.
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

SIZES = (1, 4, 16)


def run(command: list[str], env: dict, check: bool = True, timeout: float = 3600) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}")
    return result


def timed(command: list[str], env: dict, ok: tuple[int, ...]) -> float:
    start = time.monotonic()
    result = run(command, env, check=False)
    elapsed = time.monotonic() - start
    if result.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}")
    return elapsed


def baseline_env(env: dict, ref: str, directory: Path) -> dict:
    """A worktree of ``ref``: its engine (PYTHONPATH) and its collection (ROCM_FLEET_COLLECTION_ROOT)."""
    run(["git", "worktree", "add", "--detach", str(directory), ref], env)
    return {**env, "PYTHONPATH": str(directory / "src"), "ROCM_FLEET_COLLECTION_ROOT": str(directory)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-ratio", type=float, default=4.0)
    parser.add_argument("--no-converge", action="store_true", help="the scale hosts are converged already")
    parser.add_argument("--baseline", metavar="REF", help="also time the drift of this git commit, side by side")
    args = parser.parse_args()
    env = lab_env()
    if env is None:
        return 2
    run([str(BIN / "rocm-fleet"), "lab", "up", str(max(SIZES))], env)
    with tempfile.TemporaryDirectory(prefix="bench-drift-") as work:
        inventory = bench_inventory(env, Path(work))
        versions = {"this": env}
        if args.baseline:
            versions[args.baseline] = baseline_env(env, args.baseline, Path(work) / "baseline")
        hosts = [f"scale-{number:02d}" for number in range(1, max(SIZES) + 1)]
        if not args.no_converge:
            start = time.monotonic()
            run([str(BIN / "ansible-playbook"), "-i", str(inventory), "site.yml", "--limit", ",".join(hosts)], env)
            print(f"converged {len(hosts)} hosts with site.yml in {time.monotonic() - start:.0f} s")
        print(f"{'version':>12} {'hosts':>5} {'ping s':>8} {'first s':>8} {'first/ping':>10} {'nightly s':>9}"
              f" {'nightly/ping':>12}")
        ratio = 0.0
        for size in SIZES:
            limit = ",".join(hosts[:size])
            drift_command = [str(BIN / "rocm-fleet"), "drift", "-i", str(inventory), "--limit", limit,
                             "--output-dir", str(Path(work) / "report")]
            ping = [timed([str(BIN / "ansible"), "-i", str(inventory), limit, "-m", "ansible.builtin.ping"], env, (0,))
                    for _ in range(args.repeat)]
            base = statistics.median(ping)
            first, nightly = {name: [] for name in versions}, {name: [] for name in versions}
            caches = {name: {**version_env, "ROCM_FLEET_FACT_CACHE": tempfile.mkdtemp(dir=work)}
                      for name, version_env in versions.items()}
            for name in versions:  # the nightly runs read the facts of this first run
                timed(drift_command, caches[name], (0, 2))
            for _ in range(args.repeat):
                for name, version_env in versions.items():
                    # First look: an empty fact cache, so every host costs gpu_facts + node_compliance.
                    fresh = {**version_env, "ROCM_FLEET_FACT_CACHE": tempfile.mkdtemp(dir=work)}
                    first[name].append(timed(drift_command, fresh, (0, 2)))
                    # Nightly: the facts of the run before are cached: one node_compliance call per host.
                    nightly[name].append(timed(drift_command, caches[name], (0, 2)))
            for name in versions:
                first_s, nightly_s = statistics.median(first[name]), statistics.median(nightly[name])
                if name == "this":
                    ratio = nightly_s / base
                print(f"{name:>12} {size:>5} {base:>8.1f} {first_s:>8.1f} {first_s / base:>10.2f}"
                      f" {nightly_s:>9.1f} {nightly_s / base:>12.2f}")
        if args.baseline:
            run(["git", "worktree", "remove", "--force", str(Path(work) / "baseline")], env, check=False)
    return 1 if ratio > args.max_ratio else 0


if __name__ == "__main__":
    sys.exit(main())
