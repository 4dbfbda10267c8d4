"""The command line of the bills of materials: the options `check --format spdx|spdx-tv|
cyclonedx` takes, and `recitation-index references`, which writes the editor's code
references log in the same formats. Argument parsing only: the writer (`sbom.py`) and the
libraries it uses are imported when a document is written."""

from __future__ import annotations

import argparse

SBOM_CHOICES = ("spdx", "spdx-tv", "cyclonedx")


def add_sbom_options(parser) -> None:
    parser.add_argument(
        "--sbom-name",
        metavar="NAME",
        help="the project the SBOM describes (default: the folder name of the git work tree "
        "that holds the checked files, or references' --root, else of the folder that holds "
        "them)",
    )
    parser.add_argument(
        "--sbom-namespace",
        metavar="URI",
        help="pin the SPDX document namespace (and the CycloneDX serial number, a UUID made "
        "from it) for reproducible builds; default: made from the document's content. "
        "SOURCE_DATE_EPOCH pins the creation time",
    )


def add_references_parser(sub, func) -> None:
    r = sub.add_parser(
        "references",
        help="the editor's code references log as an SBOM (SPDX, CycloneDX)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Write the code references log of the VS Code extension (`Recitation: Export Code
References…` as JSON, or the log's own code-references.jsonl) as one SPDX 2.3 or CycloneDX
1.6 document, the same as `check --format spdx|cyclonedx` writes. Each logged quote is
looked for in its file as it is now (a quote no longer there is left out and said on
stderr) and judged with the .recitation.toml that applies to the file, as `check` judges.""",
        epilog="example:\n  recitation-index references code-references.json --format cyclonedx "
        "> quotes.cdx.json",
    )
    r.add_argument("log", metavar="LOG", help="the exported JSON or the log's .jsonl file")
    r.add_argument("--format", choices=SBOM_CHOICES, default="spdx")
    r.add_argument(
        "--root",
        metavar="DIR",
        help="where a logged path that is no file:// URI is read from (default: .)",
    )
    r.add_argument(
        "--decisions", metavar="FILE", help="the decisions file to use for every file (as check)"
    )
    r.add_argument(
        "--severity",
        action="append",
        metavar="KIND=ACTION",
        help="what a kind shows as (as check)",
    )
    add_sbom_options(r)
    r.set_defaults(func=func)
