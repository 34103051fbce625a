"""The command line: argument parsing and configuration (exit codes: trllint.app.exit_codes)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Mapping, NoReturn

from trllint import __version__
# At the top: entry() turns the collector off before it allocates anything (trllint.app.memory).
from trllint.app import memory
from trllint.app.exit_codes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_USAGE

if TYPE_CHECKING:
    from trllint.rule.declared import FindingKind


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line and exit 2, like every other usage error here
        self.exit(EXIT_USAGE, f"trllint: error: {message} (see `trllint --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="trllint",
        usage="trllint [check] [options] [PATH ...]\n       trllint server",
        description="Find and fix the bugs that only appear when training runs on several GPUs. "
        "`trllint check PATH` is the same as `trllint PATH`; `trllint server` runs the language server "
        "for editors (needs `pip install 'trllint[server]'`).",
    )
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders to lint (default: .); - reads standard input"
    )
    fixing = parser.add_argument_group("fixing")
    # One destination per pair, the last flag wins; None: the configuration's (`fix = true`...).
    fixing.add_argument("--fix", dest="fix", action="store_const", const=True, default=None, help="apply safe fixes in place")
    fixing.add_argument("--no-fix", dest="fix", action="store_const", const=False, help="do not fix, whatever `fix = true` says")
    fixing.add_argument(
        "--fix-only", action="store_true", help="apply fixes, and neither report nor fail on the findings that remain (implies --fix)"
    )
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixing.add_argument(
        "--unsafe-fixes", dest="unsafe_fixes", action="store_const", const=True, default=None, help="also apply fixes marked unsafe"
    )
    fixing.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_const", const=False, help="apply safe fixes only")
    fixing.add_argument(
        "--show-fixes", dest="show_fixes", action="store_const", const=True, default=None,
        help="after fixing, list each file's fixes by code",
    )
    fixing.add_argument("--no-show-fixes", dest="show_fixes", action="store_const", const=False, help="do not list the fixes")
    fixing.add_argument("--fixable", metavar="CODES", help="only these rules' fixes may be offered and applied")
    fixing.add_argument("--extend-fixable", metavar="CODES", help="add rules to those whose fixes may be applied")
    fixing.add_argument("--unfixable", metavar="CODES", help="never offer or apply these rules' fixes")
    fixing.add_argument(
        "--add-noqa", action="store_true", help="silence every current finding with a `# noqa: CODE` comment on its line"
    )
    fixing.add_argument("--ignore-noqa", action="store_true", help="report findings whatever `# noqa` comments say")
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
    choosing.add_argument("--exclude", metavar="PATTERNS", help="replace the configuration's exclude (globs, comma-separated)")
    choosing.add_argument("--extend-exclude", metavar="PATTERNS", help="exclude these too (globs, comma-separated)")
    choosing.add_argument(
        "--per-file-ignores", metavar="GLOB:CODES", action="append",
        help="replace the configuration's per-file-ignores (repeatable: `tests/*:TRL004,TRL006`)",
    )
    choosing.add_argument(
        "--extend-per-file-ignores", metavar="GLOB:CODES", action="append", help="add per-file-ignores (repeatable)"
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
    output.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour the text report: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always, never",
    )
    output.add_argument("--verbose", "-v", action="store_true", help="say on standard error which configuration, files and cache the run uses")
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
    running.add_argument("--isolated", action="store_true", help="read no configuration file: the defaults and the command line only")
    running.add_argument(
        "--cache-dir", metavar="DIR", help="the cache folder (default: .trllint_cache beside the configuration; env TRLLINT_CACHE_DIR)"
    )
    info = parser.add_argument_group("information")
    info.add_argument("--explain", metavar="CODE", help="print a rule's documentation")
    info.add_argument("--list-rules", action="store_true", help="list the rules")
    info.add_argument("--show-files", action="store_true", help="list the files a run would lint, and lint nothing")
    info.add_argument("--show-settings", action="store_true", help="print the settings a run would use, and lint nothing")
    info.add_argument("--version", action="version", version=f"trllint {__version__}")
    return parser


def _usage_error(message: str) -> int:
    sys.stderr.write(f"trllint: error: {message}\n")
    return EXIT_USAGE


def status_line(status: str, preview_findings: str = "") -> str:
    """What --explain says of a rule's status, under its page's title."""
    if status == "preview":
        line = (
            "Status: preview, not yet trusted on code nobody tuned it to: it runs only with `--preview` "
            "or `preview = true` in the configuration."
        )
        if preview_findings:  # what would stay preview once the rule graduates
            line += f" Once stable, these findings stay preview: {preview_findings}."
        return line
    line = "Status: stable, in the default selection."
    if preview_findings:
        line += f" In preview (shown only with `--preview`): {preview_findings}."
    return line


def kinds_lines(kinds: Mapping[str, FindingKind], stable: AbstractSet[str]) -> str:
    """What --explain lists under the status line: each kind of the rule's findings with its status."""
    lines = ["Finding kinds (each graduates on its own; README.md, Rules):"]
    for name, kind in kinds.items():
        status = "stable" if name in stable else "preview"
        never = ", never stable: it rests on what the code does not show" if kind.unproven else ""
        lines.append(f"- `{name}` ({status}{never}): {kind.description}")
    return "\n".join(lines)


