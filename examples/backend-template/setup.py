from Cython.Build import cythonize
from setuptools import Extension, setup

import mnn_core

ext = Extension("mnn_template._kernels", ["mnn_template/_kernels.pyx"], include_dirs=[mnn_core.get_include()])
setup(ext_modules=cythonize([ext], include_path=[mnn_core.__path__[0] + "/.."], language_level=3))
