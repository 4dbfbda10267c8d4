"""Builds the search kernel (index_tools/match/kernel.c) for this machine while installing:
`pip install .` and `pip install -e .` compile it with Zig's C compiler (a build requirement,
pyproject.toml), next to the engine that loads it. On a platform none of the six targets
covers, or when the compiler fails, the install goes on and the engine says it runs the
Python search (`recitation-index stats`)."""

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(Path(__file__).resolve().parent / "scripts"))
import build_kernel  # noqa: E402


class BuildKernel(build_ext):
    """Compiles the kernel as a plain shared library (loaded by ctypes, no Python API)."""

    def get_ext_filename(self, fullname):
        target = build_kernel.host_target() or "unknown-unknown"
        name = build_kernel.library_name(target) if target != "unknown-unknown" else "none"
        return str(Path(*fullname.split(".")[:-1], name))

    def build_extension(self, ext):
        target = build_kernel.host_target()
        if target is None:
            print("recitation: no search kernel for this platform: the Python search runs")
            return
        dest = Path(self.get_ext_fullpath(ext.name))
        try:
            build_kernel.compile_for(target, dest.parent)
        except SystemExit as e:
            print(f"recitation: the search kernel was not built ({e}): the Python search runs")


setup(
    ext_modules=[Extension("index_tools.match.libkernel", sources=[])],
    cmdclass={"build_ext": BuildKernel},
)
