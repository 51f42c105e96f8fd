# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A managed file's content, rendered from its template as ansible.builtin.template writes it.

Controller only: the action plugins that compare a role's files with a host (host_compliance for drift,
managed_check for a converge) render them here, so both compare with what the template task would write.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_text
from ansible.template import generate_ansible_template_vars, trust_as_template

# ansible.builtin.template's defaults, which every role template is written for.
TEMPLATE_OPTIONS = {"trim_blocks": True, "lstrip_blocks": False, "newline_sequence": "\n"}


def rendered_content(loader, templar, variables, obj):
    """The text the template task writes for the file object ``obj`` (its ``template_path``).

    As that action renders: a shallow copy of the variables (the template lookup's deep copy of every
    variable costs more than the rest of a host's evaluation), its template_* and ansible_managed
    variables, the object as the loop item its task gives it, and its options.
    """
    source = obj["template_path"]
    template_vars = dict(variables, item=obj)
    # Public until ansible-core 2.23, which asks collections to inline these variables instead.
    generated = generate_ansible_template_vars(path=source, fullpath=source, dest_path=obj["path"])
    if "ansible_managed" in variables:  # as the template action: a site's own ansible_managed wins
        generated.pop("ansible_managed", None)
    template_vars.update(generated)
    templates = os.path.dirname(source)
    renderer = templar.copy_with_new_env(searchpath=[templates, os.path.dirname(templates)],
                                         available_variables=template_vars)
    text = trust_as_template(loader.get_text_file_contents(source))
    rendered = renderer.template(text, escape_backslashes=False, overrides=TEMPLATE_OPTIONS)
    return to_text(rendered if rendered is not None else "")
