#!/usr/bin/env bash
# core's folders in layers (docs/design/architecture.md, "core's layers"): a file may include the
# core headers of its own folder and of the folders below it, never of one above. Headers mirror
# the sources: core/include/tessera/core/<folder>/ holds the headers of core/src/<folder>/, and
# every folder is a layer. Upward includes still being removed are listed, one "FILE includes
# FOLDER/HEADER" per line, in tests/style/core_layers_known.txt: an upward include not listed
# fails, naming the file, the line and both folders; a listed one that is gone fails too, so the
# list only shrinks.
#   tests/style/check_core_layers.sh [REPOSITORY]
set -euo pipefail
repo=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$repo"
layers=(common model zoo scenario cost micro_batching strategy time_to_train loading point result
  report plan_search)
known_file=tests/style/core_layers_known.txt
headers=core/include/tessera/core

declare -A rank=()
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done

failures=0
fail() {
  echo "$1" >&2
  failures=$((failures + 1))
}
for header in "$headers"/*.hpp; do
  [ -e "$header" ] || continue
  fail "$header: a core header belongs in the folder of its sources, $headers/<folder>/"
done
for folder in $(cd core/src && ls -d */ | tr -d /) $(cd "$headers" && ls -d */ | tr -d /); do
  [ -n "${rank[$folder]:-}" ] || fail "core/src/$folder or $headers/$folder: not a layer (add it to 'layers')"
done

declare -A known=()
if [ -f "$known_file" ]; then
  while read -r file word header; do
    [[ -z $file || $file == \#* ]] || known["$file includes $header"]=1
  done <"$known_file"
fi

declare -A seen=()
check() {  # check FILE FOLDER
  local file=$1 folder=$2 line number header target
  while IFS=: read -r number line; do
    header=${line#*tessera/core/}
    header=${header%%\"*}
    target=${header%%/*}
    [ -n "${rank[$target]:-}" ] && [ "${rank[$target]}" -gt "${rank[$folder]}" ] || continue
    if [ -n "${known["$file includes $header"]:-}" ]; then
      seen["$file includes $header"]=1
    else
      fail "$file:$number: includes $header ($target), above its folder ($folder)"
    fi
  done < <(grep -n '#include "tessera/core/' "$file" || true)
}
while read -r file; do
  case $file in
    core/src/*) folder=$(cut -d/ -f3 <<<"$file") ;;
    *) folder=$(cut -d/ -f5 <<<"$file") ;;
  esac
  [ -n "${rank[$folder]:-}" ] && check "$file" "$folder"
done < <(find core/src "$headers" -mindepth 2 \( -name '*.cpp' -o -name '*.hpp' \) | sort)

for entry in "${!known[@]}"; do
  [ -n "${seen[$entry]:-}" ] || fail "$known_file: '$entry' is no longer an upward include: remove the line"
done
if [ "$failures" -gt 0 ]; then
  echo "check_core_layers.sh: $failures problem(s); layers, bottom first: ${layers[*]}" >&2
  exit 1
fi
echo "check_core_layers.sh: core's includes follow its layers (${#known[@]} known exceptions left)"
