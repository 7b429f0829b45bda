"""The one build step pyproject.toml cannot express: ship the top-level kernels/ sources in the wheel.

kernels/ stays at the repository top level, where developers edit and build the CUTLASS
reproducers. A built wheel (and so a non-editable `pip install .`) carries a copy of the sources
as tiletune/_kernels/, where tiletune.tuner.cutlass_engine.kernels_dir() finds them when there is
no checkout. An editable install copies nothing: it keeps using the checkout's kernels/.
Everything else about the package is declared in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# What the reproducer writer and the engine's nvcc builds need. Not the repository tools
# (get_cutlass.sh writes into the checkout, query_grid.py regenerates test data there).
KERNEL_FILES = ("*.cu", "*.hpp", "README.md")  # MANIFEST.in lists the same, for the sdist
KERNELS_SRC = Path("kernels")
KERNELS_PKG = ("tiletune", "_kernels")


class BuildPyWithKernels(build_py):
    """build_py, plus a copy of kernels/ under tiletune/_kernels in the build tree (not when editable)."""

    def _kernel_files(self):
        return sorted({f for pattern in KERNEL_FILES for f in KERNELS_SRC.glob(pattern) if f.is_file()})

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the checkout's kernels/ is used in place
        files = self._kernel_files()
        if not files:
            raise RuntimeError(f"{KERNELS_SRC.resolve()}: no kernel sources to package ({', '.join(KERNEL_FILES)})")
        dest = Path(self.build_lib, *KERNELS_PKG)
        self.mkpath(str(dest))
        for f in files:
            self.copy_file(str(f), str(dest / f.name), preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return outputs + [str(Path(self.build_lib, *KERNELS_PKG, f.name)) for f in self._kernel_files()]


setup(cmdclass={"build_py": BuildPyWithKernels})
