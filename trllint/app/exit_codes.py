"""The exit codes of the command line, defined once (DESIGN.md, CLI contract)."""

EXIT_CLEAN = 0  # nothing left to report
EXIT_FINDINGS = 1  # findings remain (after fixes, with --fix), or a file could not be read or written
EXIT_USAGE = 2  # a usage or configuration error, or a named path that does not exist
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
