# SPDX-License-Identifier: Apache-2.0
# pip's build of the Python module (pyproject.toml): one C++ translation unit, python/relaxvm_py.cpp,
# over include/ and the system's pybind11, xtensor and DLPack headers. Its objects go to
# build-python/ (not build/, meson's usual directory).
import os

from setuptools import Extension, setup

os.makedirs("build-python", exist_ok=True)  # egg_info's directory must exist
setup(
    ext_modules=[
        Extension(
            "relaxvm",
            sources=["python/relaxvm_py.cpp"],
            include_dirs=["include"],
            language="c++",
            extra_compile_args=["-std=c++20", "-fvisibility=hidden"],
        )
    ],
    options={"build": {"build_base": "build-python"}, "egg_info": {"egg_base": "build-python"}},
)
