# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The environment a job really gets: a listed user's login shell and the systemd manager's services.

The environment role writes its own files; what a job gets is what every file,
the user's dotfiles and the manager's runtime state add up to. The checker asks
the host (as root, with a timeout):

* login: ``runuser -l USER -c 'printf MARKER; env -0'`` (``su -`` where runuser
  is missing; ``-s /bin/sh`` for a user whose shell is nologin), so the variables
  are the ones the login shell exports after /etc/profile, /etc/profile.d and the
  user's dotfiles;
* service: ``systemctl show-environment``, the manager environment every service
  starts from.

It also reads the files those come from (/etc/environment, /etc/profile,
/etc/profile.d/*.sh, /etc/bash.bashrc and the user's dotfiles; the manager's
DefaultEnvironment in system.conf and its drop-ins, /etc/environment.d), which
name the file and line of a setting and stand in when the command cannot run.
What neither shows is unknown, never a pass.

The decisions are the pure functions ``override_problems`` and
``rocm_path_problems``; ``decide`` turns views into a state.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re
import shlex

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import (
    CheckError,
    CommandUnavailable,
    failed,
    passed,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, UNKNOWN

OVERRIDE_NAME = re.compile(r"^HSA_OVERRIDE_GFX_VERSION(?:_(\d+))?$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
# Words after which a shell word NAME=VALUE is an assignment (export A=1, if ...; then A=1).
_BEFORE_ASSIGNMENT = ("export", "readonly", "declare", "typeset", "local", "-x", "-gx", "-rx", ";", "then", "do",
                      "else", "&&", "||", "{", "(")
# Written before the environment, so whatever a profile script prints is not taken for a variable.
MARKER = "\x1erocm-fleet-env\x1e"
LOGIN_COMMAND = "printf '\\036rocm-fleet-env\\036'; exec env -0"
RUNUSER = ("/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser", "/bin/runuser")
SU = ("/usr/bin/su", "/bin/su")
SYSTEMCTL = ("/usr/bin/systemctl", "/bin/systemctl")
NOLOGIN_SHELLS = ("nologin", "false")
FALLBACK_SHELL = "/bin/sh"

# Files a login shell reads, in the order it reads them (bash.bashrc only for interactive shells).
LOGIN_FILES = ("/etc/environment", "/etc/profile", "/etc/profile.d/*.sh", "/etc/bash.bashrc")
USER_FILES = (".pam_environment", ".profile", ".bash_profile", ".bash_login", ".bashrc")
# The system manager's DefaultEnvironment, in the order systemd reads it (later wins, an empty value resets).
MANAGER_FILES = ("/etc/systemd/system.conf", "/usr/lib/systemd/system.conf.d/*.conf",
                 "/run/systemd/system.conf.d/*.conf", "/etc/systemd/system.conf.d/*.conf")
# Read by the user managers (systemd --user), whose services a user's jobs may be.
USER_MANAGER_FILES = ("/usr/lib/environment.d/*.conf", "/etc/environment.d/*.conf")


# ---- parsers of what the host prints or holds --------------------------------------------------------------


def parse_env0(text):
    """{name: value} from ``env -0`` output, after the last MARKER when there is one."""
    if text is None:
        return None
    if MARKER in text:
        text = text.rsplit(MARKER, 1)[1]
    environment = {}
    for entry in text.split("\0"):
        match = _ASSIGNMENT.match(entry)
        if match:
            environment[match.group(1)] = match.group(2)
    return environment


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "e": "\x1b",
            "f": "\f", "v": "\v"}


def _ansi_c(text):
    """The value of a $'...' word (as systemctl show-environment quotes a value with special characters)."""
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if following == "x":
                digits = re.match(r"[0-9a-fA-F]{1,2}", text[index + 2:])
                if digits:
                    out.append(chr(int(digits.group(0), 16)))
                    index += 2 + len(digits.group(0))
                    continue
            if following in _ESCAPES:
                out.append(_ESCAPES[following])
                index += 2
                continue
        out.append(char)
        index += 1
    return "".join(out)


def parse_manager_environment(text):
    """{name: value} from ``systemctl show-environment``: NAME=VALUE lines, values with specials as $'...'."""
    environment = {}
    for line in (text or "").splitlines():
        match = _ASSIGNMENT.match(line)
        if not match:
            continue
        value = match.group(2)
        if value.startswith("$'") and value.endswith("'") and len(value) >= 3:
            value = _ansi_c(value[2:-1])
        environment[match.group(1)] = value
    return environment


def _words(line):
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|(){}")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:  # an unbalanced quote: split on blanks, as far as the line goes
        return line.split("#", 1)[0].split()


def shell_assignments(text, path):
    """[{name, value, path, line}] of the variables a shell file assigns, as written (no expansion).

    A static reading: ``export A=1``, ``A=1; export A``, ``if ...; then export A=1; fi`` on one line. What a
    script computes (a loop, a sourced file) is what the login shell's own environment shows.
    """
    found = []
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or "=" not in stripped:
            continue
        previous_assigned = False
        words = _words(stripped)
        for position, word in enumerate(words):
            match = _ASSIGNMENT.match(word)
            # export A=1 B=2: a word after an assignment is one too.
            if match and (position == 0 or previous_assigned or words[position - 1] in _BEFORE_ASSIGNMENT):
                found.append({"name": match.group(1), "value": match.group(2), "path": path, "line": number})
                previous_assigned = True
            else:
                previous_assigned = False
    return found


def environment_file_assignments(text, path):
    """[{name, value, path, line}] of a KEY=VALUE file (/etc/environment, environment.d, ~/.pam_environment)."""
    found = []
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("export "):
            stripped = stripped[len("export "):].strip()
        match = _ASSIGNMENT.match(stripped)
        if not match or stripped.startswith("#"):
            continue
        value = match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        found.append({"name": match.group(1), "value": value, "path": path, "line": number})
    return found


def manager_default_environment(files):
    """[{name, value, path, line}] in effect from ``[(path, text)]`` in systemd's reading order.

    ``DefaultEnvironment=`` in the [Manager] section adds its NAME=VALUE words; an empty one drops what the
    files before it set; a later setting of a name replaces the earlier one.
    """
    effective = []
    for path, text in files:
        section = None
        for number, line in enumerate((text or "").splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith("[") and stripped.endswith("]"):
                section = stripped[1:-1].strip()
                continue
            if section != "Manager" or not stripped.startswith("DefaultEnvironment"):
                continue
            key, equals, value = stripped.partition("=")
            if not equals or key.strip() != "DefaultEnvironment":
                continue
            if not value.strip():
                effective = []
                continue
            try:
                words = shlex.split(value)
            except ValueError:
                words = value.split()
            for word in words:
                match = _ASSIGNMENT.match(word)
                if match:
                    effective = [entry for entry in effective if entry["name"] != match.group(1)]
                    effective.append({"name": match.group(1), "value": match.group(2), "path": path,
                                      "line": number})
    return effective


# ---- the decisions -------------------------------------------------------------------------------------------


def where(assignment):
    return "%s:%d" % (assignment["path"], assignment["line"])


UNSET_LOGIN = " (from no file read: set by a script or PAM)"
# The system manager's environment: DefaultEnvironment, or systemctl set-environment; a setting removed from the
# files stays until the manager reads them again.
UNSET_MANAGER = (" (in no DefaultEnvironment file now: set by systemctl set-environment, or removed from the files "
                 "and gone at the next daemon-reexec or boot)")


def origin_of(name, value, assignments, unset=None):
    """' (from /etc/profile.d/x.sh:3)' for the last file that sets ``name`` (to ``value`` when one does).

    With ``unset`` only a file that sets that very value is named, else ``unset`` is the origin (the
    manager's files are all it reads: one with another value is not where the running value came from).
    """
    setting = [entry for entry in assignments if entry["name"] == name]
    same = [entry for entry in setting if value is None or entry["value"] == value]
    chosen = (same if unset is not None else same or setting)[-1:]
    return " (from %s)" % where(chosen[0]) if chosen else unset or UNSET_LOGIN


def _not_needed_reason(name, needed, gfx_targets):
    targets = ", ".join(gfx_targets) if gfx_targets else "the host's GPUs"
    if not needed:
        return ("%s: ROCm supports %s natively, and an override makes the runtime load another target's code "
                "objects" % (name, targets))
    return "%s: this host needs only %s" % (name, ", ".join("%s=%s" % item for item in sorted(needed.items())))


def override_problems(environment, needed, gfx_targets=(), assignments=(), what="the environment", unset=None):
    """[message] for each HSA override in ``environment`` that the GPUs do not need, or with another value.

    ``needed`` is what preflight decided (HSA_OVERRIDE_GFX_VERSION or HSA_OVERRIDE_GFX_VERSION_<node>, name to
    value); anything else of those names fails, as AMD's ``rocm diagnose`` treats an override on a natively
    supported target. A needed override that is missing fails too.
    """
    problems = []
    for name in sorted(environment):
        if not OVERRIDE_NAME.match(name):
            continue
        value = environment[name]
        origin = origin_of(name, value, assignments, unset)
        if name not in needed:
            problems.append("%s has %s=%s%s, not wanted: %s" % (
                what, name, value, origin, _not_needed_reason(name, needed, gfx_targets)))
        elif str(needed[name]) != value:
            problems.append("%s has %s=%s%s, expected %s" % (what, name, value, origin, needed[name]))
    for name in sorted(needed):
        if name not in environment:
            problems.append("%s lacks %s, expected %s" % (what, name, needed[name]))
    return problems


def file_override_problem(entry, needed, gfx_targets=()):
    """The message for a file line that sets an HSA override the GPUs do not need, or another value; else None."""
    name, value = entry["name"], entry["value"]
    if not OVERRIDE_NAME.match(name):
        return None
    if name not in needed:
        return "%s sets %s=%s, not wanted: %s" % (where(entry), name, value,
                                                  _not_needed_reason(name, needed, gfx_targets))
    if str(needed[name]) != value and "$" not in value:
        return "%s sets %s=%s, expected %s" % (where(entry), name, value, needed[name])
    return None


def file_override_problems(assignments, needed, gfx_targets=(), pending=()):
    """[message] for each file line that sets an HSA override the GPUs do not need, or another value.

    ``pending``: the DefaultEnvironment settings the running manager does not have yet
    (``pending_default_environment``); a problem of one of them says so, and what applies it.
    """
    waiting = dict(((entry["path"], entry["line"], entry["name"]), entry) for entry in pending)
    problems = []
    for entry in assignments:
        message = file_override_problem(entry, needed, gfx_targets)
        if message is None:
            continue
        key = (entry["path"], entry["line"], entry["name"])
        if key in waiting:
            message += " (%s)" % pending_note(waiting[key])
        problems.append(message)
    return problems


# What applies a DefaultEnvironment setting to the running manager (systemd-system.conf(5)).
PENDING_APPLY = "systemctl daemon-reexec or the next boot applies it"


def pending_default_environment(configured, environment):
    """[{name, value, running, path, line}]: the DefaultEnvironment settings in effect in the files
    (``manager_default_environment``) that the running manager's environment lacks or has with another value.

    The manager reads its configuration at start and at ``daemon-reexec``; a file written since waits until then.
    """
    return [dict(entry, running=environment.get(entry["name"])) for entry in configured
            if environment.get(entry["name"]) != entry["value"]]


def pending_note(entry):
    """'pending: the running manager has none yet; systemctl daemon-reexec or the next boot applies it'."""
    running = "none" if entry["running"] is None else "%s=%s" % (entry["name"], entry["running"])
    return "pending: the running manager has %s yet; %s" % (running, PENDING_APPLY)


def pending_problem(entry):
    """A pending setting that is no problem of its own: written, not applied."""
    return "pending: %s sets %s=%s, the running manager has %s (%s)" % (
        where(entry), entry["name"], entry["value"],
        "none" if entry["running"] is None else "%s=%s" % (entry["name"], entry["running"]), PENDING_APPLY)


# The install root of a ROCm release: /opt/rocm-7.2.3 (the legacy stream), /opt/rocm/core-10.1 (the Core SDK's).
RELEASE_ROOT = re.compile(r"^(/opt/rocm-[^/]+|/opt/rocm/core-[^/]+)(?:/|$)")


def other_release_root(host, path, is_default):
    """The install root of another release than the default that ``path`` lies in (as written or where its links
    lead on the host), or None."""
    normalized = os.path.normpath(path) if path else ""
    for candidate in (normalized, _resolved(host, normalized) if normalized.startswith("/") else None):
        match = RELEASE_ROOT.match(candidate or "")
        if match:
            return None if is_default(match.group(1)) else match.group(1)
    return None


def library_path_problems(host, environment, is_default, assignments=(), what="the environment", unset=None):
    """[message] for each LD_LIBRARY_PATH entry in another release's install root: the loader takes it before its
    cache, so a job gets that release's runtime whatever /etc/ld.so.conf.d says (ROCM-ENV-008's concern)."""
    value = (environment or {}).get("LD_LIBRARY_PATH")
    if not value:
        return []
    others = [entry for entry in value.split(":") if entry and other_release_root(host, entry, is_default)]
    if not others:
        return []
    return ["%s has LD_LIBRARY_PATH with %s%s: another release's libraries, which the loader takes before its "
            "cache" % (what, ", ".join(others), origin_of("LD_LIBRARY_PATH", value, assignments, unset))]


def file_library_path_problems(host, assignments, is_default):
    """The same for file lines that set LD_LIBRARY_PATH (as written: what a shell would expand is not judged)."""
    problems = []
    for entry in assignments:
        if entry["name"] != "LD_LIBRARY_PATH":
            continue
        others = [part for part in entry["value"].split(":")
                  if part and "$" not in part and other_release_root(host, part, is_default)]
        if others:
            problems.append("%s sets LD_LIBRARY_PATH with %s: another release's libraries, which the loader takes "
                            "before its cache" % (where(entry), ", ".join(others)))
    return problems


def rocm_bin_entries(path_value, rocm_path, release_dir):
    """The PATH entries that are a ROCm bin directory: /opt/rocm*/bin (the legacy stream's releases),
    /opt/rocm/core*/bin (the Core SDK's), <rocm_path>/bin, <release_dir>/bin."""
    known = set(os.path.normpath(directory) + "/bin" for directory in (rocm_path, release_dir) if directory)
    entries = []
    for entry in (path_value or "").split(":"):
        normalized = os.path.normpath(entry) if entry else ""
        if normalized in known or re.match(r"^/opt/rocm(?:[^/]*|/core[^/]*)/bin$", normalized):
            entries.append(normalized)
    return entries


def rocm_path_problems(environment, rocm_path, release_dir, is_default, require_rocm_path=True,
                       require_path=True, what="the environment"):
    """[message] unless ROCM_PATH and the first ROCm directory on PATH are the default release.

    ``is_default(directory)`` says whether a directory is the default release (/opt/rocm, the release
    directory it links to, or the same file). PATH without a ROCm directory fails when ``require_path``.
    """
    problems = []
    value = environment.get("ROCM_PATH")
    if value is None:
        if require_rocm_path:
            problems.append("%s lacks ROCM_PATH, expected %s" % (what, rocm_path))
    elif not is_default(value):
        problems.append("%s has ROCM_PATH=%s, not the default release %s%s" % (
            what, value, rocm_path, " (%s)" % release_dir if release_dir else ""))
    if "PATH" not in environment:
        if require_path:
            problems.append("%s has no PATH" % what)
        return problems
    entries = rocm_bin_entries(environment["PATH"], rocm_path, release_dir)
    if not entries:
        if require_path:
            problems.append("%s has no ROCm directory on PATH, expected %s/bin" % (what, rocm_path))
    elif not is_default(os.path.dirname(entries[0])):
        problems.append("%s finds %s first on PATH, not the default release's %s/bin" % (
            what, entries[0], rocm_path))
    return problems


def decide(views):
    """(state, message) from views: [{what, problems, unavailable}] where unavailable is a reason or None.

    Any problem fails; otherwise anything not seen is unknown; otherwise pass.
    """
    problems, unknown = [], []
    for view in views:
        problems.extend(message for message in view["problems"] if message not in problems)
        if view.get("unavailable"):
            unknown.append("%s: %s" % (view["what"], view["unavailable"]))
    if problems:
        message = "; ".join(problems)
        if unknown:
            message += "; not seen: %s" % "; ".join(unknown)
        return FAIL, message
    if unknown:
        return UNKNOWN, "unknown: %s; the files read set nothing wrong" % "; ".join(unknown)
    return PASS, "; ".join(view["what"] for view in views) + ": as expected"


# ---- reading the host -----------------------------------------------------------------------------------------


def _expanded_files(host, patterns):
    paths = []
    for pattern in patterns:
        if any(char in pattern for char in "*?["):
            root = host.root.rstrip("/")
            for full in sorted(glob.glob(host.path(pattern))):
                paths.append(full[len(root):] if root else full)
        else:
            paths.append(pattern)
    return paths


def _read(host, path):
    try:
        return host.read_text(path)
    except CheckError:
        return None


def _shell_file_assignments(host, paths):
    found = []
    for path in paths:
        text = _read(host, path)
        if text is None:
            continue
        parse = environment_file_assignments if path.endswith(("/environment", ".pam_environment")) else \
            shell_assignments
        found.extend(parse(text, path))
    return found


def login_argv(host, user, shell):
    """The command that starts ``user``'s login shell and prints its environment; None without runuser or su."""
    shell_args = ["-s", FALLBACK_SHELL] if not shell or os.path.basename(shell) in NOLOGIN_SHELLS else []
    runuser = host.executable(RUNUSER)
    if runuser:
        return [runuser, "-l"] + shell_args + [user, "-c", LOGIN_COMMAND]
    su = host.executable(SU)
    if su:
        return [su, "-"] + shell_args + [user, "-c", LOGIN_COMMAND]
    return None


def login_environment(host, user, shell, timeout):
    """(environment or None, reason it could not be read or None); read once per host view (every check of the
    module call that asks for the same user gets the same reading)."""
    return host.cached(("login_environment", user, shell, timeout),
                       lambda: _login_environment(host, user, shell, timeout))


def _login_environment(host, user, shell, timeout):
    if host.is_live and hasattr(os, "geteuid") and os.geteuid() != 0:
        return None, "not root (run with become), so no login shell can be started for %s" % user
    argv = login_argv(host, user, shell)
    if argv is None:
        return None, "neither runuser nor su is installed"
    try:
        rc, out, err = host.run(argv, timeout)
    except CommandUnavailable as exc:
        return None, str(exc)
    if rc != 0 or MARKER not in out:
        detail = (err or out or "").strip().splitlines()
        return None, "%s exited %d%s" % (" ".join(argv[:2]), rc, ": %s" % detail[-1][:200] if detail else "")
    return parse_env0(out), None


def manager_environment(host, timeout):
    """(environment or None, reason or None) of ``systemctl show-environment``, read once per host view."""
    return host.cached(("manager_environment", timeout), lambda: _manager_environment(host, timeout))


def _manager_environment(host, timeout):
    systemctl = host.executable(SYSTEMCTL)
    if systemctl is None:
        return None, "systemctl is not installed"
    try:
        rc, out, err = host.run([systemctl, "show-environment"], timeout)
    except CommandUnavailable as exc:
        return None, str(exc)
    if rc != 0:
        detail = (err or out or "").strip().splitlines()
        return None, "systemctl show-environment exited %d%s" % (rc, ": %s" % detail[0][:200] if detail else "")
    return parse_manager_environment(out), None


def _resolved(host, path, hops=40):
    """The host path ``path`` resolves to inside root (links followed, absolute ones against root), or None."""
    parts = [part for part in os.path.normpath("/" + path).split("/") if part]
    resolved = "/"
    while parts and hops > 0:
        candidate = os.path.join(resolved, parts.pop(0))
        full = host.path(candidate)
        if os.path.islink(full):
            hops -= 1
            target = os.readlink(full)
            base = "/" if target.startswith("/") else resolved
            parts = [part for part in os.path.normpath(os.path.join(base, target)).split("/") if part] + parts
            resolved = "/"
            continue
        if not os.path.exists(full):
            return None
        resolved = candidate
    return None if parts else os.path.normpath(resolved)


def default_release_test(host, rocm_path, release_dir):
    """is_default(directory) for rocm_path_problems: the same name, or the same directory on the host."""
    names = set(os.path.normpath(directory) for directory in (rocm_path, release_dir) if directory)
    targets = set(filter(None, (_resolved(host, directory) for directory in names)))

    def is_default(directory):
        if not directory or "$" in directory:
            return False
        normalized = os.path.normpath(directory)
        if normalized in names:
            return True
        resolved = _resolved(host, normalized)
        return resolved is not None and resolved in targets

    return is_default


def booted_with_systemd(host):
    """sd_booted(3)'s own test: systemd as PID 1 creates /run/systemd/system/ early at boot."""
    return os.path.isdir(host.path("/run/systemd/system"))


def check_job_environment(expect, host):
    if expect["scope"] == "login":
        views, actual = _login_views(expect, host)
    elif not booted_with_systemd(host):
        # A container or a host with another init: no systemd service is started, so none gets an environment.
        return {"status": "skipped", "actual": {"booted_with_systemd": False}, "diff": "", "action": "",
                "message": "not booted with systemd (no /run/systemd/system): no service manager environment to check"}
    else:
        views, actual = _service_views(expect, host)
    state, message = decide(views)
    if state == FAIL:
        outcome = failed(actual, message, action="none")
        outcome.update(_pending_repair(views[0].get("pending")) if expect["scope"] == "service" else {})
        return outcome
    if state == UNKNOWN:
        return {"status": "unknown", "actual": actual, "message": message, "diff": "", "action": ""}
    return passed(actual, message)


def _pending_repair(pending):
    """What repairs a failed service check whose findings are pending DefaultEnvironment settings.

    ``pending``: {"own": [...], "foreign": [...], "own_only": bool}; own_only when applying the role's own file
    would leave nothing wrong: site.yml re-executes the manager where the role's drop-in waits (the environment
    role's check of ROCM-ENV-006's pending settings, tasks/main.yml), so it is the repair.
    """
    if not pending or not (pending["own"] or pending["foreign"]):
        return {}
    own = sorted(set(entry["path"] for entry in pending["own"]))
    foreign = sorted(set(entry["path"] for entry in pending["foreign"]))
    site = "site.yml re-executes the systemd manager (systemctl daemon-reexec) where %s is not applied yet" % (
        " and ".join(own))
    if pending["own_only"]:
        return {"repair": site, "action": "reexec"}
    notes = [site] if own else []
    if foreign:
        notes.append("a person applies the pending settings of %s (systemctl daemon-reexec, or the next boot) or "
                     "removes them" % ", ".join(foreign))
    return {"repair_also": "; ".join(notes)}


def _override_names(environment):
    return dict((name, value) for name, value in sorted((environment or {}).items())
                if OVERRIDE_NAME.match(name) or name in ("ROCM_PATH", "PATH", "LD_LIBRARY_PATH"))


def _login_views(expect, host):
    needed, targets = expect["hsa_overrides"], expect["gfx_targets"]
    is_default = default_release_test(host, expect["rocm_path"], expect["release_dir"])
    system_files = _expanded_files(host, LOGIN_FILES)
    system_assignments = _shell_file_assignments(host, system_files)
    views, actual = [], {"files": system_files, "users": {}}
    system_problems = file_override_problems(system_assignments, needed, targets)
    for user in expect["users"]:
        what = "the login shell of %s" % user
        account = host.user(user)
        if account is None:
            # Not a failure of its own: a listed user that does not exist is ROCM-ACCESS-002's finding.
            views.append({"what": what, "problems": [], "unavailable": "user %s does not exist" % user})
            continue
        home = account["home"] or "/"
        dotfiles = [os.path.join(home, name) for name in USER_FILES]
        assignments = system_assignments + _shell_file_assignments(host, dotfiles)
        user_problems = file_override_problems(assignments[len(system_assignments):], needed, targets)
        environment, reason = (None, "not run (run: false)") if not expect["run"] else \
            login_environment(host, user, account["shell"], expect["timeout"])
        problems = list(system_problems) + user_problems
        if environment is not None:
            problems = override_problems(environment, needed, targets, assignments, what) + problems
            problems += rocm_path_problems(environment, expect["rocm_path"], expect["release_dir"], is_default,
                                           what=what)
            libraries = library_path_problems(host, environment, is_default, assignments, what)
        else:
            # Without the shell's own environment only literal ROCM_PATH settings in files can be judged.
            problems += ["%s sets ROCM_PATH=%s, not the default release %s" % (where(entry), entry["value"],
                                                                               expect["rocm_path"])
                         for entry in assignments
                         if entry["name"] == "ROCM_PATH" and "$" not in entry["value"]
                         and not is_default(entry["value"])]
            libraries = file_library_path_problems(host, assignments, is_default)
        problems += libraries
        actual["users"][user] = {"environment": _override_names(environment), "read": reason is None,
                                 "reason": reason, "other_release_libraries": len(libraries)}
        views.append({"what": what, "problems": problems, "unavailable": reason})
    return views, actual


def _service_views(expect, host):
    needed, targets = expect["hsa_overrides"], expect["gfx_targets"]
    is_default = default_release_test(host, expect["rocm_path"], expect["release_dir"])
    manager_files = _expanded_files(host, MANAGER_FILES)
    configured = manager_default_environment([(path, _read(host, path)) for path in manager_files])
    user_files = _expanded_files(host, USER_MANAGER_FILES)
    user_assignments = _shell_file_assignments(host, user_files)
    what = "the systemd manager environment"
    environment, reason = (None, "not run (run: false)") if not expect["run"] else \
        manager_environment(host, expect["timeout"])
    require_rocm_path = expect["require_rocm_path"]
    pending, pending_view = [], None
    files_problems = file_library_path_problems(host, configured + user_assignments, is_default)
    if environment is not None:
        # Written but not applied: the manager reads the files at its start and at daemon-reexec.
        pending = pending_default_environment(configured, environment)
        problems = _running_problems(host, environment, expect, is_default, configured)
        problems += file_override_problems(configured + user_assignments, needed, targets, pending) + files_problems
        problems += [pending_problem(entry) for entry in pending
                     if file_override_problem(entry, needed, targets) is None]
        own = [entry for entry in pending if entry["path"] in expect["role_files"]]
        foreign = [entry for entry in pending if entry["path"] not in expect["role_files"]]
        # Whether the role's own file, applied, leaves nothing wrong: then site.yml is the repair.
        applied = dict(environment, **dict((entry["name"], entry["value"]) for entry in own))
        own_only = bool(own) and not foreign and not (
            _running_problems(host, applied, expect, is_default, configured)
            + file_override_problems(configured + user_assignments, needed, targets) + files_problems)
        pending_view = {"own": own, "foreign": foreign, "own_only": own_only}
    else:
        problems = file_override_problems(configured + user_assignments, needed, targets) + files_problems
        # What the manager takes at its next start or reload; the running one may differ, so unknown at best.
        configured_environment = dict((entry["name"], entry["value"]) for entry in configured)
        origin = [where(entry) for entry in configured if entry["name"] == "ROCM_PATH"]
        problems += rocm_path_problems(configured_environment, expect["rocm_path"], expect["release_dir"],
                                       is_default, require_rocm_path=require_rocm_path, require_path=False,
                                       what="the DefaultEnvironment in effect%s" % (
                                           " (ROCM_PATH from %s)" % origin[0] if origin else ""))
    actual = {"environment": _override_names(environment), "read": reason is None, "reason": reason,
              "default_environment": dict((entry["name"], where(entry)) for entry in configured),
              "pending": [dict((key, entry[key]) for key in ("name", "value", "running", "path", "line"))
                          for entry in pending],
              "files": manager_files + user_files}
    return [{"what": what, "problems": problems, "unavailable": reason, "pending": pending_view}], actual


def _running_problems(host, environment, expect, is_default, configured):
    """What is wrong with the running manager's ``environment``: HSA overrides, ROCM_PATH and PATH, LD_LIBRARY_PATH."""
    what = "the systemd manager environment"
    problems = override_problems(environment, expect["hsa_overrides"], expect["gfx_targets"], configured, what,
                                 UNSET_MANAGER)
    problems += rocm_path_problems(environment, expect["rocm_path"], expect["release_dir"], is_default,
                                   require_rocm_path=expect["require_rocm_path"], require_path=False, what=what)
    return problems + library_path_problems(host, environment, is_default, configured, what, UNSET_MANAGER)
