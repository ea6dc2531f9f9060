#!/usr/bin/env bash
# OpenStack Swift with its S3 API (s3api), from Debian's packages: the S3 server the blob-store suites run
# (packages/testing/src/swift-s3.ts starts a one-node copy from a temp dir). Idempotent; needs root for apt-get.
set -euo pipefail
if command -v swift-proxy-server >/dev/null 2>&1 && command -v swift-object-server >/dev/null 2>&1; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq swift swift-proxy swift-object swift-container swift-account >/dev/null
