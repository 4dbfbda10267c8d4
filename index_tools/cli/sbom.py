"""What a project quotes, as a software bill of materials: one SPDX 2.3 document (JSON or
tag-value, `sbom_spdx.py`) or one CycloneDX 1.6 BOM (JSON, `sbom_cyclonedx.py`), written and
validated by the field's libraries (spdx-tools, cyclonedx-python-lib, imported only when a
document is written) from the same facts (`sbom_facts.py`). `check --format
spdx|spdx-tv|cyclonedx` and the editor's references log (`recitation-index references`,
`references_log.py`) both write through `write_sbom`.

Output is the same for the same input: ids are made from content (the quote's identity,
the file's path, the source's repository and commit), lists are sorted, and the document's
namespace (CycloneDX: serial number) is derived from the facts unless pinned
(`--sbom-namespace`); the creation time is SOURCE_DATE_EPOCH when set.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from pathlib import Path

from ..safe_text import printable
from .sbom_facts import Quoted, SbomError, SbomOptions, gather, project_root, safe

__all__ = ["SBOM_FORMATS", "Quoted", "SbomError", "SbomOptions", "project_root", "write_sbom"]

SBOM_FORMATS = {
    "spdx": "SPDX 2.3, JSON",
    "spdx-tv": "SPDX 2.3, tag-value",
    "cyclonedx": "CycloneDX 1.6, JSON",
}


def write_sbom(quoted: Iterable[Quoted], fmt: str, options: SbomOptions) -> tuple[str, list[str]]:
    """The document in `fmt` (SBOM_FORMATS), and a line for each quote left out."""
    facts, left_out = gather(quoted, options)
    if fmt in ("spdx", "spdx-tv"):
        from .sbom_spdx import spdx_text

        return spdx_text(facts, tag_value=fmt == "spdx-tv"), left_out
    if fmt == "cyclonedx":
        from .sbom_cyclonedx import cyclonedx_text

        return cyclonedx_text(facts), left_out
    raise SbomError(f"unknown SBOM format {fmt!r}: expected one of {', '.join(SBOM_FORMATS)}")


def pinned_namespace(value: str | None) -> str:
    """`--sbom-namespace`: an absolute URI without a fragment (SPDX's rule), or ""."""
    if not value:
        return ""
    parts = urllib.parse.urlsplit(value)
    if (
        not parts.scheme
        or not (parts.netloc or parts.path)
        or "#" in value
        or value != printable(value, 500)
        or " " in value
    ):
        raise SbomError(
            f"--sbom-namespace {safe(value, 200)!r}: expected an absolute URI without '#', "
            "e.g. https://example.com/spdxdocs/widgets-1.4.0"
        )
    return value


def project_name(folder: Path | None = None) -> str:
    """The checked project's name: its git work tree's folder, else the current folder."""
    from .scan import _git_top

    here = (folder or Path.cwd()).resolve()
    top = _git_top(here)
    return (top or here).name or "project"
