#!/usr/bin/env bash
# Installs what the HTTP benchmark needs besides the project's own venv (make venv):
#   - the peers' venv (default build/bench-peers): mcp==2.3.0, fastmcp==4.1.6 and plain uvicorn,
#     as measured in the peers survey; BENCH_PEERS_STACK=fast adds httptools and uvloop;
#   - wrk, the load generator, and haproxy (bench/http/workers.py), from Debian's packages when
#     they are missing.
# Idempotent: a second run only checks.  `setup.sh --wrk-only` skips the peers' venv (soak).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS_VENV="${BENCH_PEERS_VENV:-$ROOT/build/bench-peers}"
PYTHON="${PYTHON:-python3}"
PEERS_PINS=(mcp==2.3.0 fastmcp==4.1.6 uvicorn)
STAMP="$PEERS_VENV/bench.stamp"
WANT="${PEERS_PINS[*]} stack=${BENCH_PEERS_STACK:-plain}"

if [ "${1:-}" != --wrk-only ] && { [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; }; then
    echo "setup: peers' venv $PEERS_VENV (${PEERS_PINS[*]})" >&2
    [ -x "$PEERS_VENV/bin/python" ] || "$PYTHON" -m venv "$PEERS_VENV"
    "$PEERS_VENV/bin/python" -m pip install --quiet --upgrade pip
    "$PEERS_VENV/bin/python" -m pip install --quiet "${PEERS_PINS[@]}"
    if [ "${BENCH_PEERS_STACK:-plain}" = fast ]; then
        "$PEERS_VENV/bin/python" -m pip install --quiet httptools uvloop
    fi
    "$PEERS_VENV/bin/python" -m pip freeze > "$PEERS_VENV/freeze.txt"
    echo "$WANT" > "$STAMP"
fi

MISSING=()
command -v wrk > /dev/null || MISSING+=(wrk)
if [ "${1:-}" != --wrk-only ] && [ ! -x /usr/sbin/haproxy ] && ! command -v haproxy > /dev/null; then
    MISSING+=(haproxy)
fi
if [ "${#MISSING[@]}" -gt 0 ]; then
    echo "setup: installing ${MISSING[*]} from Debian's packages" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if ! command -v apt-get > /dev/null; then
        echo "setup: ${MISSING[*]} missing and there is no apt-get: install by hand" >&2
        exit 1
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${MISSING[@]}" > /dev/null
fi
command -v taskset > /dev/null || echo "setup: no taskset; servers and wrk will not be pinned" >&2
echo "setup: ok ($(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2); peers in $PEERS_VENV)" >&2
