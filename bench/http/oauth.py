"""``tools/call`` with a validated JWT on both revisions the servers speak over plain stateless
POSTs, 2026-07-28 and 2025-11-25: mcpkit as an OAuth resource server, against itself
unauthenticated and against the official SDK's (mcp 2.3.0) unauthenticated server.

Run from the project root as ``python -m bench.http.oauth`` (``make bench`` runs it after the
others; ``bench/http/setup.sh`` makes the peers' venv and installs ``wrk``; ``QUICK=1`` for a
smoke run).

The issue's check: a ``tools/call`` carrying a validated JWT (cached key) stays at least 4x the
SDK's unauthenticated ``tools/call``, checked on each revision.  Three servers per handler
(``async def add`` and ``def add``), each started by ``run.py``'s helpers exactly as ``run.py``
starts them (one uvicorn worker pinned to CPU 0, ``wrk -t1`` with ``mcp_post.lua`` on CPU 1):

* ``mcpkit + JWT``: ``mcpkit serve bench/http/app_mcpkit.py`` with
  ``auth=ResourceServer(RESOURCE, authorization_servers=[issuer], verifier=JwtVerifier(issuer,
  jwks_uri), required_scopes=[SCOPE])`` (``BENCH_OAUTH_*``, see ``app_mcpkit.py``).  Every
  request carries ``Authorization: Bearer <jwt>``: one RS256 token (2048-bit RSA key made
  with ``cryptography``, signed with PyJWT; ``iss``, ``sub``, ``client_id``, ``aud`` the
  endpoint's resource, ``scope``, ``iat``, ``exp`` an hour ahead, ``kid`` and ``typ
  at+jwt`` in the header), reused for every request as a real client does.  So what is measured
  is the steady state: the resource server's verified-token cache (the token's SHA-256, one
  dictionary lookup), the audience and scope checks, and the JWKS key fetched once per server
  process and kept.  The JWKS is served by a small HTTP server this script starts on
  127.0.0.1, which counts its fetches;
* ``mcpkit``: the same app and server stack without ``auth`` (the cost of auth);
* ``mcp``: the SDK's default stateless server (``app_mcp.py``), as ``run.py`` runs it.

Each server is measured on both revisions in turn (one cell each), with the requests
``run.py`` sends (``mcp_post.lua``): 2026-07-28 with the ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers and the request ``_meta``; 2025-11-25 with the
``MCP-Protocol-Version`` header only, no ``initialize`` and no session (stateless servers
accept that).  The ``Authorization`` header is the same on both.

Before measuring, one JWT server is checked to enforce auth on each revision measured: no
token, a token signed with another key and a token for another audience must each be refused
with 401, the good token answered.  Method as ``run.py``'s: servers in turn, order reversed
on every other repetition; each cell the median of ``BENCH_REPS`` runs of ``BENCH_DURATION``
seconds, each after a correctness probe and a ``BENCH_WARMUP``-second warm-up; every
response checked 2xx with the result; a run during which other processes used more than
``BENCH_NOISE_LIMIT`` cores is measured again (``BENCH_NOISE_RETRIES`` times at most) and the
quietest attempt kept.

Environment: as ``run.py`` (``BENCH_REPS``, ``BENCH_WARMUP``, ``BENCH_DURATION``, ``QUICK``,
``BENCH_TAG``, ``BENCH_NOISE_LIMIT``, ``BENCH_NOISE_RETRIES``, ``BENCH_PEERS_STACK``), plus
``BENCH_CONCURRENCY`` (default ``16`` here), ``BENCH_HANDLERS`` (``async,def``) and
``BENCH_REVISIONS`` (``2026-07-28,2025-11-25``).  Writes
``bench/results/<date>-oauth.md`` (``<date>-oauth-quick.md`` for a quick run).
"""

from __future__ import annotations

