// The op `scale`: y = alpha * x for f32 vectors (x: input [n], y: output [n], scalar alpha = 2).
#pragma once
#include <memory>

#include <kiln/op_schema.hpp>

namespace scale_example {

// The op's contract: argument roles, validation into a Problem (dims {n}), the host reference.
std::shared_ptr<kiln::OpSchema> make_scale_schema();
// The host reference, also run by the host variant.
kiln::Status scale_reference(const kiln::Args& args, const kiln::Problem& p);

}  // namespace scale_example
