#!/usr/bin/env bash
# core's folders in layers (docs/design/architecture.md, "core's layers"): a file may include the
# core headers of its own folder and of the folders below it, never of one above. A header belongs
# to the folder of its source file (core/src/<folder>/[...]/<name>.cpp), or, without one, to the folder
# named below. Upward includes still being removed are listed, one "FILE includes HEADER" per
# line, in tests/style/core_layers_known.txt: an upward include not listed fails, naming the file,
# the line and both folders; a listed one that is gone fails too, so the list only shrinks.
#   tests/style/check_core_layers.sh [REPOSITORY]
set -euo pipefail
repo=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$repo"
layers=(common model zoo scenario cost micro_batching strategy time_to_train loading point result
  report plan_search)
declare -A header_only=(
  [embedded_files.hpp]=common [integer_division.hpp]=common [layer_compute_time.hpp]=common
  [scenario.hpp]=scenario [micro_batch_planner.hpp]=micro_batching
  [time_to_train.hpp]=time_to_train)
known_file=tests/style/core_layers_known.txt

declare -A rank=()
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done
declare -A folder_of=()
while read -r source; do
  folder=$(cut -d/ -f3 <<<"$source")
  [ -n "${rank[$folder]:-}" ] || { echo "check_core_layers.sh: core/src/$folder is not a layer (add it to 'layers')" >&2; exit 1; }
  folder_of[$(basename "$source" .cpp).hpp]=$folder
done < <(find core/src -mindepth 2 -name '*.cpp')
for header in "${!header_only[@]}"; do folder_of[$header]=${header_only[$header]}; done

failures=0
for header in core/include/tessera/core/*.hpp; do
  [ -n "${folder_of[$(basename "$header")]:-}" ] || {
    echo "$header: no core/src/<folder>/$(basename "$header" .hpp).cpp: name its folder in header_only" >&2
    failures=$((failures + 1))
  }
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
    target=${folder_of[$header]:-}
    [ -n "$target" ] && [ "${rank[$target]}" -gt "${rank[$folder]}" ] || continue
    if [ -n "${known["$file includes $header"]:-}" ]; then
      seen["$file includes $header"]=1
    else
      echo "$file:$number: includes $header ($target), above its folder ($folder)" >&2
      failures=$((failures + 1))
    fi
  done < <(grep -n '#include "tessera/core/' "$file" || true)
}
for header in core/include/tessera/core/*.hpp; do
  folder=${folder_of[$(basename "$header")]:-}
  [ -z "$folder" ] || check "$header" "$folder"
done
while read -r file; do
  check "$file" "$(cut -d/ -f3 <<<"$file")"
done < <(find core/src -name '*.cpp' -o -name '*.hpp' | sort)

for entry in "${!known[@]}"; do
  [ -n "${seen[$entry]:-}" ] || {
    echo "$known_file: '$entry' is no longer an upward include: remove the line" >&2
    failures=$((failures + 1))
  }
done
if [ "$failures" -gt 0 ]; then
  echo "check_core_layers.sh: $failures problem(s); layers, bottom first: ${layers[*]}" >&2
  exit 1
fi
echo "check_core_layers.sh: core's includes follow its layers (${#known[@]} known exceptions left)"
