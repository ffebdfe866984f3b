# shellcheck shell=bash
# The comma-separated target lists of the options (scenario files or zoo names), for the steps.
# Splits a comma-separated list onto lines.
items() { tr ',' '\n' <<<"$1" | sed '/^$/d'; }
# A target's file name: a scenario's base name, or the zoo model's.
target_name() { local name; name=$(basename "$1" .yaml); echo "${name//:/_}"; }
# A scenario path relative to the repository becomes absolute; a zoo name stays.
target_path() { if [ -f "$repo/$1" ]; then echo "$repo/$1"; else echo "$1"; fi; }
