# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host around the GPUs: OS, kernel and CPU facts and their digest, the boot loader's
next boot, DKMS, Secure Boot and module signatures, the kernel update's boot facts, the
udev rule that keeps seat users off the GPUs, and the package holds and version locks a site keeps.

Runs on hosts (node_compliance, kernel_boot_facts, device_acl, package_locks). Imports ``common``, ``gpu``
and ``health``.
Who may import it: the compliance package, the modules, and controller code.
"""
