"""The lab's /sys renders: a re-render replaces the tree a running host reads without a moment without it."""

from __future__ import annotations

import threading

from rocm_fleet.lab import hwsys

AMDGPU = {"version": None, "options": {}}


def test_a_re_render_never_shows_a_sys_without_its_gpus_or_amdgpu(tmp_path):
    """A partition write or a fault re-renders a running host's /sys; gpu facts or a drift reading it meanwhile must
    find the old tree or the new one, never an empty one (which reads as a host whose amdgpu is not loaded)."""
    destination = tmp_path / "sys"
    hwsys.render_sys("mi300x-8", {}, AMDGPU, destination)
    devices, module = destination / "bus" / "pci" / "devices", destination / "module" / "amdgpu"
    seen, done = [], threading.Event()

    def read_while_rendering():
        while not done.is_set():
            try:
                seen.append(len(list(devices.iterdir())) > 0 and module.is_dir())
            except FileNotFoundError:
                seen.append(False)

    reader = threading.Thread(target=read_while_rendering)
    reader.start()
    try:
        for _ in range(3):
            hwsys.render_sys("mi300x-8", {}, AMDGPU, destination)
    finally:
        done.set()
        reader.join()
    assert len(seen) > 100 and all(seen), f"{seen.count(False)} of {len(seen)} reads found no GPU or no amdgpu"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sys"]  # nothing left beside it


def test_what_a_new_render_no_longer_has_goes_and_the_kept_entries_stay(tmp_path):
    destination = tmp_path / "sys"
    hwsys.render_sys("mi300x-8", {}, AMDGPU, destination)
    (destination / "stale").mkdir()
    kept = destination / "fs" / "cgroup" / "marker"
    kept.write_text("the host's cgroup mount point is never touched\n")
    hwsys.render_sys("mi300x-8", {}, None, destination)  # amdgpu unloaded: no module/amdgpu
    assert not (destination / "stale").exists() and not (destination / "module" / "amdgpu").exists()
    assert kept.read_text().startswith("the host's cgroup") and (destination / "bus" / "pci" / "devices").is_dir()
