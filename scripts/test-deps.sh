#!/usr/bin/env bash
# Installs what the test suite needs from outside PyPI: Debian's chromium (the browser tests
# drive /usr/bin/chromium through Playwright, which never downloads a browser of its own),
# fonts-wqy-microhei (so Chinese renders in the screenshots those tests save), Debian's nginx
# (tests/e2e/test_behind_nginx.py puts a real reverse proxy in front of the gateway, run by the
# test itself as a child process: tests/nginx_proxy.py), Node.js, and the official `openai` npm
# package, pinned by tests/e2e/openai_js/package-lock.json (a real client of the
# OpenAI-compatible endpoint). `make test` runs this before pytest, so the README's test
# command passes by itself on a fresh machine; .ci/run gets it through `make test`. It does
# nothing when everything is already there.
set -euo pipefail

OPENAI_JS="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/openai_js"
NGINX=/usr/sbin/nginx

# The npm client: `npm ci` installs exactly the locked version (from the npm registry).
install_openai_js() {
  [ -d "$OPENAI_JS/node_modules/openai" ] && return 0
  echo "Installing the openai npm package for the OpenAI-endpoint tests (npm ci)..." >&2
  npm ci --prefix "$OPENAI_JS" --no-audit --no-fund --loglevel=error >/dev/null
}

# The path tests/browser/conftest.py launches, the font the screenshots need, and the nginx
# binary tests/nginx_proxy.py runs (Debian 12's `nginx` package; `nginx-light` only adds a module).
have_chromium() { [ -x /usr/bin/chromium ]; }
have_font() { fc-list 2>/dev/null | grep -qi "wenquanyi micro hei"; }
have_nginx() { [ -x "$NGINX" ]; }

PACKAGES=()
have_chromium || PACKAGES+=(chromium)
have_font || PACKAGES+=(fonts-wqy-microhei)
have_nginx || PACKAGES+=(nginx)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

if [ "${#PACKAGES[@]}" -eq 0 ]; then
  install_openai_js
  exit 0
fi

cannot_install() {
  echo "The tests need Debian's ${PACKAGES[*]}, and $0 cannot install them: $1." >&2
  echo "Install them, then run make test again:  sudo apt-get install ${PACKAGES[*]}" >&2
  exit 1
}

command -v apt-get >/dev/null 2>&1 || cannot_install "there is no apt-get"
# apt needs root: as root directly, else through sudo only if it works without a password, so an
# unattended `make test` never stops at a prompt.
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  cannot_install "that takes root, and sudo -n does not work here"
fi

# Installing nginx starts the system's nginx service on port 80 (its maintainer script asks
# invoke-rc.d). The tests never use that one, and a test machine must not start serving because
# its tests were set up, so for the length of the install a policy-rc.d (Debian's hook that
# invoke-rc.d consults, see /usr/share/doc/init-system-helpers/README.policy-rc.d.gz) refuses
# every service start. A machine that has a policy-rc.d of its own keeps it untouched.
POLICY=/usr/sbin/policy-rc.d
deny_service_starts() {
  [ -e "$POLICY" ] && return 0
  printf '#!/bin/sh\n# scripts/test-deps.sh, while it runs apt-get: start no service\nexit 101\n' |
    "${as_root[@]}" tee "$POLICY" >/dev/null
  "${as_root[@]}" chmod 755 "$POLICY"
  trap '"${as_root[@]}" rm -f "$POLICY"' EXIT
}
# On a machine run by systemd the package also enables the service for the next boot: off again,
# only when this script installed it (an nginx that was already there is the machine's own).
keep_nginx_service_off() {
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    "${as_root[@]}" systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
}

echo "Installing ${PACKAGES[*]} for the tests (apt-get)..." >&2
deny_service_starts
# A fresh machine's package lists may be missing or stale: refresh them first.
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
if [[ " ${PACKAGES[*]} " == *" nginx "* ]]; then
  keep_nginx_service_off
fi

if ! have_chromium || ! have_font || ! have_nginx; then
  echo "apt-get ran, yet /usr/bin/chromium, the WenQuanYi Micro Hei font or $NGINX is still missing" >&2
  exit 1
fi
install_openai_js
