#!/usr/bin/env bash
# Lints the public .proto files (api/cairnpb) with buf, pinned below, per
# buf.yaml. buf is built once with `go install` into the user's cache
# (CAIRN_BUF overrides the binary); .ci/run builds it before `make test`.
#   scripts/buf-lint.sh            lint (installing buf first if missing)
#   scripts/buf-lint.sh --install  only install
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=v1.75.0
buf="${CAIRN_BUF:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/buf/$BUF_VERSION/buf}"
if ! [ -x "$buf" ]; then
  echo "building buf $BUF_VERSION into $(dirname "$buf") (once; about 2 minutes)" >&2
  GOBIN="$(cd "$(dirname "$buf")" 2>/dev/null && pwd || (mkdir -p "$(dirname "$buf")" && cd "$(dirname "$buf")" && pwd))" \
    GOFLAGS=-mod=mod go install "github.com/bufbuild/buf/cmd/buf@$BUF_VERSION"
fi
[ "${1:-}" = "--install" ] && exit 0
"$buf" lint
echo "buf lint: api/cairnpb clean (buf $BUF_VERSION)"
