"""A POSIX access ACL as the kernel stores it (system.posix_acl_access), built without setfacl."""

import struct

ACL_XATTR = "system.posix_acl_access"
_UNDEFINED = 0xFFFFFFFF


def seat_acl(uid, owner=6, group=6, other=0):
    """The ACL logind gives a seat's user: user::rw, user:UID:rw, group::rw, mask::rw, other::---."""
    entries = [(0x01, owner, _UNDEFINED), (0x02, 6, uid), (0x04, group, _UNDEFINED), (0x10, 6, _UNDEFINED),
               (0x20, other, _UNDEFINED)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, ident) for tag, perm, ident in entries)
