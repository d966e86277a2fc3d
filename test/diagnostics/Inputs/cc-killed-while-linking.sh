#!/bin/sh
# Stands in for the linker moec runs (`cc -shared -o OUT OBJECT ...`): it
# writes half a library into OUT, as a linker stopped part way would have,
# then kills moec (its parent) with SIGKILL, so that no clean-up of moec's
# can run. Whatever is left is what a killed moec leaves.
out=
while [ $# -gt 0 ]; do
  [ "$1" = -o ] && out=$2
  shift
done
printf 'half a library' > "$out"
kill -9 "$PPID"
