#!/bin/sh
# A three-step chain on this machine: three batons started at once, each waiting for the previous one's post file.
set -eu
baton="node $(dirname "$0")/../dist/baton.cjs"
dir=$(mktemp -d /tmp/baton-demo.XXXXXX)
echo "three steps start at once in $dir; each waits for the previous step's post file"
$baton --wait-file "$dir/2" --post-file "$dir/3" -- sh -c 'echo "step 3: runs last"' &
$baton --wait-file "$dir/1" --post-file "$dir/2" -- sh -c 'echo "step 2: runs second"; sleep 0.2' &
$baton --post-file "$dir/1" -- sh -c 'echo "step 1: runs first"; sleep 0.2' &
wait
for f in 1 2 3; do printf 'post file %s: %s' "$f" "$(cat "$dir/$f")"; echo; done
