#!/usr/bin/env bash
# Installs what the real-infrastructure suites need, each idempotent and cached outside the repository
# (WHETSTONE_CACHE_DIR, default ~/.cache/whetstone; Debian's packages for Swift), and says what each took:
#   Kafka   tools/kafka/install.sh         the broker's jars from Maven Central (Java 17+ and Maven)
#   S3      tools/swift/install.sh         OpenStack Swift with s3api from apt (root)
#   fuzz    tools/schemathesis/install.sh  schemathesis from PyPI in a virtualenv (python3)
# The suites install on first use too; running this first keeps installs out of the tests' time limits.
set -euo pipefail
cd "$(dirname "$0")/.."

timed() {
  local name=$1 start=$SECONDS
  shift
  "$@" >/dev/null
  printf 'test-infra: %-6s ready in %3d s\n' "$name" $((SECONDS - start))
}

timed kafka bash tools/kafka/install.sh
timed s3 bash tools/swift/install.sh
timed fuzz bash tools/schemathesis/install.sh
