// Test-only plugins for the CLI smoke tests (host only, so CI needs no GPU):
//   tuner_fixture: op tuner_scale (y = 2 x, f32 vectors) with a reference variant and two
//                  tunable host variants;
//   tuner_broken:  op tuner_copy (y = x) whose tunable variant leaves the last element unwritten
//                  when mode=1, its default, so verify, demo and tune have a failure to report;
//   tuner_fault:   op tuner_fault (y = 2 x) whose tunable variant crashes the process or is slow
//                  at chosen sizes (fault_ops.cpp), for the worker pool tests of `kiln tune --devices`.
#pragma once
#include <memory>
#include <string>

#include <kiln/op_schema.hpp>
#include <kiln/registry.hpp>

// The schema of y = factor * x over f32 vectors, one dim `n`.
std::shared_ptr<kiln::OpSchema> vector_op(const std::string& name, float factor);

kiln::Status register_tuner_fixture(kiln::Registry& registry) noexcept;
kiln::Status register_tuner_broken(kiln::Registry& registry) noexcept;
kiln::Status register_tuner_fault(kiln::Registry& registry) noexcept;
