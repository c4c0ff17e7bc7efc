#!/usr/bin/env bash
# Installs what the test suite needs from outside PyPI: Debian's chromium (the browser tests
# drive /usr/bin/chromium through Playwright, which never downloads a browser of its own),
# fonts-wqy-microhei (so Chinese renders in the screenshots those tests save), Node.js, and the
# official `openai` npm package, pinned by tests/e2e/openai_js/package-lock.json (a real client
# of the OpenAI-compatible endpoint). `make test` runs this before pytest, so the README's test
# command passes by itself on a fresh machine; .ci/run gets it through `make test`. It does
# nothing when everything is already there.
set -euo pipefail

PACKAGES=(chromium fonts-wqy-microhei)
OPENAI_JS="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/openai_js"

# The npm client: `npm ci` installs exactly the locked version (from the npm registry).
install_openai_js() {
  [ -d "$OPENAI_JS/node_modules/openai" ] && return 0
  echo "Installing the openai npm package for the OpenAI-endpoint tests (npm ci)..." >&2
  npm ci --prefix "$OPENAI_JS" --no-audit --no-fund --loglevel=error >/dev/null
}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

# The path tests/browser/conftest.py launches, and the font the screenshots need.
have_chromium() { [ -x /usr/bin/chromium ]; }
have_font() { fc-list 2>/dev/null | grep -qi "wenquanyi micro hei"; }

if have_chromium && have_font && [ "${#PACKAGES[@]}" -eq 2 ]; then
  install_openai_js
  exit 0
fi

cannot_install() {
  echo "The browser tests need Debian's ${PACKAGES[*]}, and $0 cannot install them: $1." >&2
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

echo "Installing ${PACKAGES[*]} for the browser tests (apt-get)..." >&2
# A fresh machine's package lists may be missing or stale: refresh them first.
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >/dev/null

if ! have_chromium || ! have_font; then
  echo "apt-get ran, yet /usr/bin/chromium or the WenQuanYi Micro Hei font is still missing" >&2
  exit 1
fi
install_openai_js
