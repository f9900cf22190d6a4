// Sharding a plan across hosts (kiln/tuner/shard.hpp) and the work queue of `kiln tune
// --devices` (kiln/tuner/tune_queue.hpp).  The processes themselves are tested through the CLI
// (tests/tuner/CMakeLists.txt: cli_pool_*, pool_shards.sh, pool_interrupt.sh).
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <kiln/errors.hpp>
#include <kiln/tuner/plan.hpp>
#include <kiln/tuner/shard.hpp>
#include <kiln/tuner/tune_queue.hpp>

#include "catch.hpp"
#include "test_util.hpp"

namespace {

kiln::Plan plan_of(std::size_t n) {
  kiln::Plan plan;
  for (std::size_t i = 0; i < n; ++i) {
    kiln::PlanItem item;
    item.op = i % 3 == 0 ? "gemm" : (i % 3 == 1 ? "topk" : "reduce_sum");
    item.dtype = i % 2 ? kiln::DType::f32 : kiln::DType::bf16;
    item.shape = std::to_string(64 + 37 * i) + "x" + std::to_string(1000 + i);
    plan.problems.push_back(item);
  }
  return plan;
}

kiln::GetEnv env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST_CASE("shard: i/N parses, and bad shares are errors that name the flag") {
  const kiln::Shard s = kiln::parse_shard("2/8");
  CHECK(s.index == 2);
  CHECK(s.count == 8);
  CHECK(s.to_string() == "2/8");
  CHECK_FALSE(s.whole());
  CHECK(kiln::parse_shard("0/1").whole());
  for (const char* bad : {"8/8", "1", "a/4", "1/0", "-1/4", "1/", "/4", "1/4/2", " 1/4", "99999999999/3"}) {
    INFO(bad);
    const std::string msg = kiln_test::error_message([&] { kiln::parse_shard(bad); });
    CHECK(kiln_test::contains(msg, "bad --shard"));
    CHECK(kiln_test::contains(msg, "0 <= i < N"));
  }
}

TEST_CASE("shard: a bad share's text is quoted without its control characters") {
  // --shard and the launcher variables were echoed raw: an escape sequence reached the terminal.
  std::string msg = kiln_test::error_message([] { kiln::parse_shard("\x1b[2J1/4"); });
  CHECK(kiln_test::contains(msg, "bad --shard '\\x1b[2J1/4'"));
  CHECK_FALSE(kiln_test::contains(msg, "\x1b"));
  msg = kiln_test::error_message([] { kiln::parse_shard("\x1b]0;x\a"); });  // no slash
  CHECK_FALSE(kiln_test::contains(msg, "\x1b"));
  CHECK_FALSE(kiln_test::contains(msg, "\a"));
  msg = kiln_test::error_message(
      [] { kiln::shard_from_environment(env_of({{"SLURM_PROCID", "\x1b[31m"}, {"SLURM_NTASKS", "4"}})); });
  CHECK(kiln_test::contains(msg, "SLURM_PROCID/SLURM_NTASKS"));
  CHECK_FALSE(kiln_test::contains(msg, "\x1b"));
}

TEST_CASE("shard: the launcher's rank and size, OpenMPI first, then PMI, then Slurm") {
  CHECK_FALSE(kiln::shard_from_environment(env_of({})).has_value());
  auto s = kiln::shard_from_environment(env_of({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}));
  REQUIRE(s);
  CHECK(s->to_string() == "3/4");
  CHECK(s->source == "SLURM_PROCID/SLURM_NTASKS");
  // mpirun inside a Slurm allocation: the allocation's SLURM_* describe the batch step, not MPI.
  s = kiln::shard_from_environment(env_of({{"SLURM_PROCID", "0"},
                                           {"SLURM_NTASKS", "16"},
                                           {"OMPI_COMM_WORLD_RANK", "5"},
                                           {"OMPI_COMM_WORLD_SIZE", "8"}}));
  REQUIRE(s);
  CHECK(s->to_string() == "5/8");
  CHECK(s->source == "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE");
  s = kiln::shard_from_environment(env_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  REQUIRE(s);
  CHECK(s->to_string() == "1/2");

  std::string msg = kiln_test::error_message([] { kiln::shard_from_environment(env_of({{"OMPI_COMM_WORLD_RANK", "1"}})); });
  CHECK(kiln_test::contains(msg, "OMPI_COMM_WORLD_SIZE is not set"));
  msg = kiln_test::error_message(
      [] { kiln::shard_from_environment(env_of({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}})); });
  CHECK(kiln_test::contains(msg, "SLURM_PROCID/SLURM_NTASKS '4/4'"));
  msg = kiln_test::error_message(
      [] { kiln::shard_from_environment(env_of({{"PMI_RANK", "x"}, {"PMI_SIZE", "4"}})); });
  CHECK(kiln_test::contains(msg, "PMI_RANK/PMI_SIZE 'x/4'"));
}

TEST_CASE("shard: the shares of a plan are disjoint and cover it, for every N") {
  const kiln::Plan plan = plan_of(300);
  for (std::size_t n = 1; n <= 9; ++n) {
    INFO("N = " << n);
    std::vector<int> owner(plan.problems.size(), -1);
    std::size_t smallest = plan.problems.size(), largest = 0;
    for (std::size_t i = 0; i < n; ++i) {
      kiln::Shard s;
      s.index = i;
      s.count = n;
      const std::vector<std::size_t> mine = kiln::shard_indices(plan, s);
      CHECK(std::is_sorted(mine.begin(), mine.end()));
      smallest = std::min(smallest, mine.size());
      largest = std::max(largest, mine.size());
      for (std::size_t k : mine) {
        CHECK(owner[k] == -1);  // disjoint
        owner[k] = static_cast<int>(i);
      }
    }
    CHECK(std::count(owner.begin(), owner.end(), -1) == 0);  // covering
    // A hash spreads 300 problems roughly evenly (no share is empty or holds most of them).
    CHECK(smallest * 3 >= plan.problems.size() / n);
    CHECK(largest <= 2 * plan.problems.size() / n + 5);
  }
}

TEST_CASE("shard: a problem keeps its share when the plan is edited around it") {
  kiln::Plan plan = plan_of(50);
  std::map<std::string, std::size_t> before;
  for (const kiln::PlanItem& item : plan.problems) before[kiln::shard_key(item)] = kiln::shard_of(item, 4);
  kiln::Plan edited;
  kiln::PlanItem added;
  added.op = "histogram";
  added.shape = "n=1048576,bins=256";
  edited.problems.push_back(added);
  for (std::size_t i = 0; i < plan.problems.size(); i += 2) edited.problems.push_back(plan.problems[i]);
  for (const kiln::PlanItem& item : edited.problems)
    if (before.count(kiln::shard_key(item))) CHECK(kiln::shard_of(item, 4) == before[kiln::shard_key(item)]);
  // The key is what the plan wrote, whitespace aside; the hash is the same number everywhere
  // (values computed independently from FNV-1a 64 and MurmurHash3's fmix64).
  kiln::PlanItem spaced = plan.problems[0];
  spaced.shape = "  " + spaced.shape + " ";
  CHECK(kiln::shard_key(spaced) == kiln::shard_key(plan.problems[0]));
  CHECK(kiln::shard_key(plan.problems[0]) == "gemm|bf16|64x1000");
  CHECK(kiln::shard_hash("") == 0xefd01f60ba992926ull);
  CHECK(kiln::shard_hash("a") == 0x82a2a958a9bece5bull);
  CHECK(kiln::shard_hash("gemm|f32|4096x4096x4096") == 0x71343df74787d598ull);
}

TEST_CASE("tune queue: each task goes to a worker of its fingerprint, oldest first") {
  kiln::TuneQueue q;
  const std::string h200 = "NVIDIA H200|sm_90|132sm", h100 = "NVIDIA H100 80GB HBM3|sm_90|132sm";
  // Two problems for each of two models: four tasks.
  for (std::size_t item : {0, 1}) {
    q.add(item, h200);
    q.add(item, h100);
  }
  CHECK(q.pending(h200) == 2);
  CHECK(q.pending(h100) == 2);
  auto a = q.take(h200);
  auto b = q.take(h200);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(q.task(*a).item == 0);
  CHECK(q.task(*b).item == 1);
  CHECK(q.task(*a).fingerprint == h200);
  CHECK_FALSE(q.take(h200));  // the H200s' share is handed out; the H100's is still there
  CHECK(q.running(h200) == 2);
  CHECK(q.pending(h100) == 2);
  CHECK_FALSE(q.take("host"));
  q.finish(*a);
  q.finish(*b);
  CHECK(q.count(kiln::TuneQueue::State::finished) == 2);
  CHECK(q.task(*q.take(h100)).item == 0);
}

TEST_CASE("tune queue: a task whose worker died is retried once, then failed") {
  kiln::TuneQueue q(2);
  const std::size_t crash = q.add(0, "fp");
  q.add(1, "fp");
  auto first = q.take("fp");
  REQUIRE(first);
  CHECK(*first == crash);
  CHECK(q.retry(crash));  // back in the queue, behind the other task
  CHECK(q.task(crash).state == kiln::TuneQueue::State::pending);
  auto next = q.take("fp");
  REQUIRE(next);
  CHECK(q.task(*next).item == 1);
  q.finish(*next);
  auto again = q.take("fp");
  REQUIRE(again);
  CHECK(*again == crash);
  CHECK(q.task(crash).attempts == 2);
  CHECK_FALSE(q.retry(crash));  // out of attempts
  CHECK(q.task(crash).state == kiln::TuneQueue::State::failed);
  CHECK_FALSE(q.take("fp"));
  CHECK(kiln_test::contains(kiln_test::error_message([&] { q.finish(crash); }), "not running"));
  // fail() takes a pending task out of the queue.
  const std::size_t orphan = q.add(2, "gone");
  q.fail(orphan);
  CHECK(q.pending("gone") == 0);
  CHECK_FALSE(q.take("gone"));
}

TEST_CASE("the plan for timing the worker pool on GPUs loads, with at least 40 problems") {
  const kiln::Plan plan = kiln::load_plan(std::string(KILN_SOURCE_DIR) + "/tests/tuner/gpu/pool_timing_plan.yaml");
  CHECK(plan.problems.size() >= 40);
  CHECK(plan.strategy == std::optional<std::string>("random"));
  std::set<std::string> keys;
  for (const kiln::PlanItem& item : plan.problems) keys.insert(kiln::shard_key(item));
  CHECK(keys.size() == plan.problems.size());  // no problem twice
}
