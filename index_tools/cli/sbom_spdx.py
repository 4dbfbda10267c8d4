"""The SPDX 2.3 document of `sbom.py`'s facts, made and validated by spdx-tools.

The checked project is the package the document describes; it contains each file holding
a quote (with its SHA-1 and SHA-256). Each quote is a snippet of its file (byte and line
range, the best source's license as `licenseConcluded` and `licenseInfoInSnippets`, or
NOASSERTION; its attribution; what it is and its verdict in `comment`). Each source is a
package: a repository at its commit, or a PyPI/npm package at its version, with its purl.
A snippet is a `COPY_OF` each package it was found in (`DESCENDANT_OF` when renamed), the
relationship's comment saying which file and lines.
"""

from __future__ import annotations

import io

from .sbom_facts import (
    Facts,
    QuoteFacts,
    SbomError,
    attribution_texts,
    comment_lines,
    missing_library,
    safe,
    slug,
    source_lines,
    source_link,
)
from .sbom_packages import SourcePackage


def spdx_text(facts: Facts, tag_value: bool = False) -> str:
    """The document as JSON (or tag-value), validated: no validation message, or an error."""
    try:
        from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document
    except ImportError as e:
        raise missing_library("spdx-tools", "spdx-tv" if tag_value else "spdx", e) from None
    document = _document(facts)
    messages = validate_full_spdx_document(document)
    if messages:
        raise SbomError(
            f"the SPDX document made is not valid ({len(messages)} problem(s)), first: "
            f"{safe(messages[0].validation_message, 500)}"
        )
    out = io.StringIO()
    if tag_value:
        from spdx_tools.spdx.writer.tagvalue.tagvalue_writer import write_document_to_stream

        write_document_to_stream(document, out, validate=False)
        return out.getvalue()
    from spdx_tools.spdx.writer.json.json_writer import write_document_to_stream

    write_document_to_stream(document, out, validate=False)
    return out.getvalue() + "\n"


def _license(expression: str):
    """A license expression spdx-tools writes, or NOASSERTION (no license claimed)."""
    from spdx_tools.common.spdx_licensing import spdx_licensing
    from spdx_tools.spdx.model import SpdxNoAssertion

    return spdx_licensing.parse(expression) if expression else SpdxNoAssertion()


def _licenses_seen(expression: str) -> list:
    """The licenses of an expression one by one (`licenseInfoInSnippets` lists ids)."""
    from spdx_tools.common.spdx_licensing import spdx_licensing
    from spdx_tools.spdx.model import SpdxNoAssertion

    if not expression:
        return [SpdxNoAssertion()]
    parsed = spdx_licensing.parse(expression)
    keys = sorted({str(s) for s in spdx_licensing.license_symbols(parsed, decompose=False)})
    return [spdx_licensing.parse(k) for k in keys]


def _url(value: str, download: bool = False):
    """A link spdx-tools accepts as a download location or home page, or NOASSERTION."""
    from spdx_tools.spdx.model import SpdxNoAssertion
    from spdx_tools.spdx.validation.uri_validators import validate_download_location, validate_url

    check = validate_download_location if download else validate_url
    return value if value and not check(value) else SpdxNoAssertion()


def _package(p: SourcePackage, licenses: list[str]):
    from spdx_tools.spdx.model import (
        ExternalPackageRef,
        ExternalPackageRefCategory,
        Package,
        PackagePurpose,
        SpdxNoAssertion,
    )

    refs = []
    if p.purl:
        refs.append(ExternalPackageRef(ExternalPackageRefCategory.PACKAGE_MANAGER, "purl", p.purl))
    what = {"git": "a repository at a commit", "pypi": "a PyPI package", "npm": "an npm package"}
    comment = f"The source of quoted code: {what.get(p.ecosystem, 'indexed code')}."
    if licenses:
        comment += f" Licenses of its files the quotes were found in: {', '.join(licenses)}."
    return Package(
        spdx_id=f"SPDXRef-Package-{slug(p.name, p.key)}",
        name=safe(p.name, 300),
        download_location=_url(p.download, download=True),
        version=safe(p.version, 200) or None,
        files_analyzed=False,
        homepage=_url(p.home) if p.home else None,
        license_concluded=SpdxNoAssertion(),
        license_declared=SpdxNoAssertion(),
        copyright_text=SpdxNoAssertion(),
        comment=comment,
        external_references=refs,
        primary_package_purpose=PackagePurpose.SOURCE,
    )


