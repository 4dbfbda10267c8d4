"""Write the list of an OpenJDK source tree's class files that `java:stdlib` links by.

A JDK's lib/src.zip holds `<module>/<package path>/<Name>.java`, merged at build time from
the tree's `src/<module>/share/classes`, the platform's `src/<module>/<os>/classes` and
`<os type>/classes` (unix), and sources generated during the build, which are in no folder
of the repository at all. Nothing in the zip tells them apart, so the source links a file
by this list: the folder of the tree that holds it, or no link.

    python scripts/jdk_class_paths.py openjdk-17_17.0.19+10.orig.tar.xz "jdk-17.0.19+10" \
        > index_tools/data/jdk17-classes.txt

The tree is a folder or a tar archive (as the source packages of distributions ship it).
Output: a comment line naming the tag, then for each folder kind (`[share]`, `[unix]`,
`[linux]`, `[macosx]`, `[windows]`, `[aix]`, ...) one line a package folder: the folder as
`<module>/<package path>` and the names of its .java files without the extension.
"""

from __future__ import annotations

import os
import re
import sys
import tarfile
from collections import defaultdict

_CLASSES = re.compile(r"^(?:[^/]+/)?src/([^/]+)/([^/]+)/classes/(.+)\.java$")


def tree_names(where: str):
    if os.path.isdir(where):
        for folder, _dirs, files in os.walk(where):
            for name in files:
                yield os.path.relpath(os.path.join(folder, name), where).replace(os.sep, "/")
        return
    with tarfile.open(where) as tar:
        for info in tar:
            if info.isfile():
                yield info.name


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    where, tag = argv
    kinds: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name in tree_names(where):
        m = _CLASSES.search(name)
        if m is None:
            continue
        module, kind, rel = m.groups()
        folder, _, stem = f"{module}/{rel}".rpartition("/")
        if " " in stem or " " in folder:
            continue
        kinds[kind][folder].append(stem)
    out = sys.stdout
    out.write(f"# OpenJDK {tag}: the .java files of src/<module>/<kind>/classes\n")
    for kind in sorted(kinds, key=lambda k: (k != "share", k)):
        out.write(f"[{kind}]\n")
        for folder in sorted(kinds[kind]):
            out.write(folder + " " + " ".join(sorted(kinds[kind][folder])) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
