# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is amdgpu disabled for the next boot? modprobe.d and the kernel command line of the boot loader.

A ``blacklist amdgpu`` file passes every check of the running host and loses the
GPUs at the next boot, so it is reported as pending before that reboot, with
the file and line that does it. What disables amdgpu, and what only looks so:

* modprobe.d (kmod, modprobe.d(5)): ``blacklist amdgpu`` stops the load by
  alias, which is how udev loads it at boot; ``install amdgpu CMD`` runs CMD
  instead of loading (``/bin/false``, ``/bin/true``), unless CMD itself runs
  modprobe on amdgpu. Only ``*.conf`` files count, and a file name in an
  earlier directory (/etc, /run, /usr/local/lib, /usr/lib, /lib) hides the same
  name in a later one. The initramfs holds its own copy from its last rebuild.
* the command line: ``modprobe.blacklist=`` (read by kmod), ``module_blacklist=``
  (the kernel refuses the module) and ``initcall_blacklist=amdgpu_init`` disable
  it. ``nomodeset`` stopped amdgpu on every GPU until Linux 6.15 (and AMD's DKMS
  driver of the same code); since then only display-class GPUs, and
  ``amdgpu.modeset=1`` overrides it: so it may disable (unknown). ``amdgpu.modeset=0``
  does nothing: amdgpu never tested modeset == 0, and since 6.15 the parameter
  only overrides nomodeset. It is listed, with no effect.
  The kernel stops reading parameters at ``--``; '-' and '_' are the same in names.

* modprobe_findings(files): findings of modprobe.d files ({path: text}).
* cmdline_findings(cmdline, path, line_no): findings of one command line.
* boot_cmdlines(path, text, kernel): the command lines of a boot loader file.
* amdgpu_disabled_next_boot(modprobe_files, boot_files, kernel): the verdict.

A finding is {file, line_no, line, effect, reason}, effect 'disables',
'may-disable' or 'none'. Stdlib only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re
import shlex

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import PASS, PENDING, UNKNOWN

MODPROBE_DIRS = (
    "/etc/modprobe.d",
    "/run/modprobe.d",
    "/usr/local/lib/modprobe.d",
    "/usr/lib/modprobe.d",
    "/lib/modprobe.d",
)
_GRUB_VAR = re.compile(r"^\s*(GRUB_CMDLINE_LINUX(?:_DEFAULT)?)=(.*)$")
_GRUB_LINUX = re.compile(r"^\s*(?:linux|linuxefi|linux16)\s+(\S+)\s*(.*)$")
_MODPROBE_RUN = re.compile(r"\bmodprobe\b.*(?:--ignore-install|\s-i\b).*\bamdgpu\b")


def _name(word):
    return word.replace("-", "_")


def _finding(path, line_no, line, effect, reason):
    return {"file": path, "line_no": line_no, "line": line.strip(), "effect": effect, "reason": reason}


def _logical_lines(text):
    """(first line number, joined line) with '\\' continuations joined and '#' comments dropped."""
    pending, start = "", None
    for number, raw in enumerate((text or "").splitlines(), 1):
        if start is None:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        line, pending = pending + raw, ""
        if line.strip() and not line.lstrip().startswith("#"):
            yield start, line
        start = None
    if pending.strip() and not pending.lstrip().startswith("#"):
        yield start, pending


def effective_modprobe_files(files):
    """The paths kmod reads, in its order: ``*.conf`` only, the first directory's copy of a name."""
    chosen = {}
    rank = {directory: index for index, directory in enumerate(MODPROBE_DIRS)}
    for path in sorted(files or {}, key=lambda p: (rank.get(posixpath.dirname(p), len(rank)), p)):
        name = posixpath.basename(path)
        if name.endswith(".conf") and len(name) > 5 and name not in chosen:
            chosen[name] = path
    return [chosen[name] for name in sorted(chosen)]


def modprobe_findings(files, module="amdgpu"):
    """Findings of the modprobe.d files ``{path: text}`` that touch ``module``."""
    findings = []
    for path in effective_modprobe_files(files):
        for line_no, line in _logical_lines(files[path]):
            words = line.split()
            if len(words) < 2 or _name(words[1]) != _name(module):
                continue
            command = words[0]
            if command == "blacklist":
                findings.append(
                    _finding(path, line_no, line, "disables", "blacklist %s stops its load by alias at boot" % module)
                )
            elif command == "install" and len(words) > 2:
                action = " ".join(words[2:])
                if _MODPROBE_RUN.search(action):
                    findings.append(
                        _finding(path, line_no, line, "none", "the install command still loads %s" % module)
                    )
                elif posixpath.basename(words[2]) in ("false", "true"):
                    findings.append(
                        _finding(
                            path,
                            line_no,
                            line,
                            "disables",
                            "install %s %s runs instead of loading it" % (module, words[2]),
                        )
                    )
                else:
                    findings.append(
                        _finding(
                            path,
                            line_no,
                            line,
                            "may-disable",
                            "install %s runs %r instead of loading it" % (module, action),
                        )
                    )
            elif command == "options" and any(_name(w) == "modeset=0" for w in words[2:]):
                findings.append(
                    _finding(
                        path, line_no, line, "none", "modeset=0 does not disable amdgpu (it only overrides nomodeset)"
                    )
                )
    return findings


