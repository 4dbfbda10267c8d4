"""The CycloneDX 1.6 BOM of `sbom.py`'s facts, made by cyclonedx-python-lib.

The checked project is the BOM's subject (`metadata.component`). Each source is a
component (a library: purl, version, the licenses of the quoted files, links to its
repository, page and download); each project file holding a quote is a component of type
`file` with its hashes, the quotes as evidence (`occurrences`: line, byte offset and what
the quote is), the licenses found as evidence, and its sources as its pedigree's
ancestors; each quote's verdict is a `recitation:quote` property. The serial number is
a UUID made from the document's namespace (`sbom.py`), so that it is stable too.
"""

from __future__ import annotations

import uuid
import warnings

from .sbom_facts import (
    Facts,
    FileFacts,
    QuoteFacts,
    SbomError,
    comment_lines,
    missing_library,
    safe,
)
from .sbom_packages import SourcePackage

SOURCE_TYPES = {
    "git": "a repository at a commit",
    "pypi": "a PyPI package",
    "npm": "an npm package",
}


def cyclonedx_text(facts: Facts) -> str:
    try:
        from cyclonedx.output.json import JsonV1Dot6
    except ImportError as e:
        raise missing_library("cyclonedx-python-lib", "cyclonedx", e) from None
    bom = _bom(facts)
    with warnings.catch_warnings():
        # "the described component has no dependencies": files and sources are not
        # dependencies, and the BOM claims none
        warnings.simplefilter("ignore", UserWarning)
        try:
            return JsonV1Dot6(bom).output_as_string(indent=2) + "\n"
        except Exception as e:  # the library's own checks: one line, never a traceback
            raise SbomError(f"the CycloneDX BOM made is not valid: {safe(e, 500)}") from None


def _licenses(expressions: list[str]) -> list:
    """Licenses as CycloneDX writes them: ids it knows, or one expression for the rest."""
    from cyclonedx.model.license import DisjunctiveLicense, LicenseExpression
    from cyclonedx.spdx import is_supported_id

    if not expressions:
        return []
    if all(is_supported_id(e) for e in expressions):
        return [DisjunctiveLicense(id=e) for e in expressions]
    if len(expressions) == 1:
        return [LicenseExpression(expressions[0])]
    return [LicenseExpression(" AND ".join(f"({e})" for e in expressions))]


def _links(p: SourcePackage) -> list:
    from cyclonedx.model import ExternalReference, ExternalReferenceType, XsUri

    out = []
    for url, kind in ((p.vcs, "VCS"), (p.home, "WEBSITE"), (p.download, "DISTRIBUTION")):
        if url and url.startswith("https://"):
            out.append(ExternalReference(type=ExternalReferenceType[kind], url=XsUri(url)))
    return out


def _source(p: SourcePackage, licenses: list[str], ref: str | None = None):
    from cyclonedx.model.component import Component, ComponentType
    from packageurl import PackageURL

    return Component(
        name=safe(p.name, 300),
        version=safe(p.version, 200) or None,
        type=ComponentType.LIBRARY,
        bom_ref=ref or f"source-{p.key}",
        purl=PackageURL.from_string(p.purl) if p.purl else None,
        licenses=_licenses(licenses),
        external_references=_links(p),
        description=f"The source of quoted code: {SOURCE_TYPES.get(p.ecosystem, 'indexed code')}",
    )


def _occurrence(q: QuoteFacts, f: FileFacts):
    from cyclonedx.model.component_evidence import Occurrence

    p = q.place
    where = f"Lines {p.first_line}-{p.last_line}, bytes [{p.byte_start}, {p.byte_end})"
    return Occurrence(
        bom_ref=f"quote-{q.ref}",
        location=safe(f.shown, 4000),
        line=p.first_line,
        offset=p.byte_start,
        additional_context=safe("; ".join([where, *comment_lines(q)]), 4000),
    )


def _quote_property(q: QuoteFacts):
    from cyclonedx.model import Property

    v = q.verdict
    state = f"{v.state} {v.action}" if v is not None else "open unjudged"
    hint = " hint-kind" if q.is_hint else ""
    p = q.place
    value = f"L{p.first_line}-L{p.last_line} {q.match.kind} {state}{hint} quote-{q.ref}"
    return Property(name="recitation:quote", value=value)


def _file(f: FileFacts, facts: Facts):
    from cyclonedx.model import HashAlgorithm, HashType
    from cyclonedx.model.component import Component, ComponentType, Pedigree
    from cyclonedx.model.component_evidence import ComponentEvidence

    ancestors: dict[str, SourcePackage] = {}
    for q in f.quotes:
        for _, pkg in q.sources:
            ancestors.setdefault(pkg.key, pkg)
    notes = []
    for q in f.quotes:
        best = q.match.best_source
        if best is not None:
            notes.append(f"L{q.place.first_line}-L{q.place.last_line}: {comment_lines(q)[0]}")
    return Component(
        name=safe(f.shown, 4000),
        type=ComponentType.FILE,
        bom_ref=f"file-{f.ref}",
        hashes=[
            HashType(alg=HashAlgorithm.SHA_1, content=f.sha1),
            HashType(alg=HashAlgorithm.SHA_256, content=f.sha256),
        ],  # fmt: skip
        evidence=ComponentEvidence(
            occurrences=[_occurrence(q, f) for q in f.quotes],
            licenses=_licenses(sorted({q.license for q in f.quotes if q.license})),
        ),
        pedigree=Pedigree(
            ancestors=[
                _source(p, facts.package_licenses.get(p.key, []), f"file-{f.ref}/source-{p.key}")
                for p in sorted(ancestors.values(), key=lambda p: (p.name, p.version, p.key))
            ],
            notes=safe(" | ".join(notes), 8000) or None,
        ),
        properties=[_quote_property(q) for q in f.quotes],
    )


def _bom(facts: Facts):
    from cyclonedx.model import Property
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.tool import ToolRepository

    o = facts.options
    tool = Component(
        name="recitation", version=o.tool_version, type=ComponentType.APPLICATION,
        bom_ref="tool-recitation",
    )  # fmt: skip
    subject = Component(
        name=safe(o.project, 200), type=ComponentType.APPLICATION, bom_ref="project",
        description="The checked project: its files that hold code quoted from indexed public code",
    )  # fmt: skip
    components = [_source(p, facts.package_licenses.get(p.key, [])) for p in facts.packages]
    components += [_file(f, facts) for f in facts.files]
    metadata = BomMetaData(
        tools=ToolRepository(components=[tool]),
        component=subject,
        timestamp=facts.created,
        properties=[Property(name="recitation:note", value=safe(n)) for n in o.notes],
    )
    return Bom(
        serial_number=uuid.uuid5(uuid.NAMESPACE_URL, facts.namespace),
        metadata=metadata,
        components=components,
    )
