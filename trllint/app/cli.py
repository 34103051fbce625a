"""The command line: argument parsing and configuration (exit codes: trllint.app.exit_codes)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from trllint import __version__
from trllint.app.exit_codes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_USAGE


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line and exit 2, like every other usage error here
        self.exit(EXIT_USAGE, f"trllint: error: {message} (see `trllint --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="trllint",
        usage="trllint [check] [options] [PATH ...]",
        description="Find and fix the bugs that only appear when training runs on several GPUs. "
        "`trllint check PATH` is the same as `trllint PATH`.",
    )
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders to lint (default: .); - reads standard input"
    )
    fixing = parser.add_argument_group("fixing")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    fixing.add_argument(
        "--add-noqa", action="store_true", help="silence every current finding with a `# noqa: CODE` comment on its line"
    )
    choosing = parser.add_argument_group("choosing rules")
    choosing.add_argument("--select", metavar="CODES", help="only these rules (codes, prefixes or names)")
    choosing.add_argument("--ignore", metavar="CODES", help="skip these rules")
    choosing.add_argument("--extend-select", metavar="CODES", help="add rules to those selected")
    # One destination, the last flag wins (Ruff's --preview / --no-preview); None: the configuration's.
    choosing.add_argument(
        "--preview",
        dest="preview",
        action="store_const",
        const=True,
        default=None,
        help="turn on preview rules and findings, not yet trusted on code nobody tuned them to",
    )
    choosing.add_argument(
        "--no-preview", dest="preview", action="store_const", const=False, help="turn preview off, whatever the configuration says"
    )
    output = parser.add_argument_group("output")
    output.add_argument(
        "--format", "--output-format", dest="format", choices=("text", "json", "sarif", "github"), default="text",
        help="the report's format (--output-format: Ruff's name for it)",
    )
    output.add_argument("--output-file", "-o", metavar="PATH", type=Path, help="write the report to PATH instead of standard output")
    output.add_argument("--statistics", action="store_true", help="count findings per rule")
    output.add_argument(
        "--show-evidence",
        action="store_true",
        help="under each finding, the facts it stands on (the wrap, the launch config, the rank test), one per line",
    )
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    output.add_argument("--quiet", "-q", action="store_true", help="text: print the findings only, without the closing summary")
    output.add_argument(
        "--exit-non-zero-on-fix", action="store_true", help="with --fix, exit 1 when a fix was applied, even if no finding remains"
    )
    running = parser.add_argument_group("running")
    running.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    running.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude / extend-exclude to files named on the command line too (on in the pre-commit hooks)",
    )
    running.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: cores)")
    running.add_argument(
        "--config", metavar="FILE", help="this configuration: a trllint.toml, or a pyproject.toml with [tool.trllint]"
    )
    running.add_argument("--stdin-filename", metavar="NAME", help="lint standard input (or PATH -) as the file NAME")
    info = parser.add_argument_group("information")
    info.add_argument("--explain", metavar="CODE", help="print a rule's documentation")
    info.add_argument("--list-rules", action="store_true", help="list the rules")
    info.add_argument("--version", action="version", version=f"trllint {__version__}")
    return parser


def _usage_error(message: str) -> int:
    sys.stderr.write(f"trllint: error: {message}\n")
    return EXIT_USAGE


def status_line(status: str, preview_findings: str = "") -> str:
    """What --explain says of a rule's status, under its page's title."""
    if status == "preview":
        return (
            "Status: preview, not yet trusted on code nobody tuned it to: it runs only with `--preview` "
            "or `preview = true` in the configuration."
        )
    line = "Status: stable, in the default selection."
    if preview_findings:
        line += f" In preview (shown only with `--preview`): {preview_findings}."
    return line


def with_status(page: str, line: str) -> str:
    """A rule's page with its status line as a paragraph after its title (``# CODE name``)."""
    title, _, rest = page.partition("\n")
    if not title.startswith("#"):
        return f"{line}\n\n{page}"
    return f"{title}\n\n{line}\n\n{rest.lstrip(chr(10))}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["check"]:
        argv = argv[1:]  # `trllint check PATH`, Ruff's spelling of the default command
    args = build_parser().parse_args(argv)
    from trllint.app import memory
    from trllint.app.config import use_rule_catalog

    try:
        with memory.paused():
            return _run(args)
    except KeyboardInterrupt:
        sys.stderr.write("trllint: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `trllint ... | head`: the reader left; say nothing more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    finally:
        use_rule_catalog(None)  # a catalog is this run's: the next run in this process (a test) reads its own


def _rule_pack_error() -> str | None:
    """Why the rule pack cannot be loaded, else None (it is loaded)."""
    from trllint.rule.registry import available_rules

    try:
        available_rules()
    except Exception as exc:  # a broken rule pack is an installation problem, not a finding
        return f"cannot load the rule pack: {type(exc).__name__}: {exc}"
    return None


def _use_rule_catalog(config_path: Path | None) -> bool:
    """Check the configuration against the catalog of the running code's rules that an earlier run
    left in the cache folder (trllint.app.rule_catalog); False when there is none to read."""
    from trllint.app.config import use_rule_catalog
    from trllint.app.result_cache import CACHE_DIR, code_fingerprint
    from trllint.app.rule_catalog import read_catalog
    from trllint.rule.registry import rules_replaced

    if rules_replaced():
        return False  # rules of a test's own: the catalog on disk is the pack's
    root = config_path.parent if config_path is not None else Path.cwd()
    catalog = read_catalog(root / CACHE_DIR, code_fingerprint())
    use_rule_catalog(catalog)
    return catalog is not None


def _run(args: argparse.Namespace) -> int:
    from trllint.app.config import ConfigError, find_config, load_config, parse_code_list
    from trllint.app.target import resolve_target
    from trllint.rule.registry import available_rules, resolve_code

    if args.jobs is not None and args.jobs < 1:
        return _usage_error("--jobs must be at least 1")
    # A run that only reads files may answer from the result cache without importing the rules
    # (nor LibCST): its configuration is then checked against the rule catalog (_use_rule_catalog).
    reads_stdin = args.stdin_filename is not None or "-" in args.paths
    may_answer_from_cache = not (
        args.no_cache or args.fix or args.diff or args.add_noqa or args.list_rules or args.explain or reads_stdin
    )
    if not may_answer_from_cache:
        broken = _rule_pack_error()
        if broken is not None:
            return _usage_error(broken)
        rules = available_rules()

    if args.list_rules:
        width = max((len(info.rule.name) for info in rules.values()), default=4)
        sys.stdout.write(f"{'CODE':<8} {'NAME':<{width}}  {'STATUS':<14} FIX\n")
        for code, info in rules.items():
            # stable+preview: a stable rule some of whose findings are preview (--explain says which).
            shown = f"{info.rule.status}+preview" if info.rule.preview_findings else info.rule.status
            sys.stdout.write(f"{code:<8} {info.rule.name:<{width}}  {shown:<14} {info.rule.fixable}\n")
        return EXIT_CLEAN
    if args.explain:
        from trllint.app.engine_codes import ENGINE_DOCS, engine_code

        engine = engine_code(args.explain)
        if engine is not None:
            sys.stdout.write(ENGINE_DOCS[engine][1])
            return EXIT_CLEAN
        explained = resolve_code(args.explain)
        if explained is None:
            return _usage_error(f"unknown rule {args.explain!r} (see `trllint --list-rules`)")
        info = rules[explained]
        try:
            page = info.readme.read_text(encoding="utf-8")
        except OSError:
            page = f"{explained} {info.rule.name}: {info.rule.message}\n"
        sys.stdout.write(with_status(page, status_line(info.rule.status, info.rule.preview_findings)))
        return EXIT_CLEAN

    # `-` is standard input, as in Ruff, Black and flake8; --stdin-filename names what it is.
    if reads_stdin and args.paths not in ([], ["-"]):
        return _usage_error("standard input (- or --stdin-filename) is linted alone; give no other PATH with it")
    stdin_filename = args.stdin_filename if args.stdin_filename is not None else "-"
    paths = [] if reads_stdin else args.paths or ["."]
    if args.add_noqa and (reads_stdin or args.fix or args.diff):
        return _usage_error("--add-noqa rewrites files on its own; it takes neither standard input, --fix nor --diff")

    try:
        config_path: Path | None
        start = Path(stdin_filename).parent if reads_stdin else Path(os.path.commonpath(
            [str(Path(p).absolute()) for p in paths]
        ))
        start = start if start.exists() else Path.cwd()
        if args.config:
            config_path = Path(args.config)
            if not config_path.is_file():
                return _usage_error(f"{args.config}: no such configuration file")
        else:
            config_path = find_config(start)
        if may_answer_from_cache:
            may_answer_from_cache = _use_rule_catalog(config_path)
            if not may_answer_from_cache:
                broken = _rule_pack_error()
                if broken is not None:
                    return _usage_error(broken)
        config = load_config(config_path)
        config.target = resolve_target(config, start)
        if args.select is not None:
            config.cli_select = parse_code_list(args.select)
            if not config.cli_select:
                return _usage_error("--select names no rule (give codes, prefixes or names, or leave it out)")
        if args.ignore is not None:
            config.cli_ignore = parse_code_list(args.ignore)
        if args.extend_select is not None:
            config.cli_extend_select = parse_code_list(args.extend_select)
        if args.preview is not None:
            config.preview = args.preview
        codes = config.selected_codes()
        ignored_preview = config.preview_selections_ignored()
        for code in ignored_preview:
            # Ruff's warning, and Ruff's choice: the run goes on without the rule.
            sys.stderr.write(
                f"trllint: warning: selecting {code} has no effect because preview is not enabled "
                "(add --preview, or preview = true in the configuration)\n"
            )
        if not codes and not config.selects_syntax_errors():
            # A run of no rule would print "All checks passed!": a false clean result in CI.
            if ignored_preview:
                return _usage_error(f"no rule is selected: {', '.join(ignored_preview)} needs --preview")
            return _usage_error("no rule is selected: select and ignore leave none")
    except ConfigError as exc:
        return _usage_error(str(exc))

    from trllint.app.run import LintRun

    run = LintRun(
        config=config,
        codes=codes,
        fix=args.fix,
        diff=args.diff,
        unsafe_fixes=args.unsafe_fixes,
        jobs=args.jobs,
        use_cache=not args.no_cache,
        output_format=args.format,
        output_file=args.output_file,
        exit_non_zero_on_fix=args.exit_non_zero_on_fix,
        statistics=args.statistics,
        show_evidence=args.show_evidence,
        quiet=args.quiet,
        force_exclude=args.force_exclude,
        from_cache=may_answer_from_cache,
    )
    if args.add_noqa:
        return run.add_noqa(paths)
    if reads_stdin:
        status = run.lint_stdin(stdin_filename)
    else:
        status = run.lint_paths(paths)
    return EXIT_CLEAN if args.exit_zero and status == EXIT_FINDINGS else status
