# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sysfs source of the ``gpu`` fact: PCI devices and DRM minors, the amdkfd topology,
MI300-class partition modes, and setting a partition mode through amdgpu's sysfs files.

Runs on hosts. Imports ``common`` and ``gpu``.
Who may import it: the gpu package (gather), the modules, and controller code.
"""