import datetime
import http.server
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import jwt
from bench.http.common import (
    EXPECT_CALL,
    PEERS_STACK,
    PEERS_VENV,
    PROJECT_VENV,
    RESULTS,
    REV_2025,
    REV_2026,
    BenchError,
    ServerSpec,
    log,
    machine,
    post,
    require_tools,
    start_server,
    versions,
)
from bench.http.run import (
    HANDLERS,
    REVISIONS,
    Cell,
    Run,
    ServerRun,
    Settings,
    Summary,
    measure_server,
    memory,
    ratio,
    summarise,
)
from cryptography.hazmat.primitives.asymmetric import rsa

RESOURCE: Final = "http://localhost:8000"
"""The ``ResourceServer``'s public base URL: tokens are issued for ``RESOURCE + "/mcp"``."""
AUDIENCE: Final = RESOURCE + "/mcp"
SCOPE: Final = "bench:tools"
KID: Final = "bench-key-1"
TARGET: Final = 4.0
"""mcpkit with a validated JWT over the SDK unauthenticated (the issue's check)."""
KINDS: Final = ("jwt", "plain", "mcp")
REQUESTS: Final = {
    REV_2026: "`MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, `_meta`",
    REV_2025: "`MCP-Protocol-Version` header only, no initialize, no session",
}
"""What a request carries on each revision (``mcp_post.lua``, as ``run.py`` sends it)."""
LABELS: Final = {"jwt": "mcpkit + JWT", "plain": "mcpkit, no auth", "mcp": "mcp, no auth"}


# --- keys, tokens and the JWKS endpoint ------------------------------------------------------


class Issuer:
    """An authorization server as far as the bench needs one: an RSA key, its JWKS served on
    127.0.0.1 (fetches counted), and tokens signed with it."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        entry = dict(public, kid=KID, alg="RS256", use="sig")
        self._document = json.dumps({"keys": [entry]}).encode()
        self.fetches = 0
        issuer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != "/jwks":
                    self.send_error(404)
                    return
                issuer.fetches += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(issuer._document)))
                self.end_headers()
                self.wfile.write(issuer._document)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        port = self._http.server_address[1]
        self.url = f"http://127.0.0.1:{port}"
        self.jwks_uri = f"{self.url}/jwks"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def __enter__(self) -> Issuer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)

    def token(
        self,
        *,
        audience: str = AUDIENCE,
        key: rsa.RSAPrivateKey | None = None,
        lifetime: int = 3600,
    ) -> str:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "sub": "bench-user",
            "client_id": "bench-client",
            "aud": audience,
            "scope": f"{SCOPE} profile",
            "iat": now,
            "exp": now + lifetime,
            "jti": "bench-token",
        }
        headers = {"kid": KID, "typ": "at+jwt"}
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers=headers)


@dataclass(frozen=True)
class JwtServer(ServerSpec):
    """``app_mcpkit.py`` as an OAuth resource server trusting ``issuer``."""

    issuer: str = ""
    jwks_uri: str = ""

    @property
    def key(self) -> str:
        return f"{super().key}-jwt"

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env["BENCH_OAUTH_ISSUER"] = self.issuer
        env["BENCH_OAUTH_JWKS_URI"] = self.jwks_uri
        env["BENCH_OAUTH_RESOURCE"] = RESOURCE
        env["BENCH_OAUTH_SCOPES"] = SCOPE
        return env


def check_enforced(issuer: Issuer, variant: str, revisions: Sequence[str]) -> list[str]:
    """Start one JWT server: on each of ``revisions``, without a token, with a forged one and
    with one for another audience it must answer 401; with the good one, the result.  The
    checks, as report lines (one per revision)."""
    server = start_server(JwtServer("mcpkit", variant, issuer=issuer.url, jwks_uri=issuer.jwks_uri))
    forged = issuer.token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048))
    cases = [
        ("no Authorization header", "", 401),
        ("a token signed with another key", f"Bearer {forged}", 401),
        ("a token for another audience", f"Bearer {issuer.token(audience=RESOURCE + '/x')}", 401),
        ("the benchmark's token", f"Bearer {issuer.token()}", 200),
    ]
    lines = []
    try:
        for rev in revisions:
            got = []
            for text, authorization, expected in cases:
                status, body = post(server.url, rev, "tools/call", authorization=authorization)
                ok = status == expected and (expected != 200 or EXPECT_CALL.encode() in body)
                if not ok:
                    raise BenchError(
                        f"auth check, {rev}, {text}: HTTP {status} (wanted {expected})"
                    )
                got.append(f"{text}: {status}")
            lines.append(f"{rev}: {', '.join(got)}")
    finally:
        server.stop()
    return lines


# --- the benchmark ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    kind: str  # jwt | plain | mcp
    spec: ServerSpec
    cells: tuple[Cell, ...]


def plan(
    issuer: Issuer,
    handlers: Sequence[str],
    revisions: Sequence[str],
    concurrencies: Sequence[int],
    bearer: str,
) -> list[Plan]:
    plans = []
    for variant in handlers:
        specs = {
            "jwt": JwtServer("mcpkit", variant, issuer=issuer.url, jwks_uri=issuer.jwks_uri),
            "plain": ServerSpec("mcpkit", variant),
            "mcp": ServerSpec("mcp", variant),
        }
        for kind in KINDS:
            framework = specs[kind].framework
            cells = tuple(
                Cell(
                    framework,
                    variant,
                    rev,
                    "tools/call",
                    conc,
                    authorization=bearer if kind == "jwt" else "",
                )
                for rev in revisions
                for conc in concurrencies
            )
            plans.append(Plan(kind, specs[kind], cells))
    return plans


def _kind(cell: Cell) -> str:
    if cell.framework == "mcp":
        return "mcp"
    return "jwt" if cell.authorization else "plain"


def _find(
    summaries: dict[Cell, Summary], kind: str, variant: str, rev: str, conc: int
) -> Summary | None:
    for cell, summary in summaries.items():
        if (
            _kind(cell) == kind
            and cell.variant == variant
            and cell.rev == rev
            and cell.conc == conc
        ):
            return summary
    return None


def _rows(
    handlers: Sequence[str], revisions: Sequence[str], concurrencies: Sequence[int]
) -> list[tuple[str, str, int]]:
    """The tables' row order: by handler, then revision, then concurrency."""
    return [(v, r, c) for v in handlers for r in revisions for c in concurrencies]


