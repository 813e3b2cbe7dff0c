from collections.abc import Sequence

DTYPE_CODES: dict[str, int]

def bind_inputs(
    arrays: tuple, views: tuple, move_at: tuple[int, ...], lo: int, hi: int, n_movable: int
) -> tuple[int, ...] | None: ...

class Program:
    movable: tuple[bool, ...]
    def __init__(
        self, steps: list[tuple], inputs: Sequence[str | None] = (), guards: dict[int, tuple[int, bool]] | None = None
    ) -> None: ...
    def __len__(self) -> int: ...
    def run(
        self, profile: bool = False, moved: tuple[int, ...] | None = None, stop_flag: int = 0, deadline_ms: float = 0
    ) -> None: ...
    def profile(self) -> list[tuple[str, float]]: ...
