"""The shipped lists of the most downloaded packages (`popular:npm:N`, `popular:pypi:N`)."""

from __future__ import annotations

import re

import pytest
from packaging.version import Version

from index_tools.build.sources import SourceError
from index_tools.build.sources.npm import check_name
from index_tools.build.sources.popular import LIST_SIZE, parse, popular_list, wanted
from index_tools.build.sources.semver import Version as SemVer


@pytest.mark.parametrize("ecosystem", ["npm", "pypi"])
def test_each_list_ranks_4000_distinct_packages_with_versions(ecosystem):
    listed = popular_list(ecosystem)
    assert len(listed) == LIST_SIZE
    names = [name.lower() for name, _ in listed]
    assert len(set(names)) == LIST_SIZE
    for name, version in listed:
        if ecosystem == "npm":
            assert check_name(name) == name and SemVer.parse(version) is not None, name
        else:
            assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name), name
            if version:
                Version(version)
    pinned = sum(1 for _, v in listed if v)
    assert pinned >= LIST_SIZE * 0.99  # a few PyPI projects publish no version in the list


def test_the_first_are_the_most_downloaded():
    assert [name for name, _ in popular_list("npm")[:3]] == ["semver", "ansi-styles", "debug"]
    assert [name for name, _ in popular_list("pypi")[:3]] == ["boto3", "packaging", "urllib3"]
    assert not any(name.startswith("@types/") for name, _ in popular_list("npm"))


def test_wanted_pins_each_version():
    (first,) = wanted("pypi", 1)
    assert (first.name, first.constraint) == ("boto3", "==1.44.5")
    assert first.where == "the pypi popular list #1"
    npm = wanted("npm", 1000)
    assert len(npm) == 1000 and npm[9].name == "ms" and npm[9].constraint == "2.1.3"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("popular:npm", ("npm", 100)), ("popular:pypi:4000", ("pypi", 4000)),
     ("popular:NPM:1", ("npm", 1))],
)  # fmt: skip
def test_specs(spec, expected):
    assert parse(spec) == expected


@pytest.mark.parametrize(
    "spec",
    ["popular:cargo", "popular:npm:0", "popular:npm:4001", "popular:npm:x", "popular:npm:1:2"],
)
def test_bad_specs_say_what_is_expected(spec):
    with pytest.raises(SourceError, match=r"popular:npm\[:N\]|from 1 to 4,000"):
        parse(spec)
