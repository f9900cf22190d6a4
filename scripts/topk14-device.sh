#!/usr/bin/env bash
# The fourteenth session's topk device run (issue 12), kept for the commands docs/performance.md
# and plugins/topk/README.md quote: scripts/topk15-device.sh is the same script with a `base`
# stage added, and without BASE or that stage it does exactly what this one did.
#   scripts/topk14-device.sh OUT DEADLINE STAGE...
exec "$(dirname "$0")/topk15-device.sh" "$@"
