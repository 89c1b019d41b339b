"""Command line: `python -m bench_src {build,check,results-dir,run,report,hosts,engines,repair,list,with-servers,notebook}`.

An error is one line on stderr (`error: ...`, exit 2), never a traceback; so is Ctrl-C outside a
run (exit 130: a run ends itself cleanly and says so).  The harness is imported inside that guard,
so that a Ctrl-C while it loads is one line too.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    args = None
    try:
        args = parse_args(argv)
        return command(args)
    except KeyboardInterrupt:
        rebuild = "the next build starts again what it had not finished"
        what = {"build": f": the build stopped; {rebuild}",
                "run": f" before the run started (nothing was measured); {rebuild}"}.get(getattr(args, "cmd", ""), "")
        if getattr(args, "run_started", False):  # a second Ctrl-C while the run was ending
            what = (" again while the run was ending: every sample it took is stored (a session whose end was not "
                    "recorded reads as killed); run the same command again to resume")
        print(f"interrupted{what}", file=sys.stderr)
        return 130


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from . import parameters  # the options of `check` and `run`: one per plan parameter
    from .analysis.rules import ENGINES_MARGIN  # what `engines` calls equivalent
    from .catalogue import LANGS
    from .profiles import PROFILES  # the names the `profile` option's help lists
    from .store.hosts import FACTORS  # what `hosts --factor` may keep apart

    ap = argparse.ArgumentParser(prog="python -m bench_src")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the launcher and both programs")
    b.add_argument("--force", action="store_true", help="rebuild even what is up to date")
    b.add_argument("--languages", default=None, metavar="LANGUAGES",
                   help=f"the languages to build, written as the plan's: a list in brackets ('[{', '.join(LANGS)}]') "
                        "or one name; default: every language")
    r = sub.add_parser("results-dir", help="print the default results directory of a profile's plan")
    r.add_argument("--profile", default=parameters.default("profile"),
                   help=f"the profile whose plan names the directory; default: %(default)s; one of {', '.join(PROFILES)}")
    r.add_argument("--seed", default=parameters.default("seed"),  # read as the plan reads it (None: the default)
                   help="the seed of the plan; default: %(default)s")
    for name, text in (("check", "validate a plan and its results directory (nothing is built or written); "
                                 "print the directory"),
                       ("run", "run a plan without the notebook")):
        p = sub.add_parser(name, help=text)
        for prm in parameters.cli_parameters():  # an option and the same key in --plan must give one value
            text = parameters.cli_help(prm)
            if prm.name == "profile":
                text += f"; one of {', '.join(PROFILES)}"
            p.add_argument(parameters.option(prm), dest=prm.name, default=None, metavar=parameters.metavar(prm),
                           help=text.replace("%", "%%"))
        p.add_argument("--results-dir", help="where the samples go: a new or empty directory, or that of an earlier "
                                             "run of the same plan (resumed); default: data/results/<profile>-"
                                             "<commit>[-dirty]-<plan digest>, which check prints")
        p.add_argument("--plan", default="{}", help="plan parameters: a YAML/JSON mapping, inline or in a file")
        p.add_argument("--cluster", default=None, metavar="CLUSTER",
                       help='run the blocks on the hosts of a Dask cluster: "local:N" (N hosts on this machine, each '
                            'on its own CPUs) or "tcp://HOST:PORT" (a running scheduler); default: in this process')
        if name == "run":
            p.add_argument("--repair", action="store_true",
                           help="move unreadable lines of samples.jsonl to samples.rejected.jsonl, then resume")
            p.add_argument("--new-binaries", action="store_true",
                           help="resume with rebuilt programs in a new session (samples carry its number)")
            p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    rep = sub.add_parser("report", help="analyse a results directory (if its report is missing) and check that "
                                         "export/report.html is self-contained; optionally screenshot it")
    rep.add_argument("results_dir")
    rep.add_argument("--rebuild", action="store_true", help="run the whole analysis again even if the report exists")
    rep.add_argument("--screenshot", metavar="PNG", help="write a PNG of the report as headless Chromium shows it")
    rep.add_argument("--width", type=int, default=1400, help="with --screenshot: the page's width in pixels; "
                                                             "default: %(default)s")
    rep.add_argument("--height", type=int, default=3000, help="with --screenshot: the height in pixels; "
                                                              "default: %(default)s")
    hp = sub.add_parser("hosts", help="combine results directories of one plan taken on several machines: per-host "
                                      "verdicts, combined ratios (tau, I², holds on k of m), forest plots")
    hp.add_argument("results_dirs", nargs="+", metavar="RESULTS_DIR")
    hp.add_argument("--out", help="where the tables and figures go (default: data/results/hosts-<plan digest>)")
    hp.add_argument("--factor", choices=tuple(FACTORS),
                    help="accept directories that differ in this (their plans, or the commit their programs were "
                         "built from) and keep its values apart in the analysis")
    ep = sub.add_parser("engines", help="the A/A check of the cluster engine: the same plan in this process and "
                                         f"through a cluster's host on this machine, equivalent within ±{ENGINES_MARGIN * 100:g}%%?")
    ep.add_argument("--paired", metavar="DIR",
                    help="the paired check (the one to use): an A/A run whose arm A is taken in this process and arm "
                         "B on one local host, block by block, in DIR; with --plan its samples are taken first")
    ep.add_argument("--plan", help="with --paired: the plan to take (YAML/JSON, inline or a file; aa is set on it)")
    ep.add_argument("--in-process", nargs="+", metavar="DIR", help="unpaired: runs taken in this process")
    ep.add_argument("--cluster", nargs="+", metavar="DIR", help="unpaired: runs taken through the cluster")
    ep.add_argument("--out", help="write the table as CSV here")
    rp = sub.add_parser("repair", help="move unreadable lines of a results directory's samples.jsonl aside")
    rp.add_argument("results_dir")
    sub.add_parser("list", help="print the catalogue and the profiles")
    ws = sub.add_parser("with-servers", help="run a command with private MariaDB and PostgreSQL servers, their "
                                             "DSNs in BENCH_TEST_MYSQL_DSN and BENCH_TEST_POSTGRES_DSN")
    ws.add_argument("command", nargs=argparse.REMAINDER)
    nb = sub.add_parser("notebook", help="execute a notebook with papermill's bench engine (make run's): a failed "
                                         "cell is its error line, not papermill's traceback")
    nb.add_argument("input")
    nb.add_argument("output")
    nb.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="a parameter, its value a string as papermill's -p gives it (the notebook parses it)")
    return ap.parse_args(argv)


def notebook_command(args: argparse.Namespace) -> int:
    """papermill with the bench engine, its kernel's stderr on ours; a cell that fails ends it with
    that cell's error as the cell showed it (run.kernel.failed_cell: one line for the errors a user
    can fix), and the command line's exit status for that error (api.failed_cell_status: 2 for a bad
    parameter, 130 or 143 for a run a signal ended, 1 for any other error; 130 after a third
    Ctrl-C).  Without papermill's bar of cells, which cut into the run's progress lines on the same
    stream."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from .run import kernel

    problem = notebook_paths_problem(args.input, args.output)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        papermill.execute_notebook(args.input, args.output, parameters=dict(args.parameter),
                                   engine_name=kernel.NAME, stderr_file=sys.stderr,
                                   progress_bar=False)  # the run prints its own progress lines
    except PapermillExecutionError as exc:
        from . import api

        print(kernel.failed_cell(exc), file=sys.stderr)
        return api.failed_cell_status(exc.ename, exc.evalue, exc.traceback)
    except KeyboardInterrupt:
        print(f"interrupted: the notebook stopped; {args.output} holds what it ran", file=sys.stderr)
        return 130
    return 0


