"""Command line: `python -m bench_src {build,results-dir,run,list}`."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from . import api
from .catalogue import WORKLOADS
from .profiles import PROFILES
from .run import build


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench_src")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the launcher and both programs")
    b.add_argument("--force", action="store_true")
    b.add_argument("--languages", default="go,rust")
    r = sub.add_parser("results-dir", help="print the default results directory of a profile's plan")
    r.add_argument("--profile", default="quick")
    r.add_argument("--seed", type=int, default=1)
    run = sub.add_parser("run", help="run a profile without the notebook")
    run.add_argument("--profile", default="quick")
    run.add_argument("--results-dir")
    run.add_argument("--plan", default="{}",
                     help="plan parameters: a YAML/JSON mapping, inline or in a file")
    sub.add_parser("list", help="print the catalogue and the profiles")
    ws = sub.add_parser("with-servers", help="run a command with private MariaDB and PostgreSQL servers, their "
                                             "DSNs in BENCH_TEST_MYSQL_DSN and BENCH_TEST_POSTGRES_DSN")
    ws.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.cmd == "with-servers":
        return with_servers(args.command)

    try:
        if args.cmd == "build":
            result = build.build(args.languages.split(","), force=args.force)
            print(json.dumps(result, indent=2))
        elif args.cmd == "results-dir":
            plan = api.plan_from_parameters(profile=args.profile, seed=args.seed)
            print(api.results_dir_for(plan))
        elif args.cmd == "run":
            extra = plan_parameters(args.plan)
            plan = api.plan_from_parameters(profile=args.profile, **extra)
            build.build(plan.languages)
            api.run_plan(plan, api.results_dir_for(plan, args.results_dir))
        elif args.cmd == "list":
            for w in WORKLOADS.values():
                print(f"{w.name}: go {list(w.variants['go'])}, rust {list(w.variants['rust'])}, "
                      f"params {[p.name for p in w.params]}")
            for p in PROFILES.values():
                print(f"profile {p.name}: {p.description}")
    except (ValueError, build.BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def plan_parameters(text: str) -> dict:
    """`--plan`: a YAML/JSON mapping given inline, or the path of a file holding one."""
    source = text
    if not text.lstrip().startswith("{"):
        path = Path(text)
        if not path.is_file():
            raise ValueError(f"--plan {text!r} is neither a mapping like '{{ns: [10, 100]}}' nor a file")
        source = path.read_text()
    try:
        value = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise ValueError(f"--plan {text!r}: cannot read it as YAML/JSON: {exc}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"--plan {text!r}: expected a mapping of plan parameters, got {type(value).__name__}")
    return value


def with_servers(command: list[str]) -> int:
    import os
    import subprocess

    from .run import servers

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
            server.start()
            started.append(server)
            env[var] = server.dsn
            print(f"with-servers: {kind} {server.describe()['version']} at {servers.redact(server.dsn)}", flush=True)
        return subprocess.run(command, env=env).returncode
    finally:
        for server in started:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