def with_status(page: str, line: str) -> str:
    """A rule's page with its status line as a paragraph after its title (``# CODE name``)."""
    title, _, rest = page.partition("\n")
    if not title.startswith("#"):
        return f"{line}\n\n{page}"
    return f"{title}\n\n{line}\n\n{rest.lstrip(chr(10))}"


def entry() -> NoReturn:
    """The `trllint` command and `python -m trllint`: :func:`main`, then an exit that leaves the
    process's objects unfreed. Freeing a linted file's tree and analyses one by one, and every
    module's objects after them, took a tenth of a lint of one large script (mypy leaves the same
    way). Everything a run writes is written or flushed before :func:`main` returns. The editor's
    server, which runs until its client leaves, exits as usual, and so does a run under a profiler
    or a coverage tracer."""
    argv = sys.argv[1:]
    if argv[:1] == ["server"]:
        sys.exit(main(argv))
    memory.off_to_the_end()
    code = main(argv)
    if sys.gettrace() is not None or sys.getprofile() is not None:
        sys.exit(code)  # a profiler or coverage measuring the run writes its results as the process exits
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started with the stream closed
                stream.flush()
    except BrokenPipeError:  # `trllint ... | head`: the reader left before the last of the report
        code = code or EXIT_FINDINGS
    except OSError:
        pass  # nothing more can be said on a stream that cannot be written
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["check"]:
        argv = argv[1:]  # `trllint check PATH`, Ruff's spelling of the default command
    elif argv[:1] == ["server"]:
        from trllint.app.server import main as server_main  # the language server (Ruff's `ruff server`)

        return server_main(argv[1:])
    args = build_parser().parse_args(argv)
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


