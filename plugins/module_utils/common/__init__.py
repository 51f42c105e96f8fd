# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pieces every other module_utils package uses: the command runner and its timeout error,
version arithmetic (ROCm releases, kernels, OS releases), node_compliance's bytecode cache and
the status words every check, health verdict and GPU fact source reports in (status.py).

Imports nothing else of this collection. Anything in the collection may import it.
"""
