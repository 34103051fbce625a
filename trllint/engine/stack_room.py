"""Room on CPython's frame stack for the calls one file's lint makes.

CPython 3.11+ keeps the frames of Python calls in chunks of 16 KB that it maps when a call does
not fit in the current chunk and unmaps as soon as that call returns. A walk or a parse whose
depth swings around a chunk's end, node after node (LibCST building a module calls two Python
functions per node; the analyses recurse over expressions), maps and unmaps a chunk each time:
on one 7,000-line project module that was 77,000 mmap and munmap pairs, half a second of system
time, or none at all when the same lint started a few frames deeper (``python -m trllint`` and
the console script start at different depths). Which depth is unlucky cannot be known.

A call made from a frame that takes most of a chunk of its own starts a chunk big enough for
both: CPython sizes a new chunk to the frame that needs it plus room for about a thousand more
slots, rounded up to a power of two, and keeps it while that frame lives. The frame below holds
an oversized evaluation stack (never used: the function only calls), so every call under it fits
in one chunk of 128 KB, about 9,000 slots (300 frames and more) deeper than the default chunk.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, TypeVar

Result = TypeVar("Result")

# Slots of the frame below: with CPython's 1,000 slots of overhead, just past 64 KB, so that the
# chunk it starts is 128 KB and leaves about 9,000 slots to the calls it makes.
_FRAME_SLOTS = 7_300


def _call(function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return function(*args)


if sys.implementation.name == "cpython" and sys.version_info >= (3, 11):
    # Before 3.11 frames are objects of their own: there is no chunk to keep.
    _call.__code__ = _call.__code__.replace(co_stacksize=_FRAME_SLOTS)


def with_stack_room(function: Callable[..., Result], *args: Any) -> Result:
    """``function(*args)``, run with a frame stack chunk of its own (see the module's text)."""
    result: Result = _call(function, args)
    return result
