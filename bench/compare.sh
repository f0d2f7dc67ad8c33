#!/usr/bin/env bash
# Interleaved A/B of Polyfn's cached-call cost between two checkouts of this repository, each
# already built with `mvn -B -q -Pbench -pl bench -am package -DskipTests`:
#   bash bench/compare.sh /path/to/old-checkout /path/to/new-checkout [rounds]
# Writes /tmp/ab-{old,new}-ROUND.json (JMH JSON) and prints each round's scores.
set -euo pipefail
OLD="$1"; NEW="$2"; ROUNDS="${3:-2}"
for round in $(seq 1 "$ROUNDS"); do
  for side in old new; do
    DIR="$OLD"; [ "$side" = new ] && DIR="$NEW"
    CP="$DIR/bench/target/classes:$(cat "$DIR/bench/target/classpath.txt")"
    java -cp "$CP" org.openjdk.jmh.Main '^dev.polyfn.bench.CallBench.polyfn$' \
      -p workload=add2,args16,list100,map10 -f 1 -wi 2 -w 1s -i 4 -r 1s \
      -rf json -rff "/tmp/ab-$side-$round.json" > "/tmp/ab-$side-$round.log" 2>&1
    echo "$side round $round (load $(cut -d' ' -f1-3 /proc/loadavg)):"
    grep -E '^CallBench.polyfn' "/tmp/ab-$side-$round.log" || true
  done
done
