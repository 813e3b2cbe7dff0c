"""The tests check an installed mnn-metal against the checkout they sit in: mnn-vulkan's
committed SPIR-V is found beside this plugin (an installed package cannot know where)."""

import os

_CHECKOUT_SHADERS = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "mnn-vulkan", "mnn_vulkan", "shaders")
)
if os.path.isdir(_CHECKOUT_SHADERS):
    os.environ.setdefault("MNN_VULKAN_SHADERS", _CHECKOUT_SHADERS)