def notebook_paths_problem(source: str, output: str) -> str | None:
    """What keeps `notebook` from running (a notebook that is not there, an output directory that
    is not), said before papermill starts a kernel; None when both paths will do."""
    given = Path(source)
    if not given.is_file():
        what = "is a directory" if given.is_dir() else "does not exist"
        return f"notebook {source!r} {what}; give the path of a notebook (.ipynb), e.g. notebooks/run.ipynb"
    parent = Path(output).parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        return f"output {output!r}: its directory {str(parent)!r} {what}; create it or give another path"
    return None


def command(args: argparse.Namespace) -> int:
    from . import api
    from .catalogue import WORKLOADS
    from .profiles import PROFILES
    from .run import build

    if args.cmd == "with-servers":
        return with_servers(args.command)
    if args.cmd == "report":
        return report_command(args)
    if args.cmd == "notebook":
        return notebook_command(args)

    try:
        if args.cmd == "build":
            from .plan.validate import languages_parameter
            from .values import from_papermill

            languages = languages_parameter(from_papermill("--languages", args.languages), "--languages")
            result = build.build(languages, force=args.force)
            print(json.dumps(result, indent=2))
        elif args.cmd == "results-dir":
            plan = api.plan_from_parameters(profile=args.profile, seed=args.seed)
            print(api.results_dir_for(plan))
        elif args.cmd in ("check", "run"):
            cluster = api.cluster_from_parameter(args.cluster)
            plan = api.plan_from_parameters(cluster=cluster and str(cluster), **cli_plan_parameters(args))
            out = api.results_dir_for(plan, args.results_dir, repair=getattr(args, "repair", False))
            api.check_servers(plan)
            if args.cmd == "check":
                from .plan.feasibility import no_comparisons_note

                note = no_comparisons_note(plan)
                if note:  # on stderr: stdout is the directory alone (make run reads it)
                    print(f"note: {note}", file=sys.stderr)
                print(out)
            else:
                build.build(plan.languages)
                args.run_started = True
                try:
                    api.run_plan(plan, out, progress=not args.no_progress, repair=args.repair,
                                 new_binaries=args.new_binaries, cluster=cluster)
                except api.RunInterrupted as stop:  # the run said so in its own line
                    return stop.status
        elif args.cmd == "repair":
            api.repair(args.results_dir)
        elif args.cmd == "hosts":
            with store_warnings_in_one_line():
                api.hosts_report(args.results_dirs, args.out, factor=args.factor)
        elif args.cmd == "engines":
            if args.paired and (args.in_process or args.cluster):
                raise ValueError("engines: give --paired DIR, or --in-process DIR... with --cluster DIR..., not both")
            if args.paired:
                plan = api.plan_from_parameters(cluster="local:1", **{"aa": True, **plan_parameters(args.plan)}) \
                    if args.plan else None
                table = api.engine_check_paired(args.paired, plan)
            elif args.in_process and args.cluster:
                table = api.engine_check(args.in_process, args.cluster)
            else:
                raise ValueError("engines: give --paired DIR [--plan PLAN], or --in-process DIR... --cluster DIR...")
            if args.out:
                table.to_csv(args.out, index=False)
        elif args.cmd == "list":
            for w in WORKLOADS.values():
                print(f"{w.name}: go {list(w.variants['go'])}, rust {list(w.variants['rust'])}, "
                      f"params {[p.name for p in w.params]}")
            for p in PROFILES.values():
                print(f"profile {p.name}: {p.description}")
    except api.USER_ERRORS as exc:
        print(api.error_line(exc), file=sys.stderr)
        return 2
    return 0


