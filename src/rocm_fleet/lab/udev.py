"""What systemd-udevd would do to a lab host's GPU device nodes: owner, group and mode.

Lab hosts run no udev daemon, so the lab applies the host's own rules files itself,
at every boot, when a GPU appears (fault clear, driver load) and on ``udevadm trigger``.
Only what decides a node's permissions is evaluated:

* files from /etc/udev/rules.d, /run/udev/rules.d, /usr/lib/udev/rules.d and
  /lib/udev/rules.d, ordered by file name; a name in /etc hides the same name in
  /run and /lib, and a file linked to /dev/null (or empty) masks it, as udev does;
* matches: ACTION (always "add"), KERNEL, SUBSYSTEM, DRIVER, ATTR{}, ENV{} and the
  parent-chain keys KERNELS, SUBSYSTEMS, DRIVERS, ATTRS{} (all on one device of the
  chain), with ``==``/``!=``, shell globs and ``|`` alternatives; GOTO/LABEL;
* assignments: OWNER, GROUP, MODE with ``=`` (a later rule overrides) and ``:=`` (final).

A rule with a key that needs a program or the udev database (PROGRAM, RESULT, TEST,
TAG, SYSCTL, ...) as a match is skipped: the lab cannot decide it. Tags and what they
queue (the seat's ACL) are the real udev's to judge (tests/fleet_testing/udev_judge.py).

The lab bases carry Debian's udev package, as every real Debian machine does (it is
Priority important); for a root without it (no 50-udev-default.rules) the GPU lines of
Debian 12's (udev 252.39-1~deb12u2, /lib/udev/rules.d/50-udev-default.rules) stand in.
Debian 13's (udev 257.13-1~deb13u1, /usr/lib/udev/rules.d/50-udev-default.rules) has
the same drm, renderD and kfd lines, so one stand-in serves hosts of both releases.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

# Highest precedence first: a file name found in an earlier directory hides later ones.
RULES_DIRS = ("etc/udev/rules.d", "run/udev/rules.d", "usr/lib/udev/rules.d", "lib/udev/rules.d")
DEFAULT_RULES_NAME = "50-udev-default.rules"
DEBIAN12_DEFAULT_GPU_RULES = """\
ACTION=="remove", GOTO="default_end"
ACTION!="add", GOTO="default_end"
SUBSYSTEM=="drm", KERNEL!="renderD*", GROUP="video"
SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0660"
SUBSYSTEM=="kfd", GROUP="render", MODE="0660"
LABEL="default_end"
"""
PERMISSION_KEYS = ("OWNER", "GROUP", "MODE")
PARENT_KEYS = ("KERNELS", "SUBSYSTEMS", "DRIVERS", "ATTRS")
DEVICE_KEYS = ("ACTION", "KERNEL", "SUBSYSTEM", "DRIVER", "ATTR", "ENV")
_TOKEN = re.compile(r'\s*([A-Z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')


class RulesError(ValueError):
    pass


@dataclass(frozen=True)
class Token:
    key: str
    attribute: str | None
    operator: str
    value: str


@dataclass(frozen=True)
class Rule:
    source: str  # "file:line", for messages
    tokens: tuple[Token, ...]

    def get(self, key: str) -> str | None:
        return next((token.value for token in self.tokens if token.key == key), None)


@dataclass(frozen=True)
class SysDevice:
    """One device of a sysfs chain: its name, subsystem, driver and attribute files."""

    kernel: str
    subsystem: str = ""
    driver: str = ""
    attributes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Device:
    """The device a node belongs to: ``chain[0]`` is the device itself, then its parents."""

    chain: tuple[SysDevice, ...]
    properties: dict = field(default_factory=dict)  # uevent/ENV properties


@dataclass
class Permissions:
    owner: str | None = None
    group: str | None = None
    mode: int | None = None
    final: set = field(default_factory=set)


def parse_rules(text: str, name: str = "<rules>") -> list[Rule]:
    """Rules of one file; continuation lines joined, comments and blank lines dropped."""
    rules = []
    logical, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not logical:
            start = number
        if line.endswith("\\"):
            logical += line[:-1]
            continue
        logical += line
        stripped = logical.strip()
        logical = ""
        if not stripped or stripped.startswith("#"):
            continue
        rules.append(Rule(f"{name}:{start}", _tokens(stripped, f"{name}:{start}")))
    return rules


def _tokens(line: str, where: str) -> tuple[Token, ...]:
    tokens, position = [], 0
    while position < len(line):
        match = _TOKEN.match(line, position)
        if not match:
            raise RulesError(f"{where}: cannot parse {line[position:]!r}")
        key, attribute, operator, value = match.groups()
        tokens.append(Token(key, attribute, operator, value.replace('\\"', '"')))
        position = match.end()
    return tuple(tokens)


def rules_files(root: Path) -> list[tuple[str, str]]:
    """(file name, text) of the host's rules in udev's order, after masking and /etc overrides."""
    chosen: dict[str, Path] = {}
    for directory in RULES_DIRS:
        folder = root / directory
        if folder.is_symlink():
            continue  # /lib -> usr/lib in a merged-/usr system: the same files again
        for path in sorted(folder.glob("*.rules")) if folder.is_dir() else ():
            chosen.setdefault(path.name, path)
    files = []
    for name, path in chosen.items():
        if path.is_symlink() and os.readlink(path) == "/dev/null":
            continue
        files.append((name, path.read_text(errors="replace")))
    if DEFAULT_RULES_NAME not in chosen:
        files.append((DEFAULT_RULES_NAME, DEBIAN12_DEFAULT_GPU_RULES))
    return sorted(files)


def load_rules(root: Path) -> list[tuple[str, list[Rule]]]:
    return [(name, parse_rules(text, name)) for name, text in rules_files(root)]


def _glob_match(pattern: str, value: str) -> bool:
    return any(fnmatch.fnmatchcase(value, alternative) for alternative in pattern.split("|"))


def _compare(token: Token, value: str | None) -> bool:
    matched = _glob_match(token.value, (value or "").rstrip())
    return matched if token.operator == "==" else not matched


def _matches(rule: Rule, device: Device, action: str) -> bool:
    own = device.chain[0]
    parent_tokens = []
    for token in rule.tokens:
        if token.operator not in ("==", "!="):
            continue
        if token.key in PARENT_KEYS:
            parent_tokens.append(token)
            continue
        if token.key not in DEVICE_KEYS:
            return False  # PROGRAM, RESULT, TEST, TAG, ...: not decidable here
        value = {
            "ACTION": action,
            "KERNEL": own.kernel,
            "SUBSYSTEM": own.subsystem,
            "DRIVER": own.driver,
            "ATTR": own.attributes.get(token.attribute or ""),
            "ENV": device.properties.get(token.attribute or ""),
        }[token.key]
        if not _compare(token, value):
            return False
    if not parent_tokens:
        return True
    return any(all(_compare(token, _parent_value(token, link)) for token in parent_tokens) for link in device.chain)


def _parent_value(token: Token, link: SysDevice) -> str | None:
    if token.key == "ATTRS":
        return link.attributes.get(token.attribute or "")
    return {"KERNELS": link.kernel, "SUBSYSTEMS": link.subsystem, "DRIVERS": link.driver}[token.key]


def evaluate(rule_files: list[tuple[str, list[Rule]]], device: Device, action: str = "add") -> Permissions:
    """OWNER/GROUP/MODE the rules give ``device`` (None where no rule sets one)."""
    result = Permissions()
    for _name, rules in rule_files:
        skip_to = None
        for rule in rules:
            label = rule.get("LABEL")
            if skip_to is not None:
                if label == skip_to:
                    skip_to = None
                continue
            if label is not None and len(rule.tokens) == 1:
                continue
            if not _matches(rule, device, action):
                continue
            for token in rule.tokens:
                if token.key in PERMISSION_KEYS and token.operator in ("=", ":=", "+="):
                    _assign(result, token)
            skip_to = rule.get("GOTO")
    return result


def _assign(result: Permissions, token: Token) -> None:
    key = token.key
    if key in result.final:
        return
    if token.operator == ":=":
        result.final.add(key)
    if key == "MODE":
        try:
            result.mode = int(token.value, 8)
        except ValueError:
            return  # udev ignores an invalid mode
    elif key == "OWNER":
        result.owner = token.value
    else:
        result.group = token.value


# -- the device a node belongs to, read from the rendered /sys ------------------
_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def device_from_sys(sys_dir: Path, subsystem: str, name: str) -> Device:
    """The device behind /sys/class/<subsystem>/<name>, with its parents up to /sys/devices."""
    path = (sys_dir / "class" / subsystem / name).resolve()
    devices = (sys_dir / "devices").resolve()
    chain = [_sys_device(path, subsystem)]
    parent = path.parent
    while parent != devices and devices in parent.parents:
        if parent.name != "drm":  # class directories below a device are not devices
            chain.append(_sys_device(parent, ""))
        parent = parent.parent
    properties = dict(_uevent(path))
    properties.update(SUBSYSTEM=subsystem, DEVPATH="/" + str(path.relative_to(sys_dir.resolve())))
    return Device(tuple(chain), properties)


def _sys_device(path: Path, subsystem: str) -> SysDevice:
    link = path / "subsystem"
    if not subsystem:
        subsystem = os.path.basename(os.readlink(link)) if link.is_symlink() else ""
        if not subsystem and _PCI_ADDRESS.match(path.name):
            subsystem = "pci"
    driver = path / "driver"
    attributes = {}
    for entry in path.iterdir() if path.is_dir() else ():
        if entry.is_file() and not entry.is_symlink() and entry.name != "uevent":
            try:
                attributes[entry.name] = entry.read_text(errors="replace").rstrip()
            except OSError:
                continue
    return SysDevice(
        path.name,
        subsystem,
        os.path.basename(os.readlink(driver)) if driver.is_symlink() else "",
        attributes,
    )


def _uevent(path: Path) -> list[tuple[str, str]]:
    try:
        lines = (path / "uevent").read_text().splitlines()
    except OSError:
        return []
    return [tuple(line.split("=", 1)) for line in lines if "=" in line]


# -- from rule results to numbers --------------------------------------------------
def node_ownership(root: Path, permissions: Permissions, kernel_mode: int | None) -> tuple[int, int, int]:
    """(uid, gid, mode) as udev applies them; names resolve in the host's own passwd and group.

    An unknown name is ignored, as udev does ("Unknown group ..., ignoring"). Without a MODE
    the kernel's devnode mode (DEVMODE, e.g. amdkfd's 0666) stays, else 0660 with a group
    and 0600 without one (systemd's udev_node_apply_permissions).
    """
    uid = _lookup(root / "etc" / "passwd", permissions.owner)
    gid = _lookup(root / "etc" / "group", permissions.group)
    mode = permissions.mode
    if mode is None:
        mode = kernel_mode if kernel_mode is not None else (0o660 if gid is not None else 0o600)
    return uid or 0, gid or 0, mode


def _lookup(database: Path, name: str | None) -> int | None:
    if not name:
        return None
    if name.isdigit():
        return int(name)
    try:
        for line in database.read_text().splitlines():
            fields = line.split(":")
            if len(fields) >= 3 and fields[0] == name and fields[2].isdigit():
                return int(fields[2])
    except OSError:
        pass
    return None
