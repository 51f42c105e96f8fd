# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Change in batches: when a rollout stops and its report, the ROCm upgrade of one host, and
the onboarding workload smoke test's verdict.

Controller only. Imports module_utils and ``decision``.
Who may import it: filter plugins (rollout, rocm_fleet).
"""
