"""What a converge costs against its floor: ping, a no-op site.yml, site.yml --check --diff and a nightly drift.

    ROCM_FLEET_LAB_DIR=/var/lib/rocm-fleet/lab-bench ROCM_FLEET_LAB_MIRROR_PORT=9150 \\
    ROCM_FLEET_LAB_INVENTORY=/tmp/bench-inv .venv/bin/python benchmarks/bench_converge.py \\
        [--sizes 9,32] [--repeat 3] [--baseline REF] [--mitogen] [--no-converge] [--first] [--json FILE]

Run it as root from the repository root with its OWN lab instance (benchmarks/README.md). Size 9 is the lab's
own hosts (the instance's inventory); a larger size adds the generated scale hosts (`rocm-fleet lab up N-9`).
It converges every host once with site.yml (unless --no-converge), then for each size, --repeat times, one
variant right after the other (side by side):

- ping: `ansible -m ansible.builtin.ping`, one module call per host;
- no-op: `ansible-playbook site.yml` on the converged hosts (the run fails unless every host reports changed=0);
- check: `ansible-playbook site.yml --check --diff`;
- drift: the nightly `rocm-fleet drift` (the fact and declared-state caches of a run before).

With --first it first times, for each variant, a first converge of the lab's own 9 hosts from fresh disks
(`rocm-fleet lab reset`, then `lab up`): what onboarding a host costs.

Every command starts with no ssh connection of the one before kept open. The variants: this checkout; with
--baseline REF, a git worktree of REF (its own collection, playbooks and engine); with --mitogen, this checkout
with Mitogen's linear strategy (the `mitogen` package must be installed in the virtual environment). It prints
the median wall seconds and each median's ratio to the same variant's ping, and writes them as JSON with
--json. Exit 2 when it cannot run. A script, not a test: timings depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_lab import BIN, REPO, bench_inventory, close_kept_connections, lab_env

LAB_HOSTS = 9
STEPS = ("ping", "noop", "check", "drift")


def run(command: list[str], env: dict, cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    close_kept_connections()
    start = time.monotonic()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=7200)
    wall = time.monotonic() - start
    if result.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}")
    return wall, result.stdout


def unchanged(output: str) -> bool:
    """Every host of the recap reports changed=0."""
    recap = [line for line in output.splitlines() if " : ok=" in line]
    return bool(recap) and all(" changed=0 " in line for line in recap)


def variants(args, env: dict, work: Path) -> dict[str, tuple[dict, Path]]:
    """name -> (environment, directory the commands run in)."""
    found = {"this": (env, REPO)}
    if args.baseline:
        tree = work / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.baseline], cwd=REPO, check=True,
                       capture_output=True)
        found[f"baseline {args.baseline}"] = (
            {**env, "PYTHONPATH": str(tree / "src"), "ROCM_FLEET_COLLECTION_ROOT": str(tree),
             "ANSIBLE_CONFIG": str(tree / "ansible.cfg")},
            tree,
        )
    if args.mitogen:
        try:
            import ansible_mitogen  # noqa: F401 (only its location is used)
        except ImportError:
            raise SystemExit("--mitogen: install the mitogen package into the virtual environment first") from None
        strategies = Path(sys.modules["ansible_mitogen"].__file__).parent / "plugins" / "strategy"
        found["this, mitogen"] = (
            {**env, "ANSIBLE_STRATEGY_PLUGINS": str(strategies), "ANSIBLE_STRATEGY": "mitogen_linear"},
            REPO,
        )
    return found


def commands(step: str, inventory: Path, limit: str, work: Path) -> list[str]:
    if step == "ping":
        return [str(BIN / "ansible"), "-i", str(inventory), limit, "-m", "ansible.builtin.ping"]
    if step == "drift":
        return [str(BIN / "rocm-fleet"), "drift", "-i", str(inventory), "--limit", limit,
                "--output-dir", str(work / "report")]
    extra = ["--check", "--diff"] if step == "check" else []
    return [str(BIN / "ansible-playbook"), "-i", str(inventory), "site.yml", "--limit", limit, *extra]


def first_converges(args, env: dict, work: Path, up: list[str]) -> list[dict]:
    """Each variant's first converge of the lab's own hosts, every one from fresh disks."""
    rows = []
    inventory = Path(env["ROCM_FLEET_LAB_INVENTORY"])
    for name, (variant_env, cwd) in variants(args, env, work).items():
        subprocess.run([str(BIN / "rocm-fleet"), "lab", "reset"], cwd=REPO, env=env, check=True, capture_output=True)
        subprocess.run(up, cwd=REPO, env=env, check=True, capture_output=True)
        wall, _out = run(commands("first", inventory, "all", work), variant_env, cwd)
        rows.append({"variant": name, "hosts": LAB_HOSTS, "first_converge_s": wall})
        print(f"{name:<24} first converge of the {LAB_HOSTS} lab hosts: {wall:.1f} s", flush=True)
    if args.baseline:
        subprocess.run(["git", "worktree", "remove", "--force", str(work / "baseline")], cwd=REPO, capture_output=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda text: [int(part) for part in text.split(",")], default=[9, 32])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="also time this git revision, side by side")
    parser.add_argument("--mitogen", action="store_true", help="also time Mitogen's linear strategy")
    parser.add_argument("--no-converge", action="store_true", help="the hosts are converged already")
    parser.add_argument("--first", action="store_true", help="also time a first converge of the 9 lab hosts")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    env = lab_env()
    if env is None:
        return 2
    scale = max(args.sizes) - LAB_HOSTS
    up = [str(BIN / "rocm-fleet"), "lab", "up"] + ([str(scale)] if scale > 0 else [])
    subprocess.run(up, cwd=REPO, env=env, check=True, capture_output=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-converge-") as directory:
        work = Path(directory)
        if args.first:
            rows.extend(first_converges(args, env, work, up))
        inventory = bench_inventory(env, work) if scale > 0 else Path(env["ROCM_FLEET_LAB_INVENTORY"])
        lab = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(inventory), "--list"], cwd=REPO, env=env,
                             capture_output=True, text=True, check=True)
        every = sorted(json.loads(lab.stdout)["_meta"]["hostvars"])
        own = [host for host in every if not host.startswith("scale-")]
        hosts = own + sorted(host for host in every if host.startswith("scale-"))
        if not args.no_converge:
            wall, _out = run(commands("noop", inventory, ",".join(hosts[: max(args.sizes)]), work), env, REPO)
            print(f"converged {max(args.sizes)} hosts with site.yml in {wall:.0f} s", flush=True)
        found = variants(args, env, work)
        print(f"{'variant':<24} {'hosts':>5} " + " ".join(f"{step + ' s':>8}" for step in STEPS)
              + " " + " ".join(f"{step + '/ping':>11}" for step in STEPS[1:]), flush=True)
        for size in args.sizes:
            limit = ",".join(hosts[:size])
            samples = {name: {step: [] for step in STEPS} for name in found}
            for variant_env, cwd in found.values():  # warm: the caches a nightly run and a rerun find
                run(commands("drift", inventory, limit, work), variant_env, cwd, ok=(0, 2))
            for _ in range(args.repeat):
                for step in STEPS:
                    for name, (variant_env, cwd) in found.items():
                        wall, out = run(commands(step, inventory, limit, work), variant_env, cwd,
                                        ok=(0, 2) if step == "drift" else (0,))
                        if step == "noop" and not unchanged(out):
                            raise SystemExit(f"{name}: site.yml changed something on a converged host:\n{out[-3000:]}")
                        samples[name][step].append(wall)
            for name in found:
                medians = {step: statistics.median(samples[name][step]) for step in STEPS}
                row = {"variant": name, "hosts": size, **{f"{step}_s": medians[step] for step in STEPS},
                       **{f"{step}_per_ping": medians[step] / medians["ping"] for step in STEPS[1:]}}
                rows.append(row)
                print(f"{name:<24} {size:>5} " + " ".join(f"{medians[step]:>8.1f}" for step in STEPS) + " "
                      + " ".join(f"{row[step + '_per_ping']:>11.1f}" for step in STEPS[1:]), flush=True)
        if args.baseline:
            subprocess.run(["git", "worktree", "remove", "--force", str(work / "baseline")], cwd=REPO,
                           capture_output=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
