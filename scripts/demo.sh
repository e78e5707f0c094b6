#!/usr/bin/env bash
# The main job: install what is missing, build, run `cudakit demo`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build"
exec "$root/build/bin/cudakit" demo "$@"
