"""Kernel-facing state of a lab host, derived at each boot from the host's own files.

A real kernel takes its command line from the bootloader, its module options from
/etc/modprobe.d and its sysctl values from /proc/sys. The lab reproduces these
from the host's root so roles run unchanged, and never touches the real kernel.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import uuid
from pathlib import Path

AMDGPU = "amdgpu"
# What `lsmod` shows on a GPU-less Debian 12 server: a plausible, stable baseline.
BASE_MODULES = ("overlay", "nls_ascii", "ext4", "crc16", "mbcache", "jbd2", "nvme", "nvme_core")
PER_INTERFACE_KEPT = ("all", "default", "lo")
AMDGPU_DEPENDENCIES = ("amdxcp", "drm_buddy", "gpu_sched", "drm_ttm_helper", "ttm", "drm_display_helper")


def snapshot_proc_sys(destination: Path, source: Path = Path("/proc/sys")) -> None:
    """Copy every readable /proc/sys entry (value and mode) into ``destination``.

    Write-only entries (vm/drop_caches) become empty files with their mode, so a
    write to them lands somewhere harmless too.
    """
    building = destination.with_name(destination.name + ".build")
    shutil.rmtree(building, ignore_errors=True)
    for directory, subdirs, files in os.walk(source):
        relative = Path(directory).relative_to(source)
        if relative.parts[:1] == ("net",) and relative.name in ("conf", "neigh"):
            # The machine's own interfaces mean nothing inside a host; keep the generic entries.
            subdirs[:] = [name for name in subdirs if name in PER_INTERFACE_KEPT]
        (building / relative).mkdir(parents=True, exist_ok=True)
        for name in files:
            entry = Path(directory) / name
            try:
                mode = entry.stat().st_mode & 0o777
                value = entry.read_bytes() if mode & 0o444 else b""
            except OSError:
                continue
            target = building / relative / name
            target.write_bytes(value)
            target.chmod(mode | 0o200)
    shutil.rmtree(destination, ignore_errors=True)
    building.rename(destination)


def fresh_proc_sys(snapshot: Path, destination: Path, hostname: str, release: str | None = None) -> str:
    """Start a boot's /proc/sys from the snapshot; return the new boot_id.

    ``release``: the kernel this boot runs (kernel/osrelease); ``uname -r`` stays the machine's.
    """
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(snapshot, destination)
    boot_id = str(uuid.uuid4())
    (destination / "kernel" / "random").mkdir(parents=True, exist_ok=True)
    (destination / "kernel" / "random" / "boot_id").write_text(boot_id + "\n")
    (destination / "kernel" / "hostname").write_text(hostname + "\n")
    if release:
        (destination / "kernel" / "osrelease").write_text(release + "\n")
    return boot_id


_MENU = re.compile(r"^\s*(menuentry|submenu)\s+(['\"])(.*?)\2(.*)\{\s*$")
_MENU_ID = re.compile(r"\$menuentry_id_option\s+'([^']+)'")
_SET_DEFAULT = re.compile(r'^\s*set\s+default="([^"]*)"')
GRUBENV = "boot/grub/grubenv"
# Where grub.cfg and grubenv live per boot loader that writes a grub.cfg (systems.LabSystem.boot_loader): Debian's
# and Ubuntu's /boot/grub, SUSE's /boot/grub2.
GRUB_DIRECTORIES = {"grub": "boot/grub", "grub2": "boot/grub2"}


def grub_menu(text: str) -> list[dict]:
    """grub.cfg's menu as GRUB builds it: [{title, id, linux (fields of its linux line), children}]."""
    top: list[dict] = []
    stack = [top]
    current = None
    for line in text.splitlines():
        found = _MENU.match(line)
        if found:
            ident = _MENU_ID.search(found.group(4))
            item = {"title": found.group(3), "id": ident.group(1) if ident else None, "linux": None, "children": None}
            stack[-1].append(item)
            if found.group(1) == "submenu":
                item["children"] = []
                stack.append(item["children"])
            else:
                current = item
            continue
        fields = line.split()
        if current is not None and len(fields) >= 2 and fields[0] in ("linux", "linuxefi") and not current["linux"]:
            current["linux"] = fields[1:]
        elif line.strip() == "}":
            if current is not None:
                current = None
            elif len(stack) > 1:
                stack.pop()
    return top


