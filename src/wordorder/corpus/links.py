"""Where every path and link of a tar archive leads, worked out before anything is unpacked.

A link that looks harmless on its own can escape in combination: ``d/l -> ..`` stays inside,
but ``e -> d/l/..`` then points at the parent of the destination, and a later member ``e/x``
is written there. Python's ``data`` extraction filter catches this, but only from Python
3.11.4 / 3.10.12 on. So the archive's members are replayed, in archive order, on a model of
the folder tree (folders, files, and links with their targets), resolving every path
component by component as the operating system would when ``tarfile`` unpacks them:

- the folder a member is written into is resolved through all links (a file member is also
  written through a link of its own name, as ``open`` follows it);
- a symbolic link's target is resolved from the link's folder, a hard link's from the root;
- when all members are in, every link is resolved once more, since a later member may have
  changed what an earlier link's path goes through.

Leaving the root, an absolute link target, more than :data:`MAX_HOPS` links in one path (a
loop), or a member that would replace a folder by a file (or the reverse) make the archive
unsafe; the caller refuses it as a whole, naming the member.
"""

from __future__ import annotations

import tarfile

MAX_HOPS = 40  # links followed in one path; Linux gives up (ELOOP) at the same number
OUTSIDE = "it leads outside the archive"

Key = tuple[str, ...]  # a physical path below the root, one name per level


class Unsafe(Exception):
    """A member that may not be unpacked; ``args[0]`` says why, ``member`` names it."""

    def __init__(self, why: str, member: str = "") -> None:
        super().__init__(why)
        self.why, self.member = why, member


class LinkTree:
    """The folder tree the members build, with links and what they point to."""

    def __init__(self) -> None:
        self.kinds: dict[Key, str] = {}  # "dir" or "file"
        self.links: dict[Key, str] = {}  # symbolic link -> its target as written
        self.names: dict[Key, str] = {}  # symbolic link -> the member that made it

    def resolve(self, path: str, start: Key = (), follow_last: bool = True) -> Key:
        """The physical path ``path`` reaches from folder ``start``, following links.

        Raises:
            Unsafe: it leaves the root, meets an absolute link, loops, or runs through a file.
        """
        if path.startswith("/"):
            raise Unsafe(OUTSIDE)
        todo = path.split("/")[::-1]  # components still to walk, the next one last
        here = list(start)
        hops = 0
        while todo:
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if not here:
                    raise Unsafe(OUTSIDE)
                here.pop()
                continue
            key = (*here, part)
            if key in self.links and (todo or follow_last):
                hops += 1
                if hops > MAX_HOPS:
                    raise Unsafe("its links form a loop")
                target = self.links[key]
                if target.startswith("/"):
                    raise Unsafe(OUTSIDE)
                todo.extend(target.split("/")[::-1])  # walked from the link's own folder, `here`
                continue
            if todo and self.kinds.get(key) == "file":
                raise Unsafe(f"{'/'.join(key)!r} is a file, not a folder")
            here.append(part)
        return tuple(here)

    def _folders(self, key: Key) -> None:
        """Record ``key`` and the folders above it as folders (unpacking creates them)."""
        for depth in range(1, len(key) + 1):
            prefix = key[:depth]
            if self.kinds.get(prefix) == "file":
                raise Unsafe(f"{'/'.join(prefix)!r} is a file, not a folder")
            self.kinds[prefix] = "dir"

    def add(self, member: tarfile.TarInfo) -> None:
        """Replay one member (in archive order).

        Raises:
            Unsafe: what the member does is not allowed (see the module docstring).
        """
        parent, _, leaf = member.name.rpartition("/")
        try:
            folder = self.resolve(parent)
        except Unsafe as e:
            raise Unsafe(
                f"its folder {parent!r} "
                + (
                    "leads outside the archive through links"
                    if e.why == OUTSIDE
                    else f"cannot be reached: {e.why}"
                )
            ) from None
        self._folders(folder)
        if leaf in ("", "."):  # the folder itself ("./" in archives made with `tar c .`)
            if not member.isdir():
                raise Unsafe("it has no file name")
            return
        own = (*folder, leaf)
        if member.isdir():
            key = self.resolve(leaf, folder)  # mkdir on a link to a folder keeps the link
            if self.kinds.get(key) == "file":
                raise Unsafe("it is a folder, but a file of that name comes earlier")
            self._folders(key)
        elif member.issym() or member.islnk():
            try:
                if member.issym():
                    self.resolve(member.linkname, folder)
                else:  # a hard link's target is named from the root, and links in it followed
                    self.resolve(member.linkname)
            except Unsafe as e:
                raise Unsafe(
                    f"it links to {member.linkname!r}, "
                    + (
                        "outside the archive"
                        if e.why == OUTSIDE
                        else f"which is not allowed: {e.why}"
                    )
                ) from None
            if self.kinds.get(own) == "dir":
                raise Unsafe("it is a link, but a folder of that name comes earlier")
            if member.issym():
                self.links[own], self.names[own] = member.linkname, member.name
                self.kinds.pop(own, None)
            else:
                self.links.pop(own, None)
                self.kinds[own] = "file"
        else:  # a regular file is written through a link of its own name
            key = self.resolve(leaf, folder)
            if self.kinds.get(key) == "dir":
                raise Unsafe("it is a file, but a folder of that name comes earlier")
            self._folders(key[:-1])
            self.kinds[key] = "file"

    def check_links(self) -> None:
        """Resolve every link of the finished tree again (a later member may have redirected it)."""
        for key, target in self.links.items():
            try:
                self.resolve(target, key[:-1])
            except Unsafe as e:
                raise Unsafe(
                    f"it links to {target!r}, which once later members are in place "
                    + (
                        "leads outside the archive"
                        if e.why == OUTSIDE
                        else f"is not allowed: {e.why}"
                    ),
                    self.names[key],
                ) from None


def check_tar_links(members: list[tarfile.TarInfo]) -> None:
    """Refuse an archive whose members, unpacked in order, would reach outside the destination.

    Raises:
        Unsafe: naming the member (``.member``) and why.
    """
    tree = LinkTree()
    for member in members:
        try:
            tree.add(member)
        except Unsafe as e:
            raise Unsafe(e.why, member.name) from None
    tree.check_links()
