from Cython.Build import cythonize
from setuptools import Extension, setup

# the folders of mnn_core's C ABI header (abi.h) and its Cython mirror (abi.pxd), as numpy.get_include()
from mnn_core.backend.build import get_cython_include, get_include

ext = Extension("mnn_template._kernels", ["mnn_template/_kernels.pyx"], include_dirs=[get_include()])
setup(ext_modules=cythonize([ext], include_path=[get_cython_include()], language_level=3))