def _menu_pick(menu: list[dict], wanted: str) -> dict | None:
    """The entry GRUB's ``default`` names: an index, id or title per menu level, levels joined by '>'.

    A bare id or title is looked up in the top level only (a submenu's entry needs "submenu>entry").
    """
    items, chosen = menu, None
    for part in wanted.split(">"):
        if part.isdigit():
            chosen = items[int(part)] if int(part) < len(items) else None
        else:
            chosen = next((item for item in items if part in (item["id"], item["title"])), None)
        if chosen is None:
            return None
        items = chosen["children"] or []
    return chosen if chosen and chosen["children"] is None else None


def _first_entry(menu: list[dict]) -> dict | None:
    for item in menu:
        if item["children"] is None:
            return item
        found = _first_entry(item["children"])
        if found:
            return found
    return None


def read_grubenv(root: Path, grubenv: str = GRUBENV) -> dict[str, str]:
    path = root / grubenv
    text = path.read_text(errors="replace") if path.is_file() else ""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))


def write_grubenv(root: Path, env: dict[str, str], grubenv: str = GRUBENV) -> None:
    """As GRUB's save_env writes the block: 1024 bytes, '#' padding."""
    body = "# GRUB Environment Block\n" + "".join(f"{key}={value}\n" for key, value in env.items())
    (root / grubenv).write_text(body + "#" * max(0, 1024 - len(body.encode())))


def boot_entry(root: Path, consume_next_entry: bool = False, boot_loader: str = "grub") -> dict | None:
    """The menu entry a boot runs: grubenv's next_entry once (cleared, as save_env next_entry does,
    when ``consume_next_entry``), else grub.cfg's default (``${saved_entry}`` from grubenv); an entry
    that is not found boots the first one, as GRUB falls back to entry 0.

    ``boot_loader`` "bls" (systems.LabSystem.boot_loader): the same from the Boot Loader Spec entries
    and /boot/grub2/grubenv, as GRUB's blscfg picks them (rocm_fleet.lab.bls); "grub2": SUSE's /boot/grub2.
    """
    if boot_loader == "bls":
        from rocm_fleet.lab import bls  # bls reads grubenv with this module's functions

        return bls.boot_entry(root, consume_next_entry)
    directory = GRUB_DIRECTORIES[boot_loader]
    grubenv = f"{directory}/grubenv"
    grub_cfg = root / directory / "grub.cfg"
    if not grub_cfg.exists():
        return None
    text = grub_cfg.read_text(errors="replace")
    menu = grub_menu(text)
    env = read_grubenv(root, grubenv)
    defaults = [m.group(1) for m in map(_SET_DEFAULT.match, text.splitlines()) if m]
    wanted = next((value for value in defaults if value != "${next_entry}"), "0")
    if "${next_entry}" in defaults and env.get("next_entry"):
        wanted = env["next_entry"]
        if consume_next_entry:
            env["next_entry"] = ""
            write_grubenv(root, env, grubenv)
    elif wanted == "${saved_entry}":
        wanted = env.get("saved_entry", "")
    return (_menu_pick(menu, wanted) if wanted else None) or _first_entry(menu)


def kernel_cmdline(root: Path, consume_next_entry: bool = False, boot_loader: str = "grub") -> str:
    """/proc/cmdline as GRUB would pass it: the linux line of the entry this boot runs (boot_entry).

    Only grub.cfg (or the BLS entries) and grubenv count: an /etc/default/grub edit without
    update-grub (or grubby) has no effect.
    """
    release = os.uname().release
    fallback = f"BOOT_IMAGE=/boot/vmlinuz-{release} ro quiet"
    entry = boot_entry(root, consume_next_entry, boot_loader)
    if not entry or not entry["linux"]:
        return fallback
    return " ".join([f"BOOT_IMAGE={entry['linux'][0]}", *entry["linux"][1:]])


def cmdline_parameters(cmdline: str) -> dict[str, str]:
    parameters = {}
    for word in cmdline.split():
        key, _, value = word.partition("=")
        parameters[key] = value
    return parameters


