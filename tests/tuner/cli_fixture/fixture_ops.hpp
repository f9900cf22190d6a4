// Test-only plugins for the CLI smoke tests (host only, so CI needs no GPU):
//   tuner_fixture: op tuner_scale (y = 2 x, f32 vectors) with a reference variant and two
//                  tunable host variants;
//   tuner_broken:  op tuner_copy (y = x) whose tunable variant leaves the last element unwritten
//                  when mode=1, its default, so verify, demo and tune have a failure to report.
#pragma once
#include <kiln/registry.hpp>

kiln::Status register_tuner_fixture(kiln::Registry& registry) noexcept;
kiln::Status register_tuner_broken(kiln::Registry& registry) noexcept;