@contextlib.contextmanager
def store_warnings_in_one_line():
    """What the store warns about the samples (unreadable or foreign lines, missing samples) as one
    `warning: ...` line each on stderr, not Python's two lines with a source location."""
    import warnings

    from .store import CorruptRecordsWarning

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            yield
    finally:
        for w in caught:
            if issubclass(w.category, CorruptRecordsWarning):
                print(f"warning: {w.message}", file=sys.stderr)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def report_command(args: argparse.Namespace) -> int:
    """`report DIR`: write the report when it is missing, older than the samples or meta.json, or
    with --rebuild (a directory a run still holds is refused: its report would be of part of it), then
    say whether export/report.html references anything outside itself; exit 1 when it does.  What the
    store warns about the samples (unreadable lines, missing samples) is one line each, `warning: ...`."""
    import subprocess

    from . import api  # USER_ERRORS: a full disk while exporting, a corrupt file, a directory in use... one line
    from .paths import SAMPLES
    from .report.export import html
    from .report.export.base import ExportNotWritable
    from .report.full import full_report
    from .store.directory import refuse_in_use, require_run
    from .store.meta import META

    try:
        d = require_run(args.results_dir)
        problem = html.screenshot_problem(args.screenshot, args.width, args.height) if args.screenshot else None
        if problem:  # before the report is written and Chromium started
            raise ValueError(problem)
        if args.screenshot:
            html.find_browser()  # no Chromium: said before the report is written, not after
        page = html.page_path(d)
        stale = page.exists() and any(f.exists() and f.stat().st_mtime > page.stat().st_mtime
                                      for f in (d / SAMPLES, d / META))
        if args.rebuild or not page.exists() or stale:  # a page older than the samples is rewritten
            refuse_in_use(d)  # its samples still change: a report now would be of part of the run
            try:
                with store_warnings_in_one_line():
                    full_report(d)
            except ExportNotWritable as exc:
                if not stale or args.rebuild:
                    raise
                # a page that cannot be rewritten (a read-only copy whose file times say it is older) is shown
                print(f"note: {page} is older than the samples, and it is shown as it is: {exc}", file=sys.stderr)
        refs = html.external_references(page.read_text(encoding="utf-8"))
        print(f"{page}: {page.stat().st_size / 2**20:.1f} MiB, "
              + ("self-contained" if not refs else f"{len(refs)} external references: {refs[:5]}"))
        if args.screenshot:
            print(f"screenshot: {html.screenshot(page, Path(args.screenshot), args.width, args.height)}")
    except api.USER_ERRORS + (html.BrowserError, subprocess.TimeoutExpired) as exc:
        print(api.error_line(exc), file=sys.stderr)  # ValueError: export.base.ExportNotWritable among them
        return 2
    return 1 if refs else 0