def _runs_of(runs: Sequence[Run], cell: Cell) -> Iterator[Run]:
    return (r for r in runs if r.cell == cell and not r.failure)


def report(
    settings: Settings,
    handlers: Sequence[str],
    revisions: Sequence[str],
    concurrencies: Sequence[int],
    runs: Sequence[Run],
    server_runs: Sequence[ServerRun],
    checks: Sequence[str],
    fetches: int,
    jwt_starts: int,
    started: datetime.datetime,
) -> str:
    summaries = summarise(runs)
    mem = memory(server_runs)
    info = machine()
    ours = versions(
        PROJECT_VENV / "bin" / "python",
        ["mcpkit", "uvicorn", "httptools", "PyJWT", "cryptography", "httpx"],
    )
    peers = versions(
        PEERS_VENV / "bin" / "python", ["mcp", "uvicorn", "starlette", "pydantic", "anyio"]
    )
    quick = " (QUICK smoke run: not for comparison)" if settings.quick else ""
    peer_stack = "httptools + uvloop" if PEERS_STACK == "fast" else "h11 + asyncio (plain uvicorn)"
    kept = [r for r in runs if not r.failure]
    other_median = f"{statistics.median(r.other_cpu for r in kept):.2f}" if kept else "?"
    other_max = f"{max(r.other_cpu for r in kept):.2f}" if kept else "?"
    wrk_max = f"{max(r.client_cpu for r in kept):.2f}" if kept else "?"
    lines = [
        f"# OAuth: tools/call with a validated JWT on {' and '.join(revisions)}, "
        f"mcpkit vs mcp, {started:%Y-%m-%d}{quick}",
        "",
        f"- Machine: {info['nproc']} CPUs, {info['cpu']}, {info['memory']}, Linux "
        f"{info['kernel']}; {info['wrk']}; pinning: {info['taskset']}.",
        f"- mcpkit {ours.get('mcpkit')} (commit {info['commit']}), Python {ours.get('python')}, "
        f"uvicorn {ours.get('uvicorn')} with httptools {ours.get('httptools')} on asyncio "
        f"(`mcpkit serve bench/http/app_mcpkit.py`, 1 worker); PyJWT {ours.get('PyJWT')}, "
        f"cryptography {ours.get('cryptography')}, httpx {ours.get('httpx')}.",
        f"- Peer (`{PEERS_VENV.name}` venv): Python {peers.get('python')}, mcp "
        f"{peers.get('mcp')} (`MCPServer`, stateless, JSON responses, no auth), uvicorn "
        f"{peers.get('uvicorn')} on {peer_stack}, starlette {peers.get('starlette')}, "
        f"pydantic {peers.get('pydantic')}, anyio {peers.get('anyio')}; 1 worker.",
        f"- mcpkit + JWT: `ResourceServer({RESOURCE!r}, authorization_servers=[issuer], "
        f"verifier=JwtVerifier(issuer, jwks_uri), required_scopes=[{SCOPE!r}])`; one RS256 "
        f"token (2048-bit key, `kid`, `typ at+jwt`, `aud` {AUDIENCE}, `scope`, `exp` in an "
        f"hour) sent as `Authorization: Bearer` with every request: the verified-token cache "
        f"and the cached JWKS key are what is measured. JWKS served on 127.0.0.1 by this "
        f"script: fetched {fetches} time(s) by {jwt_starts} JWT server start(s).",
        f"- Auth enforced (checked first, one JWT server): {'; '.join(checks)}.",
        f"- Method: bench/http/oauth.py with run.py's helpers; one server at a time on "
        f"127.0.0.1, order reversed every other repetition; median of {settings.reps} run(s) "
        f"of {settings.duration} s after a {settings.warmup} s warm-up (`wrk -t1`, "
        f"bench/http/mcp_post.lua); every response checked 2xx with the expected result. "
        f"Each server measured on {' then '.join(revisions)} in turn, with run.py's requests "
        f"({'; '.join(f'{rev}: {REQUESTS[rev]}' for rev in revisions)}). "
        f"CPU = server utime+stime ÷ responses.",
        f"- Noise: other processes used a median of {other_median} and at most {other_max} "
        f"cores during the kept runs ({sum(1 for r in runs if r.attempts > 1)} run(s) repeated "
        f"for noise above {settings.noise_limit} cores); wrk used at most {wrk_max} of its "
        f"core.",
        "",
        "| revision | workload | c | server | req/s | runs | p50 ms | p99 ms "
        "| server CPU µs/req | RSS idle / peak MiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for variant, rev, conc in _rows(handlers, revisions, concurrencies):
        for kind in KINDS:
            found = _find(summaries, kind, variant, rev, conc)
            if found is None:
                continue
            workload = f"{rev} | tools/call add, {variant}"
            if found.failure:
                lines.append(
                    f"| {workload} | {conc} | {LABELS[kind]} | **FAILED** ({found.failure}) "
                    f"| | | | | |"
                )
                continue
            each = ", ".join(f"{r.rps:,.0f}" for r in _runs_of(runs, found.cell))
            spec_key = (
                f"mcpkit-{variant}-jwt" if kind == "jwt" else f"{found.cell.framework}-{variant}"
            )
            idle, peak = mem.get(spec_key, (0.0, 0.0))
            rss = f"{idle:.1f} / {peak:.1f}" if idle else "—"
            lines.append(
                f"| {workload} | {conc} | {LABELS[kind]} | **{found.rps:,.0f}** | {each} "
                f"| {found.p50_ms:.2f} | {found.p99_ms:.2f} | {found.cpu_us:,.0f} | {rss} |"
            )
    lines += [
        "",
        f"## Ratios (req/s medians of this run) and the target (mcpkit + JWT ≥ {TARGET:g}x mcp)",
        "",
        "| revision | workload | c | mcpkit+JWT req/s | mcpkit req/s | mcp req/s "
        "| mcpkit+JWT / mcp | mcpkit+JWT / mcpkit | mcpkit / mcp | auth CPU µs/req | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for variant, rev, conc in _rows(handlers, revisions, concurrencies):
        got = {kind: _find(summaries, kind, variant, rev, conc) for kind in KINDS}
        rps = {k: (None if s is None or s.failure else s.rps) for k, s in got.items()}
        jwt_s, plain_s = got["jwt"], got["plain"]
        cost = (
            f"{jwt_s.cpu_us - plain_s.cpu_us:+,.0f}"
            if jwt_s and plain_s and not jwt_s.failure and not plain_s.failure
            else "—"
        )
        if rps["jwt"] and rps["mcp"]:
            verdict = "PASS" if rps["jwt"] / rps["mcp"] >= TARGET else "**FAIL**"
        else:
            verdict = "not measured"
        counts = " | ".join(f"{rps[k]:,.0f}" if rps[k] else "—" for k in KINDS)
        lines.append(
            f"| {rev} | tools/call add, {variant} | {conc} | {counts} "
            f"| **{ratio(rps['jwt'], rps['mcp'])}** | {ratio(rps['jwt'], rps['plain'])} "
            f"| {ratio(rps['plain'], rps['mcp'])} | {cost} | {verdict} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    settings = Settings.from_env()
    concurrencies = settings.concurrencies if os.environ.get("BENCH_CONCURRENCY") else (16,)
    handlers = tuple(
        h.strip() for h in os.environ.get("BENCH_HANDLERS", ",".join(HANDLERS)).split(",")
    )
    if not handlers or not set(handlers) <= set(HANDLERS):
        raise BenchError(f"BENCH_HANDLERS must name handlers among {', '.join(HANDLERS)}")
    revisions = tuple(
        dict.fromkeys(
            r.strip() for r in os.environ.get("BENCH_REVISIONS", ",".join(REVISIONS)).split(",")
        )
    )
    if not revisions or not set(revisions) <= set(REVISIONS):
        raise BenchError(f"BENCH_REVISIONS must name revisions among {', '.join(REVISIONS)}")
    require_tools({"mcpkit": True, "mcp": True})
    started = datetime.datetime.now()
    runs: list[Run] = []
    server_runs: list[ServerRun] = []
    with Issuer() as issuer:
        bearer = f"Bearer {issuer.token()}"
        log(f"OAuth benchmark: JWKS at {issuer.jwks_uri}; checking that auth is enforced")
        checks = check_enforced(issuer, handlers[0], revisions)
        fetches_before = issuer.fetches
        plans = plan(issuer, handlers, revisions, concurrencies, bearer)
        total = sum(len(p.cells) for p in plans) * settings.reps
        log(
            f"{len(plans)} servers, {total} runs of {settings.duration} s "
            f"(+{settings.warmup} s warm-up), {settings.reps} repetition(s)"
        )
        jwt_starts = 0
        for rep in range(settings.reps):
            ordered = plans if rep % 2 == 0 else list(reversed(plans))
            log(f"repetition {rep + 1}/{settings.reps}: {', '.join(p.spec.key for p in ordered)}")
            for item in ordered:
                server_run, cell_runs = measure_server(item.spec, item.cells, rep, settings)
                server_runs.append(server_run)
                runs.extend(cell_runs)
                jwt_starts += item.kind == "jwt"
                if server_run.failure:
                    log(f"  {item.spec.key}: FAILED: {server_run.failure}")
        fetches = issuer.fetches - fetches_before
    text = report(
        settings,
        handlers,
        revisions,
        concurrencies,
        runs,
        server_runs,
        checks,
        fetches,
        jwt_starts,
        started,
    )
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = (
        f"{started:%Y-%m-%d}-oauth"
        + ("-quick" if settings.quick else "")
        + (f"-{settings.tag}" if settings.tag else "")
    )
    path = RESULTS / f"{stem}.md"
    path.write_text(text)
    log(f"written: {path.relative_to(RESULTS.parent.parent)}")
    return 1 if any(r.failure for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
