# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a failed apt install brought, to take back so that apt works again.

dpkg stops a transaction at the first package it refuses (a file another package owns, a failing
maintainer script) and leaves what it had unpacked so far unconfigured: every later apt call then
refuses to run ("Unmet dependencies"), an upgrade's restore among them. What goes: each package
dpkg left present but not installed, each package the failed task asked for that is installed now
and was not before, and a set that moves only together (amdgpu-dkms and its exact-version
firmware) whole where one of it goes or apt finds dependencies broken, because apt will not move
the other back by itself. The packages role's tasks/take_back.yml asks this after a failed install.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# dpkg's db:Status-Abbrev (dpkg-query(1)): the wanted state (unknown, install, hold, remove, purge), the current
# state, the error flag (reinstall required, or a space). Current states present on disk: all but "n" (not
# installed) and "c" (config files only).
_WANTED, _CURRENT, _ERROR = "uihrp", "ncHUFWti", " R"
_PRESENT = "iUFHWt"
_INSTALLED = "i"


def package_states(lines):
    """{package: current state letter} of ``dpkg-query -W -f '${db:Status-Abbrev} ${Package}\\n'`` lines."""
    states = {}
    for line in lines:
        abbrev, name = line[:3], line[3:].strip()
        if (len(abbrev) != 3 or abbrev[0] not in _WANTED or abbrev[1] not in _CURRENT or abbrev[2] not in _ERROR
                or line[3:4] != " " or not name or " " in name):
            raise ValueError("not a dpkg-query status line: %r" % line)
        states[name] = abbrev[1]
    return states


def packages_to_take_back(states, asked=(), installed_before=(), whole=(), dependencies_broken=False):
    """The packages to remove, in the order dpkg-query listed them, then the rest of ``whole``.

    ``states``: package_states() of the host after the failure; ``asked``: what the failed task installs;
    ``installed_before``: the names installed before it ran; ``dependencies_broken``: apt-get check failed.
    """
    before = set(installed_before)
    brought = [name for name, state in states.items()
               if state in _PRESENT and (state != _INSTALLED or (name in asked and name not in before))]
    if dependencies_broken or any(name in whole for name in brought):
        brought += [name for name in whole if states.get(name, "n") in _PRESENT and name not in brought]
    return brought