def _snippet(q: QuoteFacts, file_id: str):
    from spdx_tools.spdx.model import Snippet, SpdxNoAssertion

    p = q.place
    best = q.match.best_source
    name = f"lines {p.first_line}-{p.last_line}"
    if best is not None:
        name += f", quoted from {safe(best.repository, 200)} {safe(best.path, 300)}".rstrip()
    return Snippet(
        spdx_id=f"SPDXRef-Snippet-{q.ref}",
        file_spdx_id=file_id,
        byte_range=(p.byte_start + 1, max(p.byte_end, p.byte_start + 1)),
        line_range=(p.first_line, p.last_line),
        license_concluded=_license(q.license),
        license_info_in_snippet=_licenses_seen(q.license),
        license_comment=(
            f"The license of the source it was found in ({safe(best.repository, 200)} "
            f"{safe(best.path, 300)}), as the index records it."
            if best is not None and q.license
            else None
        ),
        copyright_text=SpdxNoAssertion(),
        comment="\n".join(comment_lines(q)),
        name=safe(name, 600),
        attribution_texts=attribution_texts(q),
    )


def _file_name(f) -> str:
    """SPDX names a file by its path in the package (`./src/geo.py`), one printable line:
    its path in the project's folder wherever the command ran, else as reports show it."""
    name = safe(f.in_package or f.shown, 4000)
    return name if name.startswith(("/", "./", "../")) else f"./{name}"


def _document(facts: Facts):
    from spdx_tools.spdx.model import (
        Actor,
        ActorType,
        Checksum,
        ChecksumAlgorithm,
        CreationInfo,
        Document,
        File,
        FileType,
        Package,
        PackagePurpose,
        Relationship,
        RelationshipType,
        SpdxNoAssertion,
    )

    o = facts.options
    project_id = f"SPDXRef-Project-{slug(o.project, o.project)}"
    notes = " ".join(safe(n) for n in o.notes)
    info = CreationInfo(
        spdx_version="SPDX-2.3",
        spdx_id="SPDXRef-DOCUMENT",
        name=safe(f"{o.project}: code quoted from public code", 300),
        document_namespace=facts.namespace,
        creators=[Actor(ActorType.TOOL, f"recitation-{safe(o.tool_version, 60)}")],
        created=facts.created,
        document_comment=(
            "Made by Recitation: each snippet is a span of a project file that is found in "
            "indexed public code, with its sources (packages) and the team's verdict on it. "
            + notes
        ).strip(),
    )
    project = Package(
        spdx_id=project_id,
        name=safe(o.project, 200),
        download_location=SpdxNoAssertion(),
        files_analyzed=True,
        license_concluded=SpdxNoAssertion(),
        license_declared=SpdxNoAssertion(),
        copyright_text=SpdxNoAssertion(),
        comment="The checked project; only its files that hold quoted code are listed.",
        primary_package_purpose=PackagePurpose.SOURCE,
    )
    packages = {p.key: _package(p, facts.package_licenses.get(p.key, [])) for p in facts.packages}
    files, snippets = [], []
    relationships = [Relationship("SPDXRef-DOCUMENT", RelationshipType.DESCRIBES, project_id)]
    for f in facts.files:
        file_id = f"SPDXRef-File-{f.ref}"
        files.append(
            File(
                name=_file_name(f),
                spdx_id=file_id,
                checksums=[
                    Checksum(ChecksumAlgorithm.SHA1, f.sha1),
                    Checksum(ChecksumAlgorithm.SHA256, f.sha256),
                ],
                file_types=[FileType.SOURCE],
                license_concluded=SpdxNoAssertion(),
                license_info_in_file=[SpdxNoAssertion()],  # the snippets carry licenses
                copyright_text=SpdxNoAssertion(),
                comment=f"Holds {len(f.quotes)} quote(s) of indexed public code.",
            )
        )
        relationships.append(Relationship(project_id, RelationshipType.CONTAINS, file_id))
        for q in f.quotes:
            snippet = _snippet(q, file_id)
            snippets.append(snippet)
            kind = RelationshipType.COPY_OF if q.match.exact else RelationshipType.DESCENDANT_OF
            for s, pkg in q.sources:
                where = f"{safe(s.path, 300)} {source_lines(s)}".strip()
                link = source_link(s)
                relationships.append(
                    Relationship(
                        snippet.spdx_id,
                        kind,
                        packages[pkg.key].spdx_id,
                        comment=safe(f"found in {where}" + (f": {link}" if link else ""), 1000),
                    )
                )
    return Document(
        creation_info=info,
        packages=[project, *packages.values()],
        files=files,
        snippets=snippets,
        relationships=relationships,
    )
