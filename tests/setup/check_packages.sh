#!/usr/bin/env bash
# Does setup.sh install every Debian package a configured build uses?
#
#   tests/setup/check_packages.sh [--reuse DIR] [BUILD_DIR] [SETUP_SCRIPT]
#                                                          (defaults: build, setup.sh)
#
# A new machine has only the packages of every Debian system (Priority required or important);
# everything else the build touches must come from setup.sh's `packages=(...)` list, with the
# Depends of those packages (as `apt-get install --no-install-recommends` installs them). A package
# that merely happens to be on this machine (a Recommends, something a colleague installed) makes
# the build work here and fail on a new machine; this check turns that into a CI failure.
#
# The files a build uses: the absolute paths in CMakeCache.txt (libraries, headers, tools found by
# configure), the headers the compiler read (ninja's dependency log) and the shared libraries the
# built binaries load (ldd). Files no Debian package owns (/usr/local/cuda, the build itself) are
# not counted. Exit 0 when all is covered, 1 naming each missing package and one file of it, 2 on
# bad arguments. --reuse DIR keeps the packages the build uses (steps 1 and 2, most of the time) in
# DIR and reads them from there when DIR has them: for checking several lists against one build.
set -uo pipefail
reuse=
if [ "${1:-}" = --reuse ]; then
  reuse=${2:-}
  [ -d "$reuse" ] || { echo "check_packages: --reuse takes an existing directory, not '$reuse'" >&2; exit 2; }
  shift 2
fi
build=${1:-build}
setup=${2:-setup.sh}
[ -f "$build/CMakeCache.txt" ] || { echo "check_packages: $build/CMakeCache.txt not found (configure first)" >&2; exit 2; }
[ -f "$setup" ] || { echo "check_packages: $setup not found" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export LC_ALL=C  # one collation for sort, join and comm
if [ -n "$reuse" ] && [ -f "$reuse/used" ] && [ -f "$reuse/owners" ]; then
  cp "$reuse/used" "$reuse/owners" "$work/"
else
  # 1. Files the build uses.
  {
    # CTest's dashboard tools (git, valgrind, gcov...) are found at configure but never run by the
    # build or its tests.
    grep -vE '^(GITCOMMAND|MEMORYCHECK_COMMAND|COVERAGE_COMMAND|[A-Z]+COMMAND)(-ADVANCED)?:' \
      "$build/CMakeCache.txt" | grep -oE '=/[^;]*' | cut -c2- | tr ';' '\n'
    if [ -f "$build/.ninja_deps" ] && command -v ninja >/dev/null; then
      (cd "$build" && ninja -t deps) 2>/dev/null | grep -oE '^ +/[^ ]+' | tr -d ' '
    fi
    find "$build" -type f \( -perm -u+x -o -name '*.so*' \) -size +8k 2>/dev/null |
      while read -r binary; do
        [ "$(head -c 4 "$binary" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
        ldd "$binary" 2>/dev/null | grep -oE '=> /[^ ]+' | cut -c4-
      done
  } | sort -u >"$work/paths"

  # dpkg knows a file by the path its package shipped it at: /lib/... and /usr/lib/... are one
  # directory on a merged-/usr system, so both spellings count, and a symlink's target too.
  { cat "$work/paths"; xargs -a "$work/paths" -d '\n' realpath -qe 2>/dev/null; } | sort -u |
    while read -r path; do
      [ -f "$path" ] || continue
      echo "$path"
      case $path in
        /usr/lib/* | /usr/bin/* | /usr/sbin/*) echo "${path#/usr}" ;;
        /lib/* | /bin/* | /sbin/*) echo "/usr$path" ;;
      esac
    done | sort -u >"$work/files"

  # 2. The packages owning them, from dpkg's file lists (one `dpkg -S` per file is far slower).
  awk '{ package = FILENAME; sub(/^.*\//, "", package); sub(/\.list$/, "", package)
         sub(/:.*/, "", package); print $0 "\t" package }' /var/lib/dpkg/info/*.list |
    sort -t $'\t' -k1,1 >"$work/owner_table"
  sort -o "$work/files" "$work/files"
  join -t $'\t' "$work/files" "$work/owner_table" | awk -F '\t' '{print $2 ": " $1}' >"$work/owners"
  cut -d: -f1 "$work/owners" | sort -u >"$work/used"
  if [ -n "$reuse" ]; then cp "$work/used" "$work/owners" "$reuse/"; fi
fi

# 3. What a new machine has, and what setup.sh installs with its Depends.
dpkg-query -W -f='${Package} ${Priority}\n' |
  awk '$2 == "required" || $2 == "important" {print $1}' | sort -u >"$work/base"
sed -n '/^packages=(/,/^)/p' "$setup" | sed '1d;$d' | sed 's/#.*//' | tr ' \t' '\n\n' |
  grep -E '^[a-z0-9]' | sort -u >"$work/listed"
xargs -a "$work/listed" apt-cache depends --recurse --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances 2>/dev/null |
  grep -vE '^[ <]' | sed -E 's/:[a-z0-9]+$//' | sort -u >"$work/installed_by_setup"

missing=$(comm -23 "$work/used" <(sort -u "$work/base" "$work/installed_by_setup" "$work/listed"))
if [ -n "$missing" ]; then
  echo "check_packages: the build in $build uses Debian packages that a new machine lacks and" \
       "$setup does not install (add them to its packages list):"
  for package in $missing; do
    example=$(grep -m 1 -E "^$package: " "$work/owners" | sed -E 's/^.*: //')
    echo "  $package   (e.g. $example)"
  done
  exit 1
fi
echo "check_packages: every Debian package the build uses ($(wc -l <"$work/used")) is on every" \
     "Debian system or installed by $setup"
