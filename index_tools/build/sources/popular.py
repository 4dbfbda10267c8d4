"""The most downloaded packages of a registry, from lists shipped with the product:
`popular:npm:N`, `popular:pypi:N` (N up to 4,000; default 100).

The lists (`index_tools/data/popular/*.txt`) rank each registry's packages by downloads in
one month and pin the version of each (a PyPI entry without one takes the newest release),
so that two machines building `popular:npm:1000` index the same code. They are read as any
list is (fetched, verified, cached: packages.py), and kept in an index as one source a
package (`workspace.PackageGroup`) under a record of the list, as a workspace is: `add` of
a longer or shorter list, or of the next product version's list, fetches only what changed.
"""

from __future__ import annotations

import hashlib
from importlib import resources

from .base import CorpusSource, SourceError
from .packages import RegistryOptions, Wanted

PREFIX = "popular:"
LIST_SIZE = 4000
DEFAULT_COUNT = 100
ECOSYSTEMS = {"npm": "npm", "pypi": "PyPI"}


def is_popular_spec(spec: object) -> bool:
    return isinstance(spec, str) and spec.strip().startswith(PREFIX)


def parse(spec: str) -> tuple[str, int]:
    """("npm", 1000) for `popular:npm:1000`; SourceError for anything else."""
    parts = spec.strip()[len(PREFIX) :].split(":")
    ecosystem = parts[0].strip().lower()
    if ecosystem not in ECOSYSTEMS or len(parts) > 2:
        raise SourceError(f"{spec}: expected popular:npm[:N] or popular:pypi[:N]")
    count = DEFAULT_COUNT
    if len(parts) == 2:
        try:
            count = int(parts[1])
        except ValueError:
            count = 0
        if not 1 <= count <= LIST_SIZE:
            raise SourceError(f"{spec}: N must be a number from 1 to {LIST_SIZE:,}")
    return ecosystem, count


def popular_list(ecosystem: str) -> list[tuple[str, str]]:
    """The shipped list of a registry: (name, version or "") most downloaded first."""
    text = (resources.files("index_tools") / "data" / "popular" / f"{ecosystem}.txt").read_text(
        "utf-8"
    )
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition(" ")
            out.append((name, version.strip()))
    return out


def wanted(ecosystem: str, count: int) -> list[Wanted]:
    where = f"the {ecosystem} popular list"
    out = []
    for rank, (name, version) in enumerate(popular_list(ecosystem)[:count], 1):
        if ecosystem == "npm":
            constraint = version or "latest"
        else:
            constraint = f"=={version}" if version else ""
        out.append(Wanted(name, constraint, (), f"{where} #{rank}"))
    return out


class PopularRecord(CorpusSource):
    """The list itself in an index (no documents): which list, how many, what was left out."""

    kind = "workspace"

    def __init__(self, spec: str, ecosystem: str, count: int, left_out: list[str]) -> None:
        super().__init__(spec)
        self.ecosystem, self.count, self.left_out = ecosystem, count, left_out
        self.key = f"popular:{ecosystem}"
        self.name = f"the {count:,} most downloaded {ECOSYSTEMS[ecosystem]} packages"

    def describe(self) -> dict:
        listed = "\n".join(f"{w.name} {w.constraint}" for w in wanted(self.ecosystem, self.count))
        return {
            **super().describe(),
            "workspace": self.key,
            "plan": {
                "workspace": self.name,
                "ecosystems": [{"ecosystem": self.ecosystem, "files": ["the shipped list"]}],
                "not_indexed": [],
            },
            "unavailable": self.left_out,
            "version": hashlib.sha256(listed.encode()).hexdigest()[:32],
        }

    def _documents(self):
        return iter(())


def open_popular(
    spec: str, *, max_file_bytes: int = 1_000_000, registry: RegistryOptions | None = None
) -> list[CorpusSource]:
    """The sources of `popular:ECOSYSTEM[:N]`: a source a package, and the list's record."""
    from .workspace import package_groups

    ecosystem, count = parse(spec)
    options = registry or RegistryOptions()
    groups, left_out = package_groups(
        ecosystem, wanted(ecosystem, count), f"popular:{ecosystem}", options, max_file_bytes
    )
    return [*groups, PopularRecord(spec, ecosystem, count, left_out)]
