#!/usr/bin/env bash
# Fails, listing the files, when a C++ or CUDA source of the repository differs from what
# clang-format (the repository's .clang-format) makes of it. Fix with:
#   git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cu' '*.cuh' |
#     xargs clang-format-14 -i
# Files not yet added to git count too: a new file would otherwise pass here and fail in CI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ]; then
  echo "check_format.sh: clang-format-14 is not installed (./setup.sh installs it)" >&2
  exit 1
fi
mapfile -t sources < <(git ls-files --cached --others --exclude-standard \
  '*.cpp' '*.hpp' '*.cu' '*.cuh' 2>/dev/null ||
  find core kernels simulator app tests -name '*.[ch]pp' -o -name '*.cu' -o -name '*.cuh')
# One clang-format for every file; its complaints begin "path:line:column: error:".
mapfile -t unformatted < <("$format" --dry-run --Werror "${sources[@]}" 2>&1 >/dev/null |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check_format.sh: ${#unformatted[@]} file(s) not formatted as .clang-format says:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check_format.sh: ${#sources[@]} sources formatted"
