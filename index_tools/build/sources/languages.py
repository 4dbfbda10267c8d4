"""Which programming language a file holds, judged by its name.

Only programming languages are listed: markup, styles, data and prose files (HTML, CSS,
JSON, YAML, Markdown, ...) are not indexed by the folder and git sources.
"""

from __future__ import annotations

import posixpath

# extension (lower case, without the dot) -> language id
EXTENSIONS: dict[str, str] = {}

_LANGUAGES: dict[str, tuple[str, ...]] = {
    "python": ("py", "pyi", "pyw"),
    "cython": ("pyx", "pxd"),
    "javascript": ("js", "mjs", "cjs", "jsx"),
    "typescript": ("ts", "tsx", "mts", "cts"),
    "java": ("java",),
    "kotlin": ("kt", "kts"),
    "scala": ("scala", "sc"),
    "groovy": ("groovy", "gradle"),
    "clojure": ("clj", "cljs", "cljc"),
    "go": ("go",),
    "c": ("c", "h"),
    "cpp": ("cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "inl"),
    "cuda": ("cu", "cuh"),
    "objective-c": ("m",),
    "objective-cpp": ("mm",),
    "csharp": ("cs", "csx"),
    "fsharp": ("fs", "fsi", "fsx"),
    "visual-basic": ("vb",),
    "rust": ("rs",),
    "zig": ("zig",),
    "nim": ("nim",),
    "swift": ("swift",),
    "dart": ("dart",),
    "ruby": ("rb", "rake", "gemspec"),
    "php": ("php", "phtml"),
    "perl": ("pl", "pm"),
    "lua": ("lua",),
    "r": ("r",),
    "julia": ("jl",),
    "shell": ("sh", "bash", "zsh", "ksh", "fish"),
    "powershell": ("ps1", "psm1", "psd1"),
    "sql": ("sql",),
    "haskell": ("hs", "lhs"),
    "ocaml": ("ml", "mli"),
    "elixir": ("ex", "exs"),
    "erlang": ("erl", "hrl"),
    "elm": ("elm",),
    "crystal": ("cr",),
    "fortran": ("f", "for", "f90", "f95", "f03", "f08"),
    "pascal": ("pas",),
    "ada": ("adb", "ads"),
    "solidity": ("sol",),
    "vhdl": ("vhd", "vhdl"),
    "systemverilog": ("sv", "svh"),
    "assembly": ("asm",),
    "protobuf": ("proto",),
    "starlark": ("bzl", "star"),
    "cmake": ("cmake",),
    "makefile": ("mk",),
    "vue": ("vue",),
    "svelte": ("svelte",),
}
for _language, _extensions in _LANGUAGES.items():
    for _ext in _extensions:
        EXTENSIONS[_ext] = _language

# whole file names (exact) -> language id
FILENAMES: dict[str, str] = {
    "Makefile": "makefile",
    "GNUmakefile": "makefile",
    "CMakeLists.txt": "cmake",
    "Dockerfile": "dockerfile",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
}

# names used by datasets (e.g. The Stack's `lang` column) -> language id
_ALIASES: dict[str, str] = {
    "c++": "cpp",
    "c#": "csharp",
    "f#": "fsharp",
    "objective-c++": "objective-cpp",
    "objectivec": "objective-c",
    "visual basic": "visual-basic",
    "visual basic .net": "visual-basic",
    "bash": "shell",
    "sh": "shell",
    "batchfile": "batch",
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "golang": "go",
    "jupyter notebook": "jupyter",
    "assembly": "assembly",
    "verilog": "verilog",
    "systemverilog": "systemverilog",
    "protocol buffer": "protobuf",
    "protocol buffers": "protobuf",
}

LANGUAGES: frozenset[str] = frozenset(_LANGUAGES) | frozenset(FILENAMES.values())


def language_for_path(path: str) -> str:
    """The language id of a file path ("python", "cpp", ...), or "" when not a code file."""
    name = posixpath.basename(path.replace("\\", "/"))
    if name in FILENAMES:
        return FILENAMES[name]
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return ""
    return EXTENSIONS.get(ext.lower(), "")


def normalize_language(name: str) -> str:
    """A language id for a language name as datasets spell it ("C++" -> "cpp"); "" if blank."""
    key = " ".join(str(name).split()).lower()
    if not key:
        return ""
    if key in _ALIASES:
        return _ALIASES[key]
    if key in _LANGUAGES:
        return key
    return key.replace(" ", "-")
