#!/usr/bin/env bash
# The fourteenth session's topk device run (issue 12), kept for the commands docs/performance.md
# and plugins/topk/README.md quote: scripts/topk15-device.sh (which now runs topk16-device.sh) is
# the same script with a `base` stage added; without BASE or that stage it runs this one's stages.
#   scripts/topk14-device.sh OUT DEADLINE STAGE...
exec "$(dirname "$0")/topk15-device.sh" "$@"
