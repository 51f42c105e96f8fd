#!/usr/bin/env python3
"""Time the sysfs GPU facts against one real ``rocm-smi --showtopo --json`` on the same 8x MI300X tree.

Run as root from the repository root (see benchmarks/README.md):

    .venv/bin/python benchmarks/bench_gpu_facts.py [--profile mi300x-8] [--repeat 200] [--tool-repeat 15]

Prints medians, the speed ratio and the JSON size of the facts; exits 1 when
the sysfs path is not at least 5x faster or the facts exceed 16 KiB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "collections"))
sys.path.insert(0, str(REPO / "src"))

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs  # noqa: E402

from rocm_fleet.hardware import load_profile  # noqa: E402
from rocm_fleet.hardware.render import render_profile  # noqa: E402
from rocm_fleet.hardware.sandbox import run_with_sysfs, sandbox_problem  # noqa: E402

MODULE = REPO / "plugins" / "modules" / "gpu_facts.py"
MIN_SPEEDUP = 5.0
MAX_FACTS_BYTES = 16 * 1024


def median_seconds(action, repeat):
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def compact_size(document):
    return len(json.dumps(document, separators=(",", ":"), sort_keys=True).encode())


def run_module_process(root, args_file):
    """One gpu_facts run as Ansible starts it on the host: a fresh interpreter with an args file."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "collections"))
    result = subprocess.run([sys.executable, str(MODULE), str(args_file)], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError("gpu_facts failed: %s %s" % (result.stdout[-500:], result.stderr[-500:]))
    return json.loads(result.stdout)


def run_tool(root):
    result = run_with_sysfs(root, ["rocm-smi", "--showtopo", "--json"])
    if result.returncode != 0 or not result.stdout.lstrip().startswith("{"):
        raise RuntimeError("rocm-smi failed: %s %s" % (result.stdout[-500:], result.stderr[-500:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="mi300x-8")
    parser.add_argument("--repeat", type=int, default=200, help="repetitions of the in-process sysfs read")
    parser.add_argument("--tool-repeat", type=int, default=15, help="repetitions of each process start")
    options = parser.parse_args()

    problem = sandbox_problem() or (None if shutil.which("rocm-smi") else "rocm-smi is not installed")
    if problem:
        print("cannot benchmark: %s" % problem, file=sys.stderr)
        return 2

    root = Path(tempfile.mkdtemp(prefix="bench-gpu-facts-"))
    try:
        profile = load_profile(options.profile)
        render_profile(profile, root)
        state, report = collect_sysfs(str(root))
        if state != "ok" or len(report["devices"]) != len(profile.gpus):
            raise RuntimeError("sysfs facts are wrong: %s %s" % (state, report["warnings"]))

        rows = [("collect_sysfs (in process)", median_seconds(lambda: collect_sysfs(str(root)), options.repeat))]
        module_facts = None
        if MODULE.exists():
            args_file = root / "module-args.json"
            args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"sysfs_root": str(root), "sources": ["sysfs"]}}))
            module_facts = run_module_process(root, args_file)["ansible_facts"]
            rows.append(("gpu_facts module process, sources=sysfs",
                         median_seconds(lambda: run_module_process(root, args_file), options.tool_repeat)))
        namespace = median_seconds(lambda: run_with_sysfs(root, ["true"]), options.tool_repeat)
        tool = median_seconds(lambda: run_tool(root), options.tool_repeat)
        rows.append(("mount namespace + bind mount alone", namespace))
        rows.append(("rocm-smi --showtopo --json (one call)", tool))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print("profile %s: %d GPUs; medians of %d (in process) / %d (processes) runs"
          % (profile.name, len(profile.gpus), options.repeat, options.tool_repeat))
    for label, seconds in rows:
        print("  %-46s %9.2f ms" % (label, seconds * 1000))
    sysfs_seconds = rows[0][1]
    speedup = tool / sysfs_seconds
    print("  speed-up of collect_sysfs over rocm-smi: %.0fx (%.0fx without the namespace cost)"
          % (speedup, (tool - namespace) / sysfs_seconds))
    if module_facts is not None:
        module_process = rows[1][1]
        print("  speed-up of the gpu_facts process over rocm-smi: %.1fx" % (tool / module_process))
    sizes = [("collect_sysfs report", compact_size(report))]
    if module_facts is not None:
        sizes.append(("gpu_facts ansible_facts", compact_size(module_facts)))
    for label, size in sizes:
        print("  JSON size of %-27s %6d bytes (limit %d)" % (label, size, MAX_FACTS_BYTES))

    failures = []
    if speedup < MIN_SPEEDUP:
        failures.append("collect_sysfs is only %.1fx faster than rocm-smi (need %.0fx)" % (speedup, MIN_SPEEDUP))
    failures.extend("%s is %d bytes" % (label, size) for label, size in sizes if size > MAX_FACTS_BYTES)
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
