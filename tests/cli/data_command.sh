#!/usr/bin/env bash
# `tessera data` as a user meets it: generate a small data set (both layouts; the same seed the same
# bytes), inspect and read it (exit 0, the unitPar targets recovered from the volume, the HDF5 read
# mode stated), and bad input exits 2
# with an error naming the file or option.
set -u
tessera=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

expect() {  # expect CODE PATTERN COMMAND...: exit code and a substring of stdout+stderr
  local code=$1 pattern=$2
  shift 2
  local output
  output=$("$tessera" "$@" 2>&1)
  local actual=$?
  [ "$actual" -eq "$code" ] || fail "tessera $*: exit $actual, expected $code: $output"
  [[ "$output" == *"$pattern"* ]] || fail "tessera $*: output lacks '$pattern': $output"
}

data="$scratch/set"
expect 0 "wrote" data generate --output "$data" --samples 3 --width 8 --channels 2 --seed 5
[ -f "$data/sample_000002.h5" ] || fail "sample_000002.h5 was not written"
# The same seed writes the same bytes (no creation times in the files), a second later too.
sleep 1.1
expect 0 "wrote" data generate --output "$scratch/again" --samples 3 --width 8 --channels 2 --seed 5
diff -r "$data" "$scratch/again" >/dev/null || fail "the same seed wrote other bytes"
expect 0 "3 samples of 2x8x8x8 (C,D,H,W) float32" data inspect "$data"
expect 0 "sub-volume hyperslab" data inspect "$data"
expect 0 "estimated from the volume" data inspect "$data" --read
expect 0 "read depth slab 1 of 2 (D[3,8) H[0,8) W[0,8)) of 3 samples" \
  data inspect "$data" --read --parts 2 --part 1 --halo 1
expect 0 "with 2.000 ms of stand-in compute per sample" data inspect "$data" --read --compute-ms 2
expect 0 "in chunks of 2 depth planes" data generate --output "$scratch/chunked" --samples 1 \
  --width 8 --chunk-depth 2

expect 0 "3-class voxel labels" data generate --output "$scratch/seg" --samples 2 --width 8 \
  --task segmentation --classes 3
expect 0 "in the 3D U-Net (volume, segmentation) layout" data inspect "$scratch/seg" --read

expect 2 "--samples: expected a whole number from 1 to 10000000, got '0'" \
  data generate --output "$scratch/x" --samples 0 --width 8
expect 2 "--samples: expected a whole number from 1 to 10000000, got '2.5'" \
  data generate --output "$scratch/x" --samples 2.5 --width 8
expect 2 "Run 'tessera data generate --help' for usage." \
  data generate --output "$scratch/x" --samples 010 --width 8
expect 2 "--width" data generate --output "$scratch/x" --samples 1 --width 3
# A chunk deeper than the volume is the whole depth, and is said to be.
expect 0 "in chunks of 8 depth planes" data generate --output "$scratch/deep-chunk" --samples 1 \
  --width 8 --chunk-depth 100
expect 2 "$scratch/absent: no such data set directory" data inspect "$scratch/absent"
echo "not HDF5" > "$data/broken.h5"
expect 2 "$data/broken.h5: not an HDF5 file" data inspect "$data"
rm "$data/broken.h5"
expect 2 "does not fit a depth of 8" data inspect "$data" --read --parts 9
expect 2 "--halo 5 is wider than the thinnest of 2 depth slabs (4 planes)" \
  data inspect "$data" --read --parts 2 --halo 5
expect 2 "--compute-ms" data inspect "$data" --read --compute-ms -1
expect 2 "--task" data generate --output "$scratch/x" --samples 1 --width 8 --task classification
expect 2 "--classes" data generate --output "$scratch/x" --samples 1 --width 8 --task segmentation \
  --classes 1
expect 2 "expected one of the commands: generate inspect" data
expect 2 "unknown command 'inpsect'; expected one of the commands: generate inspect" data inpsect "$data"
expect 2 "unknown command 'dta'; expected one of the commands: validate describe run" dta inspect "$data"
# An empty name is refused (it read as "<input>: cannot open the file"), and a target that is
# neither a file nor a zoo model suggests the nearest model.
expect 2 "file: expected a name, got ''" run ''
expect 2 "target: expected a name, got ''" profile ''
expect 2 "resnt18: no such scenario file, and no zoo model of that name (tessera models lists them); did you mean 'resnet18'?" \
  profile resnt18 --list

echo "$failures failed"
[ "$failures" -eq 0 ]
