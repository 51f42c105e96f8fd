"""Lab control: make the running lab match the inventory, report on it, take it all down."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rocm_fleet.lab import base, cleanup, inventory, kernelstate, layer, nspawn, paths, systems
from rocm_fleet.lab.host import HostSpec, LabHost, recorded_system

READY_TIMEOUT_SECONDS = 90
# Hosts boot side by side on the controller's cores: each one started adds its share of the wait.
READY_SECONDS_PER_STARTED_HOST = 3


def ready_timeout(started: int) -> float:
    """Seconds for every host just started to answer ssh: one systemd boot, plus each host's share of the CPU."""
    return READY_TIMEOUT_SECONDS + READY_SECONDS_PER_STARTED_HOST * started


def _ensure_controller_key() -> str:
    key = paths.ssh_dir() / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rocm-fleet-lab", "-f", str(key)], check=True
        )
    return key.with_suffix(".pub").read_text()


def _known_hosts(hosts: list[LabHost]) -> None:
    lines = [host.host_key_line() for host in hosts]
    target = paths.ssh_dir() / "known_hosts"
    target.write_text("\n".join(lines) + "\n")


def existing_hosts() -> list[LabHost]:
    """Hosts that have a directory in the state dir (running or not), with their recorded spec."""
    found = []
    for host_json in sorted((paths.state_dir() / "hosts").glob("*/host.json")):
        data = json.loads(host_json.read_text())
        spec = HostSpec(
            data["name"],
            data["profile"],
            data["port"],
            generated=data["name"].startswith("scale-"),
            system=recorded_system(data),
        )
        found.append(LabHost(spec))
    return found


def _mirror():
    """The lab mirror module and its info; (None, None) without it or with ROCM_FLEET_LAB_MIRROR=off."""
    if os.environ.get("ROCM_FLEET_LAB_MIRROR", "on") == "off":
        return None, None
    try:
        from rocm_fleet.lab import mirror
    except ImportError:
        return None, None
    return mirror, mirror.ensure_mirror(paths.state_dir(), paths.cache_dir(), port=paths.mirror_port())


def _boot_loader(system: str) -> str:
    return systems.system(system).boot_loader


def _reinstall_if_system_changed(host: LabHost) -> str | None:
    """A host whose disk holds another system than the inventory names is reinstalled (disk dropped)."""
    installed = host.installed_system()
    if installed is None or installed == host.spec.system:
        return None
    host.stop()
    host.erase_disk()
    return f"{host.spec.name} ({installed} -> {host.spec.system})"


def up(extra_hosts: int = 0, log=print) -> dict:
    """Start what the inventory (plus ``extra_hosts`` generated hosts) has and the lab lacks; stop the rest."""
    started_at = time.monotonic()
    wanted = inventory.desired_hosts(extra_hosts)
    nspawn.require_engine()
    nspawn.cgroup_roots()  # both say what to install or mount before anything changes
    paths.state_dir().mkdir(parents=True, exist_ok=True)
    bases = base.ensure_bases({spec.system for spec in wanted}, log=log)
    # One layer per boot loader: a host gets the boot tools of its system's family only.
    layers = {loader: layer.ensure_layer(loader) for loader in {_boot_loader(spec.system) for spec in wanted}}
    public_key = _ensure_controller_key()
    if not (paths.state_dir() / "proc-sys").exists():
        kernelstate.snapshot_proc_sys(paths.state_dir() / "proc-sys")
    mirror, mirror_info = _mirror()
    if mirror:
        mirror.start_mirror(mirror_info)

    wanted_names = {spec.name for spec in wanted}
    stopped = []
    for host in existing_hosts():
        if host.spec.name not in wanted_names and host.is_running():
            host.stop()
            host.unmount()
            stopped.append(host.spec.name)

    hosts = [LabHost(spec) for spec in wanted]
    reinstalled = [change for change in map(_reinstall_if_system_changed, hosts) if change]
    started = []
    for host in hosts:
        if host.is_running():
            continue
        host.mount_root(bases[host.spec.system], layers[_boot_loader(host.spec.system)])
        host.configure(public_key)
        if mirror:
            # The archive of the host's own system, as a cloud image's distro source.
            mirror.install_distro_source(host.root, mirror_info, systems.system(host.spec.system))
        host.start()
        started.append(host.spec.name)
    _known_hosts(hosts)
    generated_inventory = None
    if extra_hosts:
        generated_inventory = inventory.write_generated_inventory(wanted, paths.state_dir() / "inventory" / "scale.yml")

    deadline = time.monotonic() + ready_timeout(len(started))
    not_ready = [host.spec.name for host in hosts if not host.wait_ready(deadline)]
    ready = [host for host in hosts if host.spec.name not in not_ready]
    with ThreadPoolExecutor(max_workers=min(16, max(1, len(ready)))) as pool:
        # Each host's systemd at the end of its boot (running, or degraded with the failed units).
        states = pool.map(lambda host: host.system_state(wait=120), ready)
        systemd = dict(zip([host.spec.name for host in ready], states, strict=True))
    result = {
        "started": started,
        "stopped": stopped,
        "reinstalled": reinstalled,
        "already_up": [host.spec.name for host in hosts if host.spec.name not in started],
        "not_ready": not_ready,
        "systemd": systemd,
        "seconds": round(time.monotonic() - started_at, 1),
        "generated_inventory": str(generated_inventory) if generated_inventory else None,
        "mirror": mirror_info.base_url if mirror else None,
    }
    return result


