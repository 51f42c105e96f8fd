# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles as data: where they are, their argument specs and variable validation, what each
role manages (one definition its tasks apply and compliance checks) and the value syntax of
the files they write.

Controller only. Imports module_utils only.
Who may import it: filter and action plugins (role_variables, host_compliance), and every other
plugin_utils package.
"""