def _use_rule_catalog(config_path: Path | None, cache_dir: str | None) -> bool:
    """Check the configuration against the catalog of the running code's rules that an earlier run
    left in the cache folder (trllint.app.rule_catalog); False when there is none to read. The
    folder is --cache-dir's (or TRLLINT_CACHE_DIR's) when given, else the default one: a `cache-dir`
    in the configuration is known only once it is read, and such a run loads the rules."""
    from trllint.app.config import CACHE_DIR, use_rule_catalog
    from trllint.app.result_cache import code_fingerprint
    from trllint.app.rule_catalog import read_catalog
    from trllint.rule.registry import rules_replaced

    if rules_replaced():
        return False  # rules of a test's own: the catalog on disk is the pack's
    root = config_path.parent if config_path is not None else Path.cwd()
    catalog = read_catalog(Path(cache_dir).absolute() if cache_dir else root / CACHE_DIR, code_fingerprint())
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
        args.no_cache or args.fix or args.fix_only or args.diff or args.add_noqa or args.list_rules or args.explain
        or reads_stdin
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
            shown = "stable+preview" if info.rule.status == "stable" and info.rule.preview_findings else info.rule.status
            sys.stdout.write(f"{code:<8} {info.rule.name:<{width}}  {shown:<14} {info.rule.fixable}\n")
        from trllint.app.engine_codes import ENGINE_DOCS
        from trllint.core.findings import UNUSED_NOQA

        for code, (name, _) in ENGINE_DOCS.items():
            # The engine's own codes: selected as rules are, but no rule's (`--explain` says more).
            engine_status = "on request" if code == UNUSED_NOQA[0] else "always on"
            engine_fixable = "always" if code == UNUSED_NOQA[0] else "never"
            sys.stdout.write(f"{code:<8} {name:<{width}}  {engine_status:<14} {engine_fixable}\n")
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
        line = status_line(info.rule.status, info.rule.preview_findings)
        if info.rule.kinds:
            line += "\n\n" + kinds_lines(info.rule.kinds, info.rule.stable_kinds)
        sys.stdout.write(with_status(page, line))
        return EXIT_CLEAN

    # `-` is standard input, as in Ruff, Black and flake8; --stdin-filename names what it is.
    if reads_stdin and args.paths not in ([], ["-"]):
        return _usage_error("standard input (- or --stdin-filename) is linted alone; give no other PATH with it")
    stdin_filename = args.stdin_filename if args.stdin_filename is not None else "-"
    paths = [] if reads_stdin else args.paths or ["."]
    if args.add_noqa and (reads_stdin or args.fix or args.fix_only or args.diff):
        return _usage_error("--add-noqa rewrites files on its own; it takes neither standard input, --fix nor --diff")
    if args.isolated and args.config:
        return _usage_error("--isolated reads no configuration file; leave out --config")
    if args.statistics and args.format in ("sarif", "github"):
        return _usage_error(f"--statistics prints counts, as text or JSON; --format {args.format} has no place for them")
    if args.diff and args.format in ("sarif", "github"):
        return _usage_error(f"--diff prints a unified diff (or, with --format json, one per file); not --format {args.format}")

    try:
        config_path: Path | None
        start = Path(stdin_filename).parent if reads_stdin else Path(os.path.commonpath(
            [str(Path(p).absolute()) for p in paths]
        ))
        start = start if start.exists() else Path.cwd()
        if args.isolated:
            config_path = None
        elif args.config:
            config_path = Path(args.config)
            if not config_path.is_file():
                return _usage_error(f"{args.config}: no such configuration file")
        else:
            config_path = find_config(start)
        if may_answer_from_cache:
            may_answer_from_cache = _use_rule_catalog(config_path, args.cache_dir or os.environ.get("TRLLINT_CACHE_DIR"))
            if not may_answer_from_cache:
                broken = _rule_pack_error()
                if broken is not None:
                    return _usage_error(broken)
        config = load_config(config_path)
        config.target = resolve_target(config, start)
        _apply_command_line(config, args)
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
        no_rule = config.no_rule_selected()
        if no_rule is not None and not args.show_settings:
            return _usage_error(no_rule)  # a run of no rule would print "All checks passed!" in CI
    except ConfigError as exc:
        return _usage_error(str(exc))

    if args.show_settings:
        sys.stdout.write(describe_settings(config, codes))
        return EXIT_CLEAN

    from trllint.app.run import LintRun

    fix = args.fix_only or (config.fix if args.fix is None else args.fix)
    run = LintRun(
        config=config,
        codes=codes,
        fix=fix,
        diff=args.diff,
        unsafe_fixes=config.unsafe_fixes if args.unsafe_fixes is None else args.unsafe_fixes,
        jobs=args.jobs,
        use_cache=not args.no_cache,
        output_format=args.format,
        output_file=args.output_file,
        exit_non_zero_on_fix=args.exit_non_zero_on_fix,
        statistics=args.statistics,
        show_evidence=args.show_evidence,
        quiet=args.quiet,
        force_exclude=args.force_exclude,
        fix_only=args.fix_only,
        show_fixes=config.show_fixes if args.show_fixes is None else args.show_fixes,
        color=args.color,
        verbose=args.verbose,
        from_cache=may_answer_from_cache,
    )
    if args.verbose:
        sys.stderr.write(f"trllint: configuration: {config.path or 'none (defaults)'}\n")
        sys.stderr.write(f"trllint: rules: {', '.join(codes) or 'none'}\n")
    if args.show_files:
        return run.show_files(paths or ["."])
    if args.add_noqa:
        return run.add_noqa(paths)
    if reads_stdin:
        status = run.lint_stdin(stdin_filename)
    else:
        status = run.lint_paths(paths)
    return EXIT_CLEAN if args.exit_zero and status == EXIT_FINDINGS else status


