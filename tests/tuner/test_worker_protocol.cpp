// The message framing between `kiln tune --devices` and its workers (tuner/cli/worker_protocol.hpp):
// any bytes survive, messages split across reads are reassembled, and a corrupt header is an
// error rather than a hang or a crash.
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "worker_protocol.hpp"

using kiln::cli::MessageReader;
using kiln::cli::WorkerMessage;

TEST_CASE("worker protocol: messages round-trip, fed whole or one byte at a time") {
  const WorkerMessage result{"result", {"7", "tuned", "gemm_tiled [BM=64] 12.3 us",
                                        "line one\nline two\n\n  spaced\n", std::string("nul\0byte", 8), ""}};
  const WorkerMessage ready{"ready", {"NVIDIA H200|sm_90|132sm"}};
  const std::string bytes = kiln::cli::encode_message(result) + kiln::cli::encode_message(ready);

  MessageReader whole;
  whole.feed(bytes.data(), bytes.size());
  auto a = whole.next();
  REQUIRE(a);
  CHECK(a->kind == "result");
  CHECK(a->fields == result.fields);
  CHECK(a->field(3) == "line one\nline two\n\n  spaced\n");
  CHECK(a->field(4).size() == 8);
  CHECK(a->field(99).empty());
  auto b = whole.next();
  REQUIRE(b);
  CHECK(b->kind == "ready");
  CHECK(b->field(0) == "NVIDIA H200|sm_90|132sm");
  CHECK_FALSE(whole.next());

  MessageReader trickle;
  std::size_t got = 0;
  for (char c : bytes) {
    trickle.feed(&c, 1);
    while (auto m = trickle.next()) {
      CHECK(m->kind == (got == 0 ? "result" : "ready"));
      ++got;
    }
  }
  CHECK(got == 2);
}

TEST_CASE("worker protocol: through a pipe, end of file after the last message") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  CHECK(kiln::cli::write_message(fds[1], {"tune", {"3"}}));
  CHECK(kiln::cli::write_message(fds[1], {"tune", {"11"}}));
  ::close(fds[1]);
  MessageReader r;
  auto m = kiln::cli::read_message(fds[0], r);
  REQUIRE(m);
  CHECK(m->field(0) == "3");
  m = kiln::cli::read_message(fds[0], r);
  REQUIRE(m);
  CHECK(m->field(0) == "11");
  CHECK_FALSE(kiln::cli::read_message(fds[0], r));
  ::close(fds[0]);
}

TEST_CASE("worker protocol: a corrupt header is an error") {
  for (const std::string bad : {"result x\n", "result 2 5\nabcde", "result 999 1\n", "\n"}) {
    INFO(bad);
    MessageReader r;
    r.feed(bad.data(), bad.size());
    CHECK_THROWS_AS(r.next(), std::runtime_error);
  }
  MessageReader endless;
  const std::string no_newline(5000, 'x');
  endless.feed(no_newline.data(), no_newline.size());
  CHECK_THROWS_AS(endless.next(), std::runtime_error);
}
