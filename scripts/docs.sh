#!/usr/bin/env bash
# docs.sh [OUT_DIR]: the documentation site (Sphinx with the furo theme; the C++ API from Doxygen's
# XML through Breathe; the Python API through autodoc) into OUT_DIR (default build-docs/html),
# warnings as errors. Installs what it needs, once: doxygen from Debian, as scripts/setup.sh
# installs the build's packages; Sphinx, furo, Breathe and MyST into a project venv (.venv-docs,
# which git ignores). Idempotent: what is there already is not fetched again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-docs/html}
work=$root/build-docs
CUDAKIT_EXTRA_PACKAGES="doxygen ${CUDAKIT_EXTRA_PACKAGES:-}" "$root/scripts/setup.sh"

venv=$root/.venv-docs
python=${CUDAKIT_PYTHON:-python3}
# Version ranges known to build the site together (Breathe 4.35 needs Sphinx 7.2 or later).
requirements=("sphinx>=7.2,<10" "furo>=2024.1" "breathe>=4.35,<5" "myst-parser>=2,<6")
if [ ! -x "$venv/bin/sphinx-build" ] || ! "$venv/bin/python" -c "import furo, breathe, myst_parser" 2>/dev/null; then
  echo "docs: installing ${requirements[*]} into $venv"
  if [ ! -x "$venv/bin/python" ] && ! "$python" -m venv "$venv"; then
    # Debian's python3 keeps venv (ensurepip) in a package of its own.
    CUDAKIT_EXTRA_PACKAGES=python3-venv "$root/scripts/setup.sh"
    rm -rf "$venv"
    "$python" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q "${requirements[@]}"
fi

echo "== docs: Doxygen over include/cudakit (XML for Breathe)"
mkdir -p "$work/doxygen"
# Doxygen reads the Doxyfile from the repository root (INPUT and the filter are relative to it);
# the output goes to this build's folder. Its warnings fail the build (WARN_AS_ERROR).
(cd "$root" && { cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $work/doxygen"; } | doxygen -)

echo "== docs: Sphinx (warnings are errors) -> $out"
# The Python API imports the package from python/; the compiled extension, where it was not
# built, is mocked (docs/conf.py). -E: Sphinx does not know that the API pages depend on
# Doxygen's XML, so every page is read again (a kept environment would show stale headers).
CUDAKIT_DOXYGEN_XML="$work/doxygen/xml" "$venv/bin/sphinx-build" -q -E -W --keep-going -b html \
    -d "$work/doctrees" -j "${CUDAKIT_JOBS:-auto}" "$root/docs" "$out"
echo "docs: $out/index.html"
