"""Builds sparsemc._core from the C++ headers of this repository (../include, ../tools) with CMake.

The module is the CMake target `_core` (python/CMakeLists.txt): core.cpp and the solver
registry that sparsemc-train links, compiled one family per translation unit. By default the
build goes to python/build/cmake (Release, nothing else of the project). Set
SPARSEMC_CMAKE_BUILD_DIR to the absolute path of an existing build of the project (build/release)
to reuse the registry objects compiled there for the tools, and SPARSEMC_BUILD_JOBS to choose
how many compile in parallel (default: every core).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def cmake_arguments(build_dir: Path) -> list:
    """The configure command: the module on; in a build directory of our own, nothing else."""
    args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DSPARSEMC_BUILD_PYTHON=ON",
            f"-DPython_EXECUTABLE={sys.executable}", f"-DPYTHON_EXECUTABLE={sys.executable}"]
    try:
        import pybind11
        args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
    except (ImportError, AttributeError):
        pass  # Debian's pybind11-dev puts its CMake package where find_package looks
    if not (build_dir / "CMakeCache.txt").exists():
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        args += ["-DCMAKE_BUILD_TYPE=Release", "-DSPARSEMC_BUILD_TESTS=OFF", "-DSPARSEMC_BUILD_BENCH=OFF",
                 "-DSPARSEMC_BUILD_EXAMPLES=OFF", "-DSPARSEMC_BUILD_TOOLS=OFF"]
    return args


class CMakeBuild(build_ext):
    """Builds the target `_core` with CMake and copies the module where setuptools expects it."""

    def build_extension(self, ext):
        build_dir = Path(os.environ.get("SPARSEMC_CMAKE_BUILD_DIR") or HERE / "build" / "cmake").resolve()
        jobs = os.environ.get("SPARSEMC_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.run(cmake_arguments(build_dir), check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_core", "-j", jobs], check=True)
        built = sorted((build_dir / "python").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"the CMake build in {build_dir} made no python/_core*.so")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(ext_modules=[Extension("sparsemc._core", sources=[])], cmdclass={"build_ext": CMakeBuild})