def cli_plan_parameters(args: argparse.Namespace) -> dict:
    """--plan's mapping, with every plan parameter given as an option (none may give another value
    than --plan's: parameters.same_value)."""
    from . import parameters
    from .values import read_none

    params = plan_parameters(args.plan)
    for prm in parameters.cli_parameters():
        flag = getattr(args, prm.name, None)
        if flag is None:
            continue
        flag = read_none(flag)  # as papermill's `-p NAME None`: its default, the profile's value, or the help's rule
        if prm.name in params and not parameters.same_value(prm, flag, params[prm.name]):
            raise ValueError(f"{parameters.option(prm)} {flag} contradicts {prm.name}: {params[prm.name]} in --plan; "
                             "give it once")
        params[prm.name] = flag
    params.setdefault("profile", parameters.default("profile"))
    return params


def plan_parameters(text: str) -> dict:
    """`--plan`: a YAML/JSON mapping given inline, or the path of a file holding one (a key given
    twice is refused, naming it)."""
    from .redact import redact_text
    from .values import colon_hint, read_yaml

    source = text
    shown = redact_text(text)  # what the errors quote: the text, its database URLs' passwords masked
    inline = text.lstrip().startswith("{") or ":" in text or "\n" in text  # a YAML mapping, flow or block
    if not text.lstrip().startswith("{"):
        path = Path(text)
        if path.is_file():
            try:
                source = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"--plan file {str(path)!r} is not UTF-8 text (byte {exc.object[exc.start]:#04x} "
                                 f"at position {exc.start}); give a YAML or JSON mapping") from None
            except OSError as exc:
                raise ValueError(f"--plan file {str(path)!r} cannot be read ({exc.strerror or exc})") from None
        elif not inline:
            raise ValueError(f"--plan {shown!r} is neither a mapping like '{{ns: [10, 100]}}' nor a file")
    value = read_yaml(source, f"--plan {shown!r}")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"--plan {shown!r}: expected a mapping of plan parameters, got {type(value).__name__}"
                         + (colon_hint([value]) if isinstance(value, str) else ""))
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ValueError(f"--plan {shown!r}: parameter names must be strings, got {bad[0]!r}")
    return value


def with_servers(command: list[str]) -> int:
    import os
    import signal
    import subprocess

    from .run import servers

    def terminated(signum, frame):  # stop the servers and remove their directories on SIGTERM too
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminated)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("error: with-servers needs a command", file=sys.stderr)
        return 2
    env = dict(os.environ)
    started = []
    try:
        for kind, var in (("mysql", "BENCH_TEST_MYSQL_DSN"), ("postgres", "BENCH_TEST_POSTGRES_DSN")):
            why = servers.missing(kind)
            if why:
                print(f"with-servers: no {kind} server: {why}", file=sys.stderr)
                continue
            server = servers.make_server(kind, None, max_connections=300)
            started.append(server)
            server.start()
            env[var] = server.dsn
            print(f"with-servers: {kind} {server.describe()['version']} at {servers.redact(server.dsn)}", flush=True)
        return subprocess.run(command, env=env).returncode
    finally:
        for server in started:
            server.close()


if __name__ == "__main__":
    sys.exit(main())
