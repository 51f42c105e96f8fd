"""rendered_content: a role template rendered as ansible.builtin.template writes it."""

from __future__ import annotations

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.templates import rendered_content


def render(tmp_path, text, **variables):
    source = tmp_path / "templates" / "profile.sh.j2"
    source.parent.mkdir(exist_ok=True)
    source.write_text(text)
    obj = {"path": "/etc/profile.d/rocm.sh", "template_path": str(source), "mode": "0644"}
    loader = DataLoader()
    return rendered_content(loader, Templar(loader=loader, variables=variables), variables, obj)


def test_the_template_tasks_options_and_the_object_as_item(tmp_path):
    # trim_blocks as the template task: a block tag's newline goes; the loop item is the object.
    text = "{% if on %}\nexport ROCM_PATH={{ where }}\n{% endif %}\n# {{ item.path }} {{ template_destpath }}\n"
    assert render(tmp_path, text, on=True, where="/opt/rocm") == (
        "export ROCM_PATH=/opt/rocm\n# /etc/profile.d/rocm.sh /etc/profile.d/rocm.sh\n"
    )


def test_a_sites_own_ansible_managed_wins(tmp_path):
    assert render(tmp_path, "# {{ ansible_managed }}\n", ansible_managed="site text") == "# site text\n"
    assert render(tmp_path, "# {{ ansible_managed }}\n") == "# Ansible managed\n"
