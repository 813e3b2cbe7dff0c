from collections.abc import Sequence

import numpy as np

def place(
    sizes: Sequence[int], first: Sequence[int], last: Sequence[int], alignment: int = 64
) -> tuple[np.ndarray, int]: ...
def lower_bound(sizes: Sequence[int], first: Sequence[int], last: Sequence[int], alignment: int = 64) -> int: ...
