"""Who the access role adds to the GPU groups, and what it refuses."""

from __future__ import annotations

from conftest import find_task, render, render_template

PASSWD = {"root": ["x", "0"], "alice": ["x", "1000"], "bob": ["x", "1001"]}


def missing_users(users: list[dict]) -> list[str]:
    task = find_task("access/tasks/preflight.yml", "Fail on listed users that do not exist and may not be created")
    return render("{{ __access_missing }}", access_users=users, ansible_facts={"getent_passwd": PASSWD}, **task["vars"])


def test_existing_users_pass():
    assert missing_users([{"name": "alice"}, {"name": "bob", "create": False}]) == []


def test_a_missing_user_is_named():
    assert missing_users([{"name": "alice"}, {"name": "carol"}]) == ["carol"]


def test_a_missing_user_may_be_created_when_asked():
    assert missing_users([{"name": "carol", "create": True}]) == []


def unlisted_members(groups: dict, listed: list[str]) -> list[str]:
    task = find_task("access/tasks/groups.yml", "Take unlisted users out of the GPU groups")
    return render(
        "{{ __access_unlisted_members }}",
        access_gpu_groups=["render", "video"],
        access_users=[{"name": name} for name in listed],
        ansible_facts={"getent_group": groups},
        **task["vars"],
    )


def test_unlisted_members_are_found_across_groups():
    groups = {"render": ["x", "993", "alice,mallory"], "video": ["x", "44", "bob,mallory"]}
    assert unlisted_members(groups, ["alice", "bob"]) == ["mallory"]


def test_empty_and_missing_groups_have_no_members():
    assert unlisted_members({"render": ["x", "993", ""]}, []) == []


def test_udev_rules_pin_group_and_mode():
    text = render_template(
        "access/templates/70-rocm-fleet-gpu.rules.j2", access_kfd_mode="0660", access_render_mode="0666"
    )
    rules = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert rules == [
        'SUBSYSTEM=="kfd", KERNEL=="kfd", GROUP:="render", MODE:="0660"',
        'SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x1002", GROUP:="render", MODE:="0666", TAG-="uaccess"',
    ]
