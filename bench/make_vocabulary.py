"""Build `index_tools/data/vocabulary.txt`, the classifier's vocabulary of names that are
nobody's own: keywords of the languages we parse (from the tree-sitter grammars we ship),
Python's builtins, and the public names of the standard library (modules, their functions,
classes, constants, and the classes' methods and attributes).

    .venv/bin/python bench/make_vocabulary.py

Deterministic for one Python version and one set of grammars; the file is sorted, one name
per line.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import keyword
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from index_tools.text.normalize import GRAMMARS, grammar_keywords  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "index_tools" / "data" / "vocabulary.txt"
# Modules with side effects on import (a browser, a printed poem) or that are not an API.
SKIP_MODULES = {"antigravity", "this", "idlelib", "test", "lib2to3", "pydoc_data"}


def keywords() -> set[str]:
    """Keywords of every grammar the engine knows (`normalize.grammar_keywords`)."""
    out: set[str] = set()
    for language in GRAMMARS:
        out |= {k for k in grammar_keywords(language) or () if not k.startswith("_")}
    return out


def public(names: list[str]) -> set[str]:
    return {n for n in names if n.isidentifier() and not n.startswith("_")}


def stdlib_names() -> set[str]:
    out: set[str] = set()
    for name in sorted(sys.stdlib_module_names):
        if name.startswith("_") or name in SKIP_MODULES:
            continue
        out.add(name)
        try:
            with (
                warnings.catch_warnings(),
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                warnings.simplefilter("ignore")
                mod = importlib.import_module(name)
        except Exception:  # not built on this platform (msvcrt, winreg...)
            continue
        for attr in public(dir(mod)):
            out.add(attr)
            value = getattr(mod, attr, None)
            if isinstance(value, type):
                out |= public(dir(value))
    return out


def main() -> None:
    names = keywords() | set(keyword.kwlist) | set(keyword.softkwlist)
    names |= public(dir(builtins)) | {"self", "cls", "this", "super"}
    names |= stdlib_names()
    OUT.write_text("\n".join(sorted(names)) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(OUT.parents[2])}: {len(names)} names")


if __name__ == "__main__":
    main()
