#!/usr/bin/env bash
# The fifteenth session's topk device run (issue 12), kept for the commands docs/performance.md
# and plugins/topk/README.md quote: scripts/topk16-device.sh runs the same stages with the same
# variables (and adds tests2, extra, alt and per-shape variant lists); its tests stage keeps the
# failing tests' output only, where this one kept each test's whole log.
#   scripts/topk15-device.sh OUT DEADLINE STAGE...
exec "$(dirname "$0")/topk16-device.sh" "$@"
