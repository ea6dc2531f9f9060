#!/usr/bin/env bash
# Resolve the one-node test broker's jars (tools/kafka/pom.xml) from Maven Central into a cache outside the
# repository, once: WHETSTONE_CACHE_DIR (default $XDG_CACHE_HOME/whetstone, else ~/.cache/whetstone)/kafka/jars-<v>.
# Idempotent; prints the directory. Needs Java 17+ and Maven 3.
set -euo pipefail
cd "$(dirname "$0")"

version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' pom.xml)
cache="${WHETSTONE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/whetstone}"
dir="$cache/kafka/jars-$version"

if [ ! -f "$dir/kafka_2.13-$version.jar" ]; then
  command -v java >/dev/null || { echo "tools/kafka: java (17+) is needed to run the test broker" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "tools/kafka: mvn (Maven 3) is needed to fetch the broker's jars" >&2; exit 1; }
  tmp="$dir.partial.$$"
  rm -rf "$tmp"
  mkdir -p "$(dirname "$dir")"
  mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" >&2
  rm -rf "$dir"
  mv "$tmp" "$dir"
fi
echo "$dir"
