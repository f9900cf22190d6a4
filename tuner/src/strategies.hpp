// The built-in strategies, made by kiln::make_strategy (strategy.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "kiln/tuner/strategy.hpp"

namespace kiln::detail {

std::unique_ptr<Strategy> make_exhaustive_strategy();
std::unique_ptr<Strategy> make_random_strategy();
std::unique_ptr<Strategy> make_anneal_strategy();

// rng() % n without the implementation-defined distributions of <random>, so a seed gives the
// same sequence with every standard library.
inline std::size_t pick(std::mt19937_64& rng, std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); }
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace kiln::detail
