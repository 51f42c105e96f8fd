# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Code that runs only on the controller: in filter and action plugins and the CLI, never
shipped to a host. Subpackages by domain:

* ``decision``: the GPU catalog, support matrix and driver lines, and preflight's decision.
* ``rollout``: rollouts in batches, the ROCm upgrade of a host, the workload smoke verdict.
* ``compliance``: GPU-class checks, the fleet's summary, the declared-state cache.
* ``roles``: the roles as data: argument specs, variable validation, managed state, value syntax.
* ``pull``: pull mode's archive of a host's wheels and inventory copy.

Who may import it: filter and action plugins, the CLI (src/rocm_fleet) and other plugin_utils.
It may import module_utils; module_utils and modules never import it (tests/unit/architecture).
"""