def _apply_command_line(config, args: argparse.Namespace) -> None:
    """The command line's settings over the file's (Ruff's precedence)."""
    from trllint.app.config import ConfigError, expand_selectors, parse_code_list
    from trllint.rule.registry import available_rules

    if args.ignore_noqa:
        config.ignore_noqa = True
    if args.exclude is not None:
        config.exclude = parse_code_list(args.exclude)
    if args.extend_exclude is not None:
        config.extend_exclude = [*config.extend_exclude, *parse_code_list(args.extend_exclude)]
    for flag, values in (("--per-file-ignores", args.per_file_ignores), ("--extend-per-file-ignores", args.extend_per_file_ignores)):
        if values is None:
            continue
        table = {} if flag == "--per-file-ignores" else dict(config.per_file_ignores)
        for value in values:
            pattern, colon, codes = value.rpartition(":")
            if not colon or not pattern or not parse_code_list(codes):
                raise ConfigError(f"{flag} takes GLOB:CODES (`tests/*:TRL004`), got {value!r}")
            expand_selectors(parse_code_list(codes), available_rules())  # an unknown code is an error here
            table[pattern] = [*table.get(pattern, []), *parse_code_list(codes)]
        config.per_file_ignores = table
    if args.fixable is not None:
        config.fixable = parse_code_list(args.fixable)
    if args.extend_fixable is not None:
        config.extend_fixable = [*config.extend_fixable, *parse_code_list(args.extend_fixable)]
    if args.unfixable is not None:
        config.unfixable = [*config.unfixable, *parse_code_list(args.unfixable)]
    config.unfixable_codes()  # an unknown code in any of them is a usage error now
    cache_dir = args.cache_dir or os.environ.get("TRLLINT_CACHE_DIR")
    if cache_dir:
        # A command-line or environment folder is relative to where trllint runs, as Ruff's.
        config.cache_dir = Path(cache_dir).absolute()


def describe_settings(config, codes: list[str]) -> str:
    """--show-settings: what a run with these arguments would use, one `key = value` per line."""
    import json

    def value(v) -> str:
        return json.dumps(v, default=str)

    rows = [
        ("configuration", str(config.path) if config.path else "none (defaults)"),
        ("root", str(config.root)),
        ("select (resolved)", value(codes)),
        ("TRL000 reported", value(config.reports_syntax_errors())),
        ("TRL100 reported", value(config.reports_unused_noqa())),
        ("preview", value(config.preview)),
        ("target-version", str(config.target) if config.target else "none"),
        ("exclude", value(config.exclude) if config.exclude is not None else "the defaults"),
        ("extend-exclude", value(config.extend_exclude)),
        ("per-file-ignores", value(config.per_file_ignores)),
        ("fix", value(config.fix)),
        ("unsafe-fixes", value(config.unsafe_fixes)),
        ("show-fixes", value(config.show_fixes)),
        ("unfixable (resolved)", value(sorted(config.unfixable_codes()))),
        ("ignore-noqa", value(config.ignore_noqa)),
        ("cache-dir", str(config.cache_folder())),
        ("max-file-size-mb", value(config.max_file_size_mb)),
    ]
    rows += [(key, value(v)) for key, v in sorted(config.rule_settings.items())]
    return "".join(f"{key} = {text}\n" for key, text in rows)
