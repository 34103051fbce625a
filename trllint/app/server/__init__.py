"""``trllint server``: findings and fixes in the editor, over the Language Server Protocol.

pygls is an optional dependency (``pip install 'trllint[server]'``): without it the command says
so and exits 2, and nothing else in trllint imports it.
"""

from __future__ import annotations

import argparse
import sys

from trllint.app.exit_codes import EXIT_CLEAN, EXIT_USAGE

MISSING_PYGLS = "trllint server needs pygls: pip install 'trllint[server]'\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="trllint server",
        description="Run the language server on standard input and output (what an editor starts).",
    )
    # Editors' generic clients often pass --stdio; standard input and output is the only transport.
    parser.add_argument("--stdio", action="store_true", help="talk over standard input and output (the default)")
    parser.parse_args(argv)
    try:
        from trllint.app.server.protocol import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        sys.stderr.write(MISSING_PYGLS)
        return EXIT_USAGE
    if sys.stdin.isatty():
        # Started by hand: the command waits for an editor. `trllint server` could mean a folder.
        sys.stderr.write("trllint server: waiting for an editor on standard input (to lint a folder named server: trllint check server)\n")
    serve()
    return EXIT_CLEAN
