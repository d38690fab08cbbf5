#!/usr/bin/env bash
# Layout Advisor developer entry point.
#   ./dev.sh demo [--scale SF] [--port N] [--no-ui]   set up, build the demo table, start the dashboard
#   ./dev.sh test [pytest args]                       set up (test extras, chromium), check the import
#                                                     contract, run the tests and the engine's doctests
#   ./dev.sh setup                                    only create .venv and install
set -euo pipefail
cd "$(dirname "$0")"

die() { echo "dev.sh: $*" >&2; exit 2; }

check_prereqs() {
  local py="${PYTHON:-python3.11}"
  command -v "$py" >/dev/null 2>&1 || py=python3
  command -v "$py" >/dev/null 2>&1 || die "Python 3.11 is required (python3.11 not found)"
  "$py" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' \
    || die "Python 3.11 is required, found $("$py" --version 2>&1)"
  command -v java >/dev/null 2>&1 || die "Java 17 is required by Spark (java not found; e.g. apt-get install openjdk-17-jre-headless)"
  local jv
  jv=$(java -version 2>&1 | head -n1 | sed -E 's/.*version "([0-9]+).*/\1/')
  [ "${jv:-0}" -ge 17 ] 2>/dev/null || die "Java 17 or newer is required by Spark, found: $(java -version 2>&1 | head -n1)"
  PY="$py"
}

setup() {
  local extras="$1"
  check_prereqs
  if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
  fi
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".${extras}"
}

ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = "0" ]; then
      echo "dev.sh: installing Debian chromium for the browser tests" >&2
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || die "could not install the chromium package"
    else
      echo "dev.sh: /usr/bin/chromium missing; browser tests will be skipped (sudo apt-get install chromium)" >&2
    fi
  fi
}

ensure_oidc_provider() {  # the local OpenID provider of tests/e2e/test_oidc_browser.py (node)
  if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
    echo "dev.sh: installing Debian nodejs and npm for the OIDC browser test" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null) \
      || echo "dev.sh: could not install nodejs/npm; the OIDC browser test will be skipped" >&2
  fi
  if command -v npm >/dev/null 2>&1 && [ ! -d tests/oidc_provider/node_modules/oidc-provider ]; then
    npm ci --prefix tests/oidc_provider --no-audit --no-fund --silent \
      || echo "dev.sh: npm ci failed; the OIDC browser test will be skipped" >&2
  fi
}

cmd="${1:-}"; shift || true
case "$cmd" in
  setup) setup "" ;;
  demo)  setup ""; exec .venv/bin/layout-advisor demo "$@" ;;
  test)  setup "[test]"; ensure_chromium; ensure_oidc_provider
         echo "dev.sh: import contract (lint-imports, pyproject.toml [tool.importlinter])" >&2
         .venv/bin/lint-imports --no-cache
         exec .venv/bin/python -m pytest "$@" ;;
  *) echo "usage: ./dev.sh demo|test|setup [args]" >&2; exit 2 ;;
esac
