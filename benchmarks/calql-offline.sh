#!/usr/bin/env bash
# Offline CalQL end to end: writes RECORDS generated records (CalqlRecords, the generator of
# CalqlQueryBenchmark) as one JSON Lines file, then times `profold query` over it REPEAT times.
# Prints, per run, the 1-minute load average before it, wall and CPU seconds, peak RSS, and
# records per second of wall time and of CPU time; then the query's result.
#
# Run from the repository root after building both jars (see docs/benchmarks.md):
#   benchmarks/calql-offline.sh [RECORDS] [REPEAT]      defaults: 10000000 3
# The file (about 1.6 GB for 10M records) goes to a temporary directory that is removed at the
# end, unless CALQL_BENCH_DIR names a directory to keep it in (and reuse it on the next run).
set -euo pipefail

records=${1:-10000000}
repeat=${2:-3}
query='SELECT service, kind, count(), sum(time), avg(time), max(time) GROUP BY service, kind'

for jar in benchmarks/target/benchmarks.jar collector/target/profold.jar; do
  if [ ! -f "$jar" ]; then
    echo "missing $jar: build it first (docs/benchmarks.md, CalQL offline queries)" >&2
    exit 2
  fi
done

if [ -n "${CALQL_BENCH_DIR:-}" ]; then
  dir=$CALQL_BENCH_DIR
  mkdir -p "$dir"
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
file="$dir/calql-records-$records.jsonl"

if [ ! -f "$file" ]; then
  echo "generating $records records into $file"
  java -cp benchmarks/target/benchmarks.jar dev.profold.benchmarks.CalqlRecords "$records" "$file.tmp"
  mv "$file.tmp" "$file"
fi
echo "input: $(wc -c <"$file") bytes, $records records"
echo "query: $query"

for run in $(seq "$repeat"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" \
    java -jar collector/target/profold.jar query -q "$query" "$file" >"$dir/result.txt"
  read -r wall user sys rss <"$dir/time.txt"
  awk -v r="$run" -v n="$records" -v w="$wall" -v u="$user" -v s="$sys" -v m="$rss" -v l="$load" \
    'BEGIN { printf "run %d: load %s, wall %.2f s, cpu %.2f s (user %.2f, sys %.2f), max RSS %d MB, %.0f records/s wall, %.0f records/s cpu\n",
             r, l, w, u + s, u, s, m / 1024, n / w, n / (u + s) }'
done
cat "$dir/result.txt"
