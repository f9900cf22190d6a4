#!/usr/bin/env bash
# The sixteenth session's device call 2 (helper topk16): the final tree (grid_rank_kernel from
# k = 1024, kGridRankCap 4096) on call 1's shapes (the held-out ones fixed before call 1), main's
# plugin (BASE) and the 8192-candidate cap of call 1's tree (ALTS) in the same call.
DEVG=""
for dt in f32 bf16 f16; do for n in 1048576 4194304; do for k in 1024 2048 4096; do DEVG="$DEVG 1x${n}x$k:$dt"; done; done; done
DEV24=""
for dt in f32 bf16 f16; do for k in 1024 2048 4096; do DEV24="$DEV24 1x16777216x$k:$dt:topk_sample_select"; done; done
HELD="1x3000017x3000:f32 1x700001x4096:f32 1x2500009x1500:bf16 1x3000017x4096:bf16 1x1234567x2500:f16 1x700001x1024:f16"
ALT_SHAPES="1x1048576x4096:f32 1x4194304x4096:f32 1x1048576x4096:bf16 1x4194304x4096:bf16 1x1048576x4096:f16 1x4194304x4096:f16"
export DEV="$DEVG" EXTRA="$DEV24" HELD ALT_SHAPES BASE_SHAPES="$DEVG $HELD" BASE=base16 ALTS="cap8192=alt8192" ROW_SECONDS=0.4
export BUILD_TESTS="test_topk_grid_select_gpu test_topk_gpu test_topk_half_gpu" TESTS="test_topk_grid_select_gpu"
export TESTS2="test_topk_half_gpu;test_topk_gpu" TEST_TIMEOUT=${TEST_TIMEOUT:-60}
exec scripts/topk16-device.sh "$@"