def status() -> list[dict]:
    rows = []
    for host in existing_hosts():
        state = host.status()
        rows.append(
            {
                "host": host.spec.name,
                "state": state.get("state", "down"),
                "port": host.spec.port,
                "profile": host.spec.profile,
                "system": host.spec.system,
                "boot_id": state.get("boot_id") if state.get("state") == "running" else None,
                "pid": host.supervisor_pid(),
                "amdgpu": state.get("amdgpu_loaded"),
                "systemd": host.system_state() if state.get("state") == "running" else None,
            }
        )
    return rows


def down(log=print) -> dict:
    """Stop every lab process and remove every lab mount, whatever state a crash left."""
    try:
        from rocm_fleet.lab import mirror
        from rocm_fleet.lab.mirror.build import lab_mirror_info

        mirror.stop_mirror(lab_mirror_info())
    except ImportError:
        pass
    hosts = existing_hosts()
    stopping = [host.request_stop() for host in hosts]  # all at once: each takes about a second
    deadline = time.monotonic() + 15
    for pid in stopping:
        LabHost.wait_stopped(pid, deadline)
    leftover_processes = cleanup.kill_lab_processes()
    cleanup.remove_lab_cgroups()
    leftover_mounts = cleanup.remove_lab_mounts()
    for host in hosts:
        # A powered-off machine keeps its disk (upper layer), not its runtime state; run/ (a few
        # thousand small files) is left for the next boot to replace, which keeps down fast.
        shutil.rmtree(host.dir / "control", ignore_errors=True)
        (host.dir / "status.json").unlink(missing_ok=True)
    return {
        "stopped": [host.spec.name for host in hosts],
        "leftover_processes": leftover_processes,
        "leftover_mounts": leftover_mounts,
    }


def reset(log=print) -> dict:
    """down, then forget every host's disk: the next up starts from the base image again."""
    result = down(log=log)
    if result["leftover_mounts"]:
        raise RuntimeError(f"not resetting: still mounted: {result['leftover_mounts']}")
    shutil.rmtree(paths.state_dir() / "hosts", ignore_errors=True)
    shutil.rmtree(paths.state_dir() / "proc-sys", ignore_errors=True)
    shutil.rmtree(paths.state_dir() / "layers", ignore_errors=True)
    (paths.ssh_dir() / "known_hosts").unlink(missing_ok=True)
    return result


def start_host(host: LabHost, timeout: float = 60) -> bool:
    """Power one host on again (the `start` fault); True once its sshd answers."""
    host.mount_root(base.ensure_system_base(host.spec.system), layer.ensure_layer(_boot_loader(host.spec.system)))
    host.start()
    return host.wait_ready(time.monotonic() + timeout)


def host_by_name(name: str) -> LabHost:
    for host in existing_hosts():
        if host.spec.name == name:
            return host
    raise KeyError(f"no lab host {name!r}; `rocm-fleet lab status` lists them")


def state_path() -> Path:
    return paths.state_dir()
