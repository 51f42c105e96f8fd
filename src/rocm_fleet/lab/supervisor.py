"""The per-host supervisor: boots a lab host, serves its kernel, boots it again after a reboot.

One supervisor runs per host, detached (own session), as
``python -m rocm_fleet.lab.supervisor NAME``. Each boot derives the host's kernel
state from its files (kernelstate), renders its hardware (hwsys) and starts
systemd-nspawn (rocm_fleet.lab.nspawn), whose first process lays that state over
the host's /proc and /sys and execs the host's systemd. The host ends a boot
itself (``systemctl reboot``, ``shutdown -r``: nspawn exits 133; a poweroff: 0);
the supervisor then boots it again or stops.

Requests arrive as files in the host's control directory, which the host sees as
/run/rocm-fleet-lab: ``requests/*.json`` (modprobe and udevadm trigger from the
guest's stand-ins, rerender from the lab's faults).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

from rocm_fleet.lab import health_state, hwsys, kernels, kernelstate, nspawn, partitions, paths, systems, wakeup
from rocm_fleet.lab.host import recorded_system, write_pid_file

PR_SET_PDEATHSIG = 1
# The supervisor sleeps until a request, a partition write, nspawn's exit or a signal wakes it (rocm_fleet.lab.wakeup);
# it looks at its files anyway this often, should an event ever be missed.
IDLE_SECONDS = 5.0
# How long the host's first process may take to lay out its kernel view, and its systemd to halt.
START_SECONDS = 60
HALT_SECONDS = 15


def _die_with_parent() -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def write_json(path: Path, data: dict) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True))
    temporary.rename(path)


class Supervisor:
    def __init__(self, name: str):
        self.name = name
        self.dir = paths.host_dir(name)
        self.root = self.dir / "root"
        self.run_dir = self.dir / "run"
        self.control = self.dir / "control"
        self.config = json.loads((self.dir / "host.json").read_text())
        self.stopping = False
        self.child: subprocess.Popen | None = None
        self.init_pid: int | None = None  # the host's pid 1 as the machine sees it
        self.cgroups: list[Path] = []  # the host's own cgroups, found at the first boot
        self.modules: list[str] = []
        self.amdgpu: dict | None = None
        self.kernel = kernels.machine_kernel()
        self.status: dict = {}
        # The partition files the last render wrote ({path: mode}): a host's write to one is a mode change.
        self.partition_files: dict[str, str] = {}
        self.partition_stamps: dict[str, tuple] = {}  # what partitions.written last read of each
        self.wakeup: wakeup.Wakeup | None = None  # set by run(), before the first boot
        self.child_fd: int | None = None  # a pidfd of nspawn: readable once it exits

    # -- boot ---------------------------------------------------------------
    def boot(self) -> None:
        faults = hwsys.read_json(self.dir / "faults.json", {})
        shutil.rmtree(self.run_dir, ignore_errors=True)
        self.run_dir.mkdir(parents=True)
        shutil.rmtree(self.control, ignore_errors=True)
        for inbox in ("requests", "replies"):
            (self.control / inbox).mkdir(parents=True)
        if self.wakeup is not None:
            self.wakeup.watch(self.control / "requests", wakeup.ARRIVED)
        boot_loader = systems.system(recorded_system(self.config)).boot_loader
        cmdline = kernelstate.kernel_cmdline(self.root, consume_next_entry=True, boot_loader=boot_loader)
        # The kernel this boot runs: the boot loader's default, which may be one amdgpu has no module for.
        self.kernel = kernels.booted_kernel(cmdline)
        proc_sys = self.run_dir / "proc-sys"
        boot_id = kernelstate.fresh_proc_sys(paths.state_dir() / "proc-sys", proc_sys, self.name, self.kernel)
        (self.run_dir / "cmdline").write_text(cmdline + "\n")
        has_gpu = hwsys.gpu_count(self.config["profile"], faults) > 0
        loaded = kernelstate.amdgpu_loads_at_boot(self.root, cmdline, has_gpu, faults.get("amdgpu_unloaded", False))
        refusal = self._amdgpu_refusal() if loaded else None
        loaded = loaded and refusal is None
        self.amdgpu = self._amdgpu_state(cmdline) if loaded else None
        if loaded:  # a boot loads amdgpu: a requested memory partition mode applies
            self._partitions_driver_loaded()
        self.modules = kernelstate.boot_modules(self.root, loaded)
        self._write_modules()
        nodes = self._render()
        self._start_nspawn()
        if self.init_pid is not None:
            self._sync_nodes(nodes)
        (self.control / "devices-ready").touch()
        self.status = {
            "state": "running",
            "boot_id": boot_id,
            "booted_at": time.time(),
            "cmdline": cmdline,
            "amdgpu_loaded": loaded,
            "amdgpu_refused": refusal,
            "kernel": self.kernel,
            "supervisor_pid": os.getpid(),
            "nspawn_pid": self.child.pid,
            "init_pid": self.init_pid,
            "port": self.config["port"],
            "profile": self.config["profile"],
        }
        write_json(self.dir / "status.json", self.status)

    def _start_nspawn(self) -> None:
        """Start nspawn in the host's own cgroup; wait until the boot shim has laid out the kernel view."""
        self.cgroups = self.cgroups or nspawn.host_cgroups(self.name)
        nspawn.kill_cgroups(self.cgroups, timeout=2)  # what a crashed boot may have left
        nspawn.prepare_cgroups(self.cgroups)
        argv = nspawn.command(self.name, self.root, self.control, self.run_dir)
        cgroups = self.cgroups

        def in_host_cgroup() -> None:
            _die_with_parent()
            nspawn.enter_cgroups(cgroups)

        with open(self.dir / "boot.log", "ab") as log:
            self.child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=in_host_cgroup,
                close_fds=True,
                cwd="/",
                env={**os.environ, **nspawn.ENVIRONMENT},
            )
        self.child_fd = wakeup.process_fd(self.child.pid)
        self.init_pid = None
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and self.child.poll() is None:
            if (self.control / "booting").exists():
                self.init_pid = nspawn.container_init(self.child.pid)
                if self.init_pid is not None:
                    return
            time.sleep(0.02)

    def _dev(self) -> Path:
        return Path(f"/proc/{self.init_pid}/root/dev")

    def _sync_nodes(self, nodes: list[dict], retrigger: bool = False) -> None:
        if self.init_pid is None:
            return
        hwsys.sync_gpu_nodes(self._dev(), nodes, self.root, self.run_dir / "sys", retrigger=retrigger)

    def _amdgpu_state(self, cmdline: str, extra_options: list[str] = ()) -> dict:
        options = dict(kernelstate.modprobe_config(self.root)["options"].get(kernelstate.AMDGPU, {}))
        for key, value in kernelstate.cmdline_parameters(cmdline).items():
            if key.startswith("amdgpu."):
                options[key.removeprefix("amdgpu.")] = value
        for option in extra_options:
            key, _, value = option.partition("=")
            options[key] = value
        return {"version": kernelstate.dkms_amdgpu_version(self.root, self.kernel), "options": options}

    def _amdgpu_refusal(self) -> str | None:
        """modprobe's message when amdgpu cannot load into this boot's kernel (no module, rejected key)."""
        profile = hwsys.load_faulted_profile(self.config["profile"], hwsys.read_json(self.dir / "faults.json", {}))
        trusted = health_state.trusted_module_keys(profile)
        return kernels.amdgpu_refusal(self.root, self.kernel, profile.secure_boot, trusted)

    def _render(self) -> list[dict]:
        faults = hwsys.read_json(self.dir / "faults.json", {})
        state = partitions.read_state(self.dir)
        nodes = hwsys.render_sys(self.config["profile"], faults, self.amdgpu, self.run_dir / "sys", state)
        self.partition_files = {}
        self.partition_stamps = {}
        if self.amdgpu is not None:
            profile = partitions.apply_modes(hwsys.load_faulted_profile(self.config["profile"], faults), state)
            self.partition_files = partitions.rendered_files(self.run_dir / "sys", profile)
            if self.wakeup is not None:  # a render makes the files and their directories anew
                for directory in sorted({os.path.dirname(path) for path in self.partition_files}):
                    self.wakeup.watch(directory, wakeup.WRITTEN)
        return nodes

    # -- partition modes (rocm_fleet.lab.partitions) -------------------------
    def _partition_writes(self) -> None:
        """A mode the host wrote to amdgpu's partition files: applied (compute) or requested (memory)."""
        change = partitions.written(self.partition_files, self.partition_stamps) if self.partition_files else None
        if change is None:
            return
        faults = hwsys.read_json(self.dir / "faults.json", {})
        state = partitions.read_state(self.dir)
        profile = partitions.apply_modes(hwsys.load_faulted_profile(self.config["profile"], faults), state)
        state, refusals = partitions.on_write(state, change, profile)
        partitions.write_state(self.dir, state)
        for refusal in refusals:  # the real write fails with EINVAL; the kernel log says why
            with open(self.dir / "boot.log", "a") as log:
                log.write("amdgpu: partition mode refused: %s\n" % refusal)
        if set(change) == {"memory"}:
            # Only requested: nothing repartitions, the files read the current mode again (no re-render,
            # which on 64 partitions would hold up the modprobe that follows).
            partitions.restore_files(self.partition_files)
            return
        self._sync_nodes(self._render())

    def _partitions_driver_loaded(self) -> None:
        faults = hwsys.read_json(self.dir / "faults.json", {})
        state = partitions.read_state(self.dir)
        if state.get("requested_memory"):
            profile = partitions.apply_modes(hwsys.load_faulted_profile(self.config["profile"], faults), state)
            partitions.write_state(self.dir, partitions.on_driver_load(state, profile))

    def _write_modules(self) -> None:
        # Written in place: the file is bind-mounted as the host's /proc/modules. The copy in the
        # control directory serves lsmod on kernels that have no /proc/modules to cover.
        text = kernelstate.proc_modules_text(self.modules)
        for path in (self.run_dir / "modules", self.control / "modules"):
            with open(path, "w") as handle:
                handle.write(text)

    # -- running ------------------------------------------------------------
    def watch(self) -> str:
        """Serve requests until this boot ends; return why: reboot, poweroff, stop or crashed."""
        while not self.stopping:
            status = self.child.poll()
            if status is not None:
                if status == nspawn.REBOOT_STATUS:
                    return "reboot"
                return "poweroff" if status == 0 else "crashed"
            for request_path in sorted((self.control / "requests").glob("*.json")):
                self._serve(request_path)
            self._partition_writes()
            self.wakeup.wait(IDLE_SECONDS, self.child_fd)
        return "stop"

    def _serve(self, request_path: Path) -> None:
        request = hwsys.read_json(request_path, {})
        request_path.unlink(missing_ok=True)
        try:
            reply = self._handle(request)
        except Exception:  # a broken request must not take the host down
            reply = {"rc": 1, "stderr": traceback.format_exc()}
        write_json(self.control / "replies" / request_path.name, reply)

    def _handle(self, request: dict) -> dict:
        action, module = request.get("action"), request.get("module", "")
        if action == "rerender":
            if request.get("boot_default_amdgpu"):
                faults = hwsys.read_json(self.dir / "faults.json", {})
                wanted = kernelstate.amdgpu_loads_at_boot(
                    self.root,
                    self.status["cmdline"],
                    hwsys.gpu_count(self.config["profile"], faults) > 0,
                    faults.get("amdgpu_unloaded", False),
                )
                self._set_amdgpu(wanted and self._amdgpu_refusal() is None, [])
            self._sync_nodes(self._render())
            return {"rc": 0}
        if action == "udev-trigger":
            # udevadm trigger: the rules run again for every GPU node, as for a new device.
            self._sync_nodes(self._render(), retrigger=True)
            return {"rc": 0}
        if action == "load":
            return self._load(module, request.get("options", []), request.get("dry_run"), request.get("first_time"))
        if action == "unload":
            if module in self.modules and not request.get("dry_run"):
                if module == kernelstate.AMDGPU:
                    self._set_amdgpu(False, [])
                else:
                    self.modules.remove(module)
                    self._write_modules()
            return {"rc": 0}
        return {"rc": 1, "stderr": f"lab supervisor: unknown request {action!r}\n"}

    def _load(self, module: str, options: list[str], dry_run: bool, first_time: bool) -> dict:
        if module in self.modules:
            if first_time:
                return {"rc": 1, "stderr": f"modprobe: ERROR: could not insert '{module}': Module already in kernel\n"}
            return {"rc": 0}
        config = kernelstate.modprobe_config(self.root)
        if kernelstate.install_refuses(config, module):
            command = config["install"][module]
            return {
                "rc": 1,
                "stderr": f"modprobe: ERROR: Error running install command '{command}' for module {module}\n",
            }
        refusal = self._amdgpu_refusal() if module == kernelstate.AMDGPU else None
        if refusal:
            return {"rc": 1, "stderr": refusal + "\n"}
        if not dry_run:
            if module == kernelstate.AMDGPU:
                self._set_amdgpu(True, options)
            else:
                self.modules.append(module)
                self._write_modules()
        return {"rc": 0}

    def _set_amdgpu(self, loaded: bool, options: list[str]) -> None:
        self.amdgpu = self._amdgpu_state(self.status["cmdline"], options) if loaded else None
        if loaded:  # amdgpu loads again: a requested memory partition mode applies
            self._partitions_driver_loaded()
        base = [name for name in self.modules if name not in (kernelstate.AMDGPU, *kernelstate.AMDGPU_DEPENDENCIES)]
        self.modules = base + ([*kernelstate.AMDGPU_DEPENDENCIES, kernelstate.AMDGPU] if loaded else [])
        self._write_modules()
        self._sync_nodes(self._render())
        self.status["amdgpu_loaded"] = loaded
        write_json(self.dir / "status.json", self.status)

    # -- ending a boot ------------------------------------------------------
    def halt(self) -> None:
        """End the boot: nspawn asks the host's systemd to halt; what is left of the host is killed."""
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)
            try:
                self.child.wait(timeout=HALT_SECONDS)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
        nspawn.kill_cgroups(self.cgroups)
        nspawn.remove_cgroups(self.cgroups)
        nspawn.forget_machine(self.name)
        self.init_pid = None
        if self.child_fd is not None:
            os.close(self.child_fd)
            self.child_fd = None

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGINT, self._on_term)
        self.wakeup = wakeup.Wakeup()
        write_pid_file(self.dir / "supervisor.pid", os.getpid())
        try:
            while not self.stopping:
                self.boot()
                outcome = self.watch()
                self.halt()
                if outcome in ("poweroff", "stop"):
                    break
                if outcome == "crashed":
                    time.sleep(1)  # an init that keeps dying must not spin
        finally:
            self.halt()
            write_json(self.dir / "status.json", {**self.status, "state": "off", "stopped_at": time.time()})
            (self.dir / "supervisor.pid").unlink(missing_ok=True)
        return 0

    def _on_term(self, *_args) -> None:
        self.stopping = True


if __name__ == "__main__":
    sys.exit(Supervisor(sys.argv[1]).run())
