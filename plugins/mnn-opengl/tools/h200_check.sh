#!/usr/bin/env bash
# mnn-opengl on the lent H200 (NVIDIA EGL), run from the repository root there:
#   the EGL/GL loaders as Debian packages in .gl/ (downloaded on a project machine:
#   (cd .gl && apt-get download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)),
#   carried with the run, unpacked into / (nothing else is unpacked there);
#   then the plugin's tests and the three CNNs at 224x224 (error against the reference, run time).
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
pip install -q --no-build-isolation --no-deps -e . && pip install -q --no-build-isolation --no-deps ./plugins/mnn-opengl
if [ -n "$(python -c 'from mnn_opengl import device; print(device.unavailable_reason())')" ]; then
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
python -c 'from mnn_opengl import device; print("reason:", repr(device.unavailable_reason())); print(device.open_device().props)'
timeout 300 python -m pytest -q plugins/mnn-opengl/tests -p no:cacheprovider
python plugins/mnn-opengl/tools/check_models.py 224 1 20
python plugins/mnn-opengl/tools/check_models.py 224 8 10
