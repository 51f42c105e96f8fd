"""Where the lab keeps its state and its caches (both overridable for tests and CI)."""

from __future__ import annotations

import os
from pathlib import Path

from rocm_fleet.collection import checkout_path

DEFAULT_STATE_DIR = "/var/lib/rocm-fleet/lab"
DEFAULT_CACHE_DIR = "/var/cache/rocm-fleet"
DEFAULT_MIRROR_PORT = 8650
GUEST_FILES = Path(__file__).resolve().parent / "guest"


def state_dir() -> Path:
    return Path(os.environ.get("ROCM_FLEET_LAB_DIR") or DEFAULT_STATE_DIR)


def cache_dir() -> Path:
    return Path(os.environ.get("ROCM_FLEET_CACHE") or DEFAULT_CACHE_DIR)


def inventory_dir() -> Path:
    """The lab's inventory: ROCM_FLEET_LAB_INVENTORY, else the checkout's (neither artifact carries it)."""
    configured = os.environ.get("ROCM_FLEET_LAB_INVENTORY")
    if configured:
        return Path(configured)
    return checkout_path("inventory/lab", "the lab's inventory", variable="ROCM_FLEET_LAB_INVENTORY")


def host_dir(name: str) -> Path:
    return state_dir() / "hosts" / name


def ssh_dir() -> Path:
    return state_dir() / "ssh"


def mirror_port() -> int:
    """The mirror's port; a second lab (molecule's) sets ROCM_FLEET_LAB_MIRROR_PORT to run beside the first."""
    return int(os.environ.get("ROCM_FLEET_LAB_MIRROR_PORT") or DEFAULT_MIRROR_PORT)
