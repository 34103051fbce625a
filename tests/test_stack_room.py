"""engine.stack_room: one file's lint runs from a frame that starts a frame-stack chunk of its
own, so how deep the caller started does not decide how often CPython maps and unmaps chunks."""

from __future__ import annotations

import sys

import pytest

from trllint.engine import stack_room
from trllint.engine.stack_room import with_stack_room


def test_the_call_returns_what_the_function_returns():
    assert with_stack_room(divmod, 17, 5) == (3, 2)
    assert with_stack_room(lambda: None) is None


def test_an_exception_reaches_the_caller_unchanged():
    error = ValueError("boom")

    def fail(exc):
        raise exc

    with pytest.raises(ValueError) as caught:
        with_stack_room(fail, error)
    assert caught.value is error


def test_deep_recursion_under_it_still_works_and_still_stops():
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    assert with_stack_room(depth, 500) == 500
    with pytest.raises(RecursionError):
        with_stack_room(depth, sys.getrecursionlimit() + 10)


@pytest.mark.skipif(sys.version_info < (3, 11) or sys.implementation.name != "cpython", reason="no frame-stack chunks")
def test_the_frame_below_takes_most_of_a_64_kb_chunk():
    # CPython sizes a new chunk to 8 bytes x (frame + 1,000 slots), doubled from 16 KB until it
    # fits: past 64 KB it is 128 KB, and what the frame leaves is the room of the calls below it.
    slots = stack_room._call.__code__.co_stacksize
    assert 65_536 < 8 * (slots + 1_000) <= 131_072
    assert 131_072 // 8 - slots > 8_000
