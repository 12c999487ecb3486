#!/usr/bin/env bash
# Runs the test suite: every test against one embedded Valkey server and,
# side by side with it, the tests that depend on the topology (marked
# `topology`: tests/storage, tests/engine, the leak tests) against a
# 3-master Redis Cluster of embedded servers on loopback. Test files run in
# parallel, two workers more than the cores (the tests wait on servers about
# half the time; each worker has its own embedded server;
# REDPOLL_TEST_WORKERS overrides), the cluster pass with two fewer. `./test.sh --full` runs
# every test on both topologies. Other arguments go to pytest. Installs what
# the tests need (extras test and tools) into .venv first, s3rver (npm)
# for the S3 media tests and axe-core (npm) for the accessibility tests;
# assumes no Redis on the machine.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,tools,lint]"
# The package compiled once: the tests start hundreds of Python processes
# (serve, workers, CLI commands), and where PYTHONDONTWRITEBYTECODE is set
# each would compile every module again (~0.4 s of CPU a process).
PYTHONDONTWRITEBYTECODE= .venv/bin/python -m compileall -q redpoll >/dev/null
# pytest keeps the test modules it rewrote (their asserts) as bytecode too,
# unless PYTHONDONTWRITEBYTECODE is set: then every worker rewrites all of
# them again (~6 s of CPU each). Unset here, and written once by a
# collection before the workers start.
export PYTHONDONTWRITEBYTECODE=
# The web app's browser tests drive Debian's chromium (Playwright never downloads one).
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "== installing chromium (apt) =="
        if ! { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
            echo "test.sh: 'apt-get install chromium' failed; the browser tests need /usr/bin/chromium" >&2
            exit 1
        fi
    else
        echo "test.sh: the browser tests need Debian's chromium at /usr/bin/chromium: run 'sudo apt-get install chromium'" >&2
        exit 1
    fi
fi
# The S3 media tests run a real S3-compatible server, s3rver, from npm
# (pinned in tests/s3rver/package-lock.json).
if [ ! -d tests/s3rver/node_modules/s3rver ]; then
    if ! command -v npm >/dev/null; then
        echo "test.sh: the S3 media tests need node and npm to install s3rver: run 'sudo apt-get install nodejs npm'" >&2
        exit 1
    fi
    echo "== installing s3rver (npm) =="
    if ! npm ci --prefix tests/s3rver --no-audit --no-fund --loglevel=error >/dev/null; then
        echo "test.sh: 'npm ci --prefix tests/s3rver' failed; the S3 media tests need s3rver" >&2
        exit 1
    fi
fi
# The browser tests' accessibility checks run axe-core (npm) in the page
# (pinned in tests/axe/package-lock.json).
if [ ! -f tests/axe/node_modules/axe-core/axe.min.js ]; then
    if ! command -v npm >/dev/null; then
        echo "test.sh: the accessibility tests need node and npm to install axe-core: run 'sudo apt-get install nodejs npm'" >&2
        exit 1
    fi
    echo "== installing axe-core (npm) =="
    if ! npm ci --prefix tests/axe --no-audit --no-fund --loglevel=error >/dev/null; then
        echo "test.sh: 'npm ci --prefix tests/axe' failed; the accessibility tests need axe-core" >&2
        exit 1
    fi
fi
.venv/bin/python -m pytest -q --collect-only tests >/dev/null 2>&1 || true
FULL=0
ARGS=()
for arg in "$@"; do
    if [ "$arg" = "--full" ]; then FULL=1; else ARGS+=("$arg"); fi
done
WORKERS=${REDPOLL_TEST_WORKERS:-$(.venv/bin/python -c 'import os; print(min(6, len(os.sched_getaffinity(0)) + 2))')}
# The cluster pass runs beside the single-server one, with two workers
# fewer: each waits on its servers much of the time, and together they keep
# the cores busy. Its output is kept and printed when it ends.
CLUSTER_WORKERS=${REDPOLL_TEST_CLUSTER_WORKERS:-$(( WORKERS > 3 ? WORKERS - 2 : WORKERS > 2 ? WORKERS - 1 : WORKERS ))}
par() { if [ "$1" -gt 1 ]; then echo "-n $1 --dist loadfile"; fi; }
CLUSTER_LOG=$(mktemp)
CLUSTER_ARGS=(-m topology)
[ "$FULL" = 1 ] && CLUSTER_ARGS=()
# shellcheck disable=SC2046  # par's words are meant to split
REDPOLL_TEST_CLUSTER=1 .venv/bin/python -m pytest -q $(par "$CLUSTER_WORKERS") \
    "${CLUSTER_ARGS[@]}" "${ARGS[@]}" >"$CLUSTER_LOG" 2>&1 &
CLUSTER_PID=$!
trap 'kill "$CLUSTER_PID" 2>/dev/null || true; rm -f "$CLUSTER_LOG"' EXIT
echo "== single server (the 3-master Redis Cluster pass runs beside it) =="
SINGLE=0
# shellcheck disable=SC2046
.venv/bin/python -m pytest -q $(par "$WORKERS") "${ARGS[@]}" || SINGLE=$?
CLUSTER=0
wait "$CLUSTER_PID" || CLUSTER=$?
echo "== 3-master Redis Cluster =="
cat "$CLUSTER_LOG"
[ "$SINGLE" = 0 ] && [ "$CLUSTER" = 0 ]