def modprobe_config(root: Path) -> dict:
    """blacklist/install/options of /etc/modprobe.d, /run/modprobe.d and /usr/lib/modprobe.d (kmod's order)."""
    chosen: dict[str, Path] = {}
    for directory in ("usr/lib/modprobe.d", "run/modprobe.d", "etc/modprobe.d"):
        for path in sorted((root / directory).glob("*.conf")):
            chosen[path.name] = path  # a later directory overrides a file of the same name
    config = {"blacklist": set(), "install": {}, "options": {}}
    for name in sorted(chosen):
        text = chosen[name].read_text(errors="replace").replace("\\\n", " ")
        for line in text.splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            if len(words) >= 2 and words[0] == "blacklist":
                config["blacklist"].add(words[1].replace("-", "_"))
            elif len(words) >= 3 and words[0] == "install":
                config["install"][words[1].replace("-", "_")] = " ".join(words[2:])
            elif len(words) >= 3 and words[0] == "options":
                options = config["options"].setdefault(words[1].replace("-", "_"), {})
                for option in words[2:]:
                    key, _, value = option.partition("=")
                    options[key] = value
    return config


def install_refuses(config: dict, module: str) -> bool:
    """`install amdgpu /bin/false` (or true): the usual way to forbid loading a module at all."""
    command = config["install"].get(module, "")
    return bool(re.match(r"^(/usr)?/bin/(false|true)\b", command))


def modules_load_list(root: Path) -> list[str]:
    names = []
    sources = [root / "etc" / "modules"] + sorted((root / "etc" / "modules-load.d").glob("*.conf"))
    for path in sources:
        if path.is_file():
            for line in path.read_text(errors="replace").splitlines():
                word = line.split("#", 1)[0].strip()
                if word and not word.startswith(";"):
                    names.append(word.replace("-", "_"))
    return names


def dkms_amdgpu_version(root: Path, release: str | None = None) -> str | None:
    """The version the DKMS-built amdgpu for the running (or ``release``) kernel reports, None for the in-tree driver.

    Contract with the lab mirror's amdgpu-dkms package: it leaves
    /var/lib/dkms/amdgpu/<dkms ver>/<kernel>/x86_64/module/amdgpu.ko and
    /lib/modules/<kernel>/updates/dkms/amdgpu.ko, text stubs whose ``version=`` line is
    the module's own version (6.16.13 for dkms 6.16.13-2327507.24.04), as modinfo and
    /sys/module/amdgpu/version show it. A stub without one reports the dkms version.
    """
    release = release or os.uname().release
    if not any((root / "usr/lib/modules" / release / "updates/dkms").glob("amdgpu.ko*")):
        return None
    built = sorted(
        (root / "var/lib/dkms/amdgpu").glob(f"*/{release}/*/module/amdgpu.ko*"),
        key=lambda path: [int(part) if part.isdigit() else part for part in re.split(r"[.-]", path.parents[3].name)],
    )
    if not built:
        return None
    stub = built[-1].read_text(errors="replace") if built[-1].is_file() else ""
    version = re.search(r"^version=(\S+)$", stub, re.MULTILINE)
    return version.group(1) if version else built[-1].parents[3].name


def amdgpu_loads_at_boot(root: Path, cmdline: str, has_gpu: bool, forced_unloaded: bool) -> bool:
    """Whether udev would load amdgpu for the host's GPUs at this boot."""
    if not has_gpu or forced_unloaded:
        return False
    parameters = cmdline_parameters(cmdline)
    blacklisted_on_cmdline = AMDGPU in parameters.get("modprobe.blacklist", "").split(",")
    if blacklisted_on_cmdline or parameters.get("amdgpu.modeset") == "0":
        return False
    config = modprobe_config(root)
    if install_refuses(config, AMDGPU):
        return False
    # A blacklist stops loading by alias (udev), not an explicit modules-load.d entry.
    return AMDGPU not in config["blacklist"] or AMDGPU in modules_load_list(root)


def proc_modules_text(loaded: list[str]) -> str:
    """/proc/modules lines: name size refcount holders state address."""
    holders = {dependency: AMDGPU for dependency in AMDGPU_DEPENDENCIES} if AMDGPU in loaded else {}
    lines = []
    for index, name in enumerate(loaded):
        user = holders.get(name)
        used_by = f"1 {user}," if user else "0 -"
        lines.append(f"{name} {65536 + 4096 * index} {used_by} Live 0x0000000000000000")
    return "\n".join(lines) + "\n"


def boot_modules(root: Path, amdgpu_loaded: bool) -> list[str]:
    modules = list(BASE_MODULES)
    if amdgpu_loaded:
        modules += [*AMDGPU_DEPENDENCIES, AMDGPU]
    config = modprobe_config(root)
    for name in modules_load_list(root):
        if name != AMDGPU and name not in modules and not install_refuses(config, name):
            modules.append(name)
    return modules
