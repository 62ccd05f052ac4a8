#!/usr/bin/env bash
# The gRPC frontend reaches the core through server/core/core.h alone (and
# the endpoint bodies it shares with HTTP through server/views/):
# Bazel keeps model.h and the folders' private headers out of its reach, and
# this test keeps it from including the public headers that core.h gathers
# (registry.h, request.h...) directly, so core.h stays the one list of what
# a frontend uses. Arguments: the frontend's source files (not its tests and
# fuzz targets, which make models from configs to drive it).
set -u
allowed='^server/(grpc/[a-z_]+\.h|views/[a-z_]+\.h|common/[a-z_]+\.h|api/[a-z_]+\.h|core/core\.h|options\.h)$'
bad=0
for f in "$@"; do
  while IFS= read -r inc; do
    if ! [[ $inc =~ $allowed ]]; then
      echo "$f includes $inc: a frontend reaches the core through server/core/core.h"
      bad=1
    fi
  done < <(sed -n 's/^#include "\(server\/[^"]*\)".*/\1/p' "$f")
done
[ "$bad" -eq 0 ] && echo "$# files: every server include is the frontend's own, views, common, api or core.h"
exit $bad