def _params(cmdline):
    """The kernel's parameters of a command line, as (name, value or None); stops at '--'."""
    try:
        words = shlex.split(cmdline or "", posix=True)
    except ValueError:
        words = (cmdline or "").replace('"', " ").split()
    params = []
    for word in words:
        if word == "--":
            break
        name, equals, value = word.partition("=")
        params.append((_name(name), value if equals else None))
    return params


def cmdline_findings(cmdline, path=None, line_no=None, module="amdgpu"):
    """Findings of one kernel command line (from ``path`` at ``line_no`` when given)."""
    findings, params = [], _params(cmdline)
    mod = _name(module)
    override = ("%s.modeset" % mod, "1") in params
    for name, value in params:
        listed = [_name(v) for v in (value or "").split(",")]
        if name in ("modprobe.blacklist", "module_blacklist") and mod in listed:
            findings.append(_finding(path, line_no, cmdline, "disables", "%s=%s on the command line" % (name, value)))
        elif name == "initcall_blacklist" and "%s_init" % mod in listed:
            findings.append(_finding(path, line_no, cmdline, "disables", "initcall_blacklist=%s" % value))
        elif name == "nomodeset" and mod == "amdgpu":
            why = "nomodeset: before Linux 6.15 amdgpu refuses every GPU, since then display-class GPUs only%s" % (
                ", and amdgpu.modeset=1 overrides it there" if override else ""
            )
            findings.append(_finding(path, line_no, cmdline, "may-disable", why))
        elif name == "%s.modeset" % mod and value == "0":
            findings.append(
                _finding(
                    path,
                    line_no,
                    cmdline,
                    "none",
                    "amdgpu.modeset=0 does not disable amdgpu (it only overrides nomodeset)",
                )
            )
    return findings


def _unquote(value):
    try:
        words = shlex.split(value, comments=True, posix=True)
    except ValueError:
        return value.strip().strip("\"'")
    return " ".join(words)


def boot_cmdlines(path, text, kernel=None):
    """[(line_no, cmdline)] of a boot loader file, by its kind.

    /etc/default/grub and grub.d/*.cfg: GRUB_CMDLINE_LINUX and _DEFAULT (the
    default entry gets both; ``$GRUB_CMDLINE_LINUX`` references are left out).
    Boot Loader Spec entries (``/loader/entries/``): ``options`` lines. grub.cfg:
    the first ``linux`` line of ``kernel`` (grub-mkconfig writes the normal entry
    before the recovery one, which carries ``nomodeset`` on Ubuntu), or the first
    one without a kernel. Anything else (/etc/kernel/cmdline, /proc/cmdline): the text.
    """
    lines = list(enumerate((text or "").splitlines(), 1))
    if "/etc/default/grub" in path:
        found = [(n, _GRUB_VAR.match(line)) for n, line in lines]
        return [(n, " ".join(w for w in _unquote(m.group(2)).split() if not w.startswith("$"))) for n, m in found if m]
    if "/loader/entries/" in path:
        return [(n, line.strip()[len("options") :].strip()) for n, line in lines if line.strip().startswith("options ")]
    if posixpath.basename(path) == "grub.cfg":
        for n, line in lines:
            found = _GRUB_LINUX.match(line)
            if found and (not kernel or found.group(1).endswith("-" + kernel)):
                return [(n, found.group(2))]
        return []
    return [(n, line) for n, line in lines if line.strip() and not line.lstrip().startswith("#")]


def _where(finding):
    return "%s:%s: %s" % (finding["file"], finding["line_no"], finding["reason"])


def amdgpu_disabled_next_boot(modprobe_files, boot_files, kernel=None, module="amdgpu"):
    """{state, reason, findings}: 'pending' when the next boot will not load ``module``.

    ``modprobe_files`` and ``boot_files`` are {path: text} of what exists (a
    missing file is not in them). 'pending' names each file and line that
    disables it; 'unknown' when a line may disable it (nomodeset, an install
    command that is neither true/false nor modprobe); 'pass' otherwise.
    Findings with effect 'none' are kept so a report can say why they do not count.
    """
    findings = modprobe_findings(modprobe_files, module)
    for path in sorted(boot_files or {}):
        for line_no, cmdline in boot_cmdlines(path, boot_files[path], kernel):
            findings.extend(cmdline_findings(cmdline, path, line_no, module))
    disables = [_where(f) for f in findings if f["effect"] == "disables"]
    maybe = [_where(f) for f in findings if f["effect"] == "may-disable"]
    if disables:
        return {
            "state": PENDING,
            "findings": findings,
            "reason": "%s is disabled for the next boot: %s" % (module, "; ".join(disables)),
        }
    if maybe:
        return {
            "state": UNKNOWN,
            "findings": findings,
            "reason": "%s may be disabled for the next boot: %s" % (module, "; ".join(maybe)),
        }
    return {"state": PASS, "findings": findings, "reason": "nothing disables %s for the next boot" % module}
