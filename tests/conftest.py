"""Make the checkout importable as the rocm_fleet.core collection."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COLLECTIONS = REPO / "collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

# Ansible's collection loader, installed before anything imports ansible_collections, so
# the templar finds this collection's filters (rocm_fleet.core.*) in every test.
from ansible.plugins.loader import init_plugin_loader  # noqa: E402

init_plugin_loader([str(COLLECTIONS)])

# What each test phase cost in wall and CPU time, where tests/run-all asks (tests/fleet_testing/cost_record.py).
pytest_plugins = ["fleet_testing.cost_record"]
