#!/usr/bin/env bash
# Install everything the tests need and run the whole suite (the README's test command; .ci/run calls it).
# Needs: Debian with Python >= 3.11 and access to PyPI and Debian's package archive. Nothing else is downloaded:
# the browser tests drive Debian's chromium, never a browser fetched by Playwright.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "== installing Debian's chromium (browser and figure-export tests)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi

if ! command -v java >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "== installing Debian's Java runtime (Spark engine tests of cv.scan)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

echo "== installing calibviz with its test dependencies"
$PY -m pip install --quiet --disable-pip-version-check -e ".[test]"

echo "== running the test suite (unit, golden, property, figures, AppTest, browser, doctests)"
# Two workers (CI's two cores: 33 -> 20 minutes); each test file runs whole on one worker, so module fixtures
# (the Spark session, a browser test's server, the Streamlit caches an AppTest module shares) start once.
# CALIBVIZ_TEST_WORKERS=0 runs in one process.
exec $PY -m pytest -n "${CALIBVIZ_TEST_WORKERS:-2}" --dist loadfile "$@"
