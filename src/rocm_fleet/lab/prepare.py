"""Build every cached root the lab and its tests use, side by side: ``python -m rocm_fleet.lab.prepare``.

On a fresh machine the lab bases (Debian 12 and 13), the tool roots of three
Debian releases, the Debian packages the lab mirror carries and the newest-ansible-core
controller cost minutes each, mostly waiting on downloads and dpkg. tests/run-all starts this in the background while
its quality gates run; whoever needs one meanwhile waits for its one build
(``debroot``, ``distro.fetch_tool_suite`` and ``controller.prepare`` take a lock each), never for a second.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from rocm_fleet.lab import base, controller, debroot, paths, systems, toolroots
from rocm_fleet.lab.mirror import build


def jobs() -> dict:
    """What to build, by name: each a callable that builds (or finds) one cached thing."""
    built = {}
    for suite in base.SUITES.values():
        built[f"lab base {suite}"] = partial(debroot.ensure_root, base.recipe(suite), log=_quiet)
    for key in systems.SYSTEMS:
        recipe = base.system_recipe(key)
        if recipe.name != recipe.suite:  # a system of its own over a Debian base
            built[f"lab base {key}"] = partial(debroot.ensure_root, recipe, log=_quiet)
    for suite, root in toolroots.TOOL_ROOTS.items():
        built[f"tool root {suite}"] = partial(debroot.ensure_root, root.recipe(), log=_quiet)
    # After the bases it resolves on (its lock waits for their builds): the mirror's first build, and the unit
    # tests of the runtime packages, read these.
    built["mirror tool debs"] = partial(build.fetch_tools, paths.cache_dir(), log=_quiet)
    built["controller (newest ansible-core)"] = partial(controller.prepare, log=_quiet)
    return built


def _quiet(*_args) -> None:
    return None


def main() -> int:
    started = time.monotonic()
    work = jobs()
    failed = 0
    with ThreadPoolExecutor(max_workers=len(work), thread_name_prefix="prepare") as pool:
        futures = {name: pool.submit(job) for name, job in work.items()}
        for name, future in futures.items():
            try:
                future.result()
                print(f"ready: {name} ({time.monotonic() - started:.0f} s)", flush=True)
            except Exception as exc:  # each is reported; the test that needs it reports it again
                failed += 1
                print(f"FAILED: {name}: {exc}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
