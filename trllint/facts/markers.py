"""Text markers that several rules' prefilters share: what a file must spell to be worth parsing.

Each is an AnyOf: any of its tokens marks the file (trllint.core.prefilter). Plain strings are
the cheap case; a regex starts with a literal (never ``\\b``), so that ``re`` scans for that
literal instead of trying the pattern at every position: seven times faster on the corpus.
"""

from __future__ import annotations

import re

from trllint.core.prefilter import AnyOf

# `deepspeed.initialize` in any spelling the analyses follow: called (`deepspeed.initialize(`,
# `ds.initialize(`, or `initialize(` after a from-import), imported under an alias
# (`initialize as ds_init`), or named with its module. "initialize" alone is in every DeepSpeed
# file's comments. The analyses match a call by its whole last name, so `initialize` must start
# a word (`random_ltd_initialize(` calls another function), and `def initialize(` defines one:
# neither calls DeepSpeed (DeepSpeed's own utils/groups.py has both, and no call).
DEEPSPEED_INITIALIZE = AnyOf(
    re.compile(r"initialize(?<!\winitialize)(?<!def initialize)\s*(?:\(|as\b)"),
    re.compile(r"deepspeed\s*\.\s*initialize(?!\w)"),
)
