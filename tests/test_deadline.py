"""mnn_core.testing.deadline: a blocking test fails at its deadline, and the alarm is gone afterwards."""

from __future__ import annotations

import signal
import time

import pytest

from mnn_core.testing.deadline import fail_after


def test_a_block_past_its_deadline_fails_with_the_reason():
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="waited on a FIFO"):
        with fail_after(1, "waited on a FIFO"):
            time.sleep(10)
    assert time.monotonic() - start < 5


def test_a_quick_block_leaves_no_alarm_and_the_old_handler():
    before = signal.getsignal(signal.SIGALRM)
    with fail_after(5, "never"):
        pass
    assert signal.alarm(0) == 0  # nothing pending
    assert signal.getsignal(signal.SIGALRM) is before
