// Sharding a plan across hosts: `kiln tune --plan P --shard i/N` tunes the problems whose hash
// falls in share i of N, so N hosts given 0/N ... N-1/N tune disjoint shares that together cover
// the plan, each into its own database (`kiln db merge` combines them).  Without --shard, the
// rank and size set by the launcher are used: mpirun (OMPI_COMM_WORLD_RANK/SIZE), MPICH and
// Intel MPI (PMI_RANK/SIZE), srun (SLURM_PROCID/NTASKS).
//
//   kiln::Plan plan = kiln::load_plan("plan.yaml");
//   kiln::Shard s = kiln::parse_shard("1/4");
//   for (std::size_t i : kiln::shard_indices(plan, s))
//     std::cout << plan.problems[i].op << " " << plan.problems[i].shape << "\n";   // this shard's share
//
// Why a hash of the problem and not round-robin over the plan's order: a problem keeps its
// shard when lines are added to or removed from the plan, so a host that resumes an edited plan
// finds its earlier work in its own database.  The hash (FNV-1a, 64 bits, then the MurmurHash3
// finaliser) is the same on every platform and build.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/tuner/plan.hpp"

namespace kiln {

struct Shard {
  std::size_t index = 0;   // 0 <= index < count
  std::size_t count = 1;
  std::string source;      // where it came from: "--shard", "OMPI_COMM_WORLD_RANK/SIZE", ...
  bool whole() const { return count == 1; }
  std::string to_string() const;  // "1/4"
};

// "i/N" with 0 <= i < N; throws ArgumentError naming `what` (e.g. "--shard") and the text.
Shard parse_shard(const std::string& text, const std::string& what = "--shard");

// The launcher's rank and size, or nullopt when no launcher variables are set.  Looks at
// OMPI_COMM_WORLD_RANK/SIZE first (mpirun inside a Slurm allocation also sees the allocation's
// SLURM_* variables), then PMI_RANK/SIZE, then SLURM_PROCID/NTASKS.  Throws ArgumentError
// naming the variables when one of a pair is missing or a value is not a valid rank or size.
using GetEnv = std::function<const char*(const char*)>;
std::optional<Shard> shard_from_environment(const GetEnv& getenv);
std::optional<Shard> shard_from_environment();  // the process environment

// The key a problem is sharded by: "op|dtype|shape" as the plan writes it (whitespace trimmed).
std::string shard_key(const PlanItem& item);
std::uint64_t shard_hash(const std::string& key);  // FNV-1a 64, then MurmurHash3's fmix64
// Which share of `count` the item belongs to.
std::size_t shard_of(const PlanItem& item, std::size_t count);
// The indices of plan.problems in `shard`, in plan order.
std::vector<std::size_t> shard_indices(const Plan& plan, const Shard& shard);

}  // namespace kiln
