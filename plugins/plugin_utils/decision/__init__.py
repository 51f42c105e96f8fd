# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight's decision for a host: the GPU catalog, the support matrix and the amdgpu driver
lines as validated data, the GPU classification, and the pure functions that decide the
release, packages, partitions, overrides, kernel series and what compliance expects.

Controller only. Imports module_utils (``common``, ``gpu``, ``host``) and ``roles``.
Who may import it: filter and action plugins, the compliance and rollout packages.
"""
