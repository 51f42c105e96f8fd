# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Code that runs on managed hosts, inside the collection's modules (AnsiballZ payloads).

Everything below this package may be shipped to a host: it uses the Python standard library
and ansible.module_utils only, never plugin_utils, and imports nothing it does not need, since
Ansible sends every file a module imports on every call. Subpackages by domain:

* ``common``: the command runner and its timeout, version arithmetic, the bytecode cache.
* ``gpu``: the ``gpu`` fact (sysfs, rocm-smi, amd-smi, rocminfo) and partition writes.
* ``health``: GPU health readings and verdicts.
* ``host``: the OS, kernel, DKMS, boot loader and Secure Boot of a host.
* ``repo``: repository signing keys.
* ``compliance``: node_compliance's evaluator of a host's declared state.

Who may import it: modules, other module_utils packages (only downward: common, then gpu, health,
host, repo, compliance; tests/fleet_testing/architecture.py holds the allowed directions and
tests/unit/architecture checks them), and controller code (plugin_utils, filters, action plugins).
"""
