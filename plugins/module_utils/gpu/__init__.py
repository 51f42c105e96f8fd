# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpu`` fact: every source (sysfs, rocm-smi, amd-smi, rocminfo) read into one
SourceReport shape (``model``), matched and merged into the facts contract (``gather``, ``match``,
``merge``), the PCI ID table and the partition view of the merged devices.

Runs on hosts (gpu_facts, node_compliance, gpu_partition). Imports ``common`` only.
Who may import it: the gpu_facts, node_compliance and gpu_partition modules, the health, host and
compliance packages, and controller code.
"""
