"""torch.nn.functional: `import mnn_core.nn.functional as F`.

Everything of mnn_core.express.functional (activations, convolution, pooling,
normalization, losses, shape ops) and of express.torch_ops (conv1d/conv3d,
conv_transpose2d, clamp, one_hot, more losses), with PyTorch's names and
arguments; `dim=` everywhere, `axis=` accepted as its alias.
"""

from __future__ import annotations

from ..express.functional import *  # noqa: F403
from ..express.torch_ops import *  # noqa: F403
