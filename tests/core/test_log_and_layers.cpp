// kiln/log.hpp (levels, the callback that takes kiln's messages), and the layering: this test
// program links libkiln alone, so KILN_TUNE=lazy must find the tuner at run time
// (core/src/tune_modes.cpp): loaded from libkiln's directory when it was built, else op() warns
// through the log and does not tune.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <kiln/kiln.hpp>

#include "catch.hpp"
#include "scale_op.hpp"

namespace {

struct Captured {
  std::mutex mutex;
  std::vector<std::pair<kiln::LogLevel, std::string>> messages;
  bool has(kiln::LogLevel level, const std::string& part) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [l, m] : messages)
      if (l == level && m.find(part) != std::string::npos) return true;
    return false;
  }
};

// Restores standard error and the level the test started with.
struct LogGuard {
  kiln::LogLevel saved = kiln::log_level();
  ~LogGuard() {
    kiln::set_log_callback({});
    kiln::set_log_level(saved);
  }
};

}  // namespace

TEST_CASE("log levels parse in any case and name themselves", "[log]") {
  CHECK(kiln::parse_log_level("WARN") == kiln::LogLevel::warn);
  CHECK(kiln::parse_log_level("warning") == kiln::LogLevel::warn);
  CHECK(kiln::parse_log_level("Err") == kiln::LogLevel::error);
  CHECK(kiln::parse_log_level("off") == kiln::LogLevel::off);
  CHECK_FALSE(kiln::parse_log_level("verbose").has_value());
  CHECK_FALSE(kiln::parse_log_level("").has_value());
  for (kiln::LogLevel l : {kiln::LogLevel::trace, kiln::LogLevel::debug, kiln::LogLevel::info, kiln::LogLevel::warn,
                           kiln::LogLevel::error, kiln::LogLevel::critical, kiln::LogLevel::off})
    CHECK(kiln::parse_log_level(kiln::log_level_name(l)) == l);
}

TEST_CASE("a log level outside LogLevel is refused, not read as off", "[log]") {
  // to_spdlog read LogLevel(99) (an integer from a config file, cast) as off: errors went unseen.
  LogGuard guard;
  kiln::set_log_level(kiln::LogLevel::warn);
  kiln::set_log_level(static_cast<kiln::LogLevel>(99));
  CHECK(kiln::log_level() == kiln::LogLevel::warn);
  CHECK(kiln::log_enabled(kiln::LogLevel::error));
  kiln::RuntimeOptions o;
  o.load_plugins = false;
  o.use_default_db_paths = false;
  o.log_level = static_cast<kiln::LogLevel>(99);
  std::string msg;
  try {
    kiln::Runtime rt(o);
  } catch (const kiln::ArgumentError& e) {
    msg = e.what();
  }
  CHECK(msg.find("RuntimeOptions::log_level = 99") != std::string::npos);
  CHECK(kiln::log_level() == kiln::LogLevel::warn);
}

TEST_CASE("the log callback takes kiln's messages at or above the level", "[log]") {
  LogGuard guard;
  auto captured = std::make_shared<Captured>();
  kiln::set_log_callback([captured](kiln::LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(captured->mutex);
    captured->messages.emplace_back(level, std::string(message));
  });
  kiln::set_log_level(kiln::LogLevel::warn);
  CHECK(kiln::log_enabled(kiln::LogLevel::error));
  CHECK_FALSE(kiln::log_enabled(kiln::LogLevel::info));
  kiln::log_message(kiln::LogLevel::warn, "a warning from a plugin");
  kiln::log_message(kiln::LogLevel::info, "not written at warn");
  CHECK(captured->has(kiln::LogLevel::warn, "a warning from a plugin"));
  CHECK_FALSE(captured->has(kiln::LogLevel::info, "not written at warn"));
  // Neither off nor a level outside the enum is a level to write at (it came out as "[off] ...").
  kiln::log_message(kiln::LogLevel::off, "written at off");
  kiln::log_message(static_cast<kiln::LogLevel>(42), "written at 42");
  CHECK_FALSE(kiln::log_enabled(static_cast<kiln::LogLevel>(42)));
  CHECK_FALSE(captured->has(kiln::LogLevel::off, "written at off"));
  CHECK_FALSE(captured->has(static_cast<kiln::LogLevel>(42), "written at 42"));
  {
    std::lock_guard<std::mutex> lock(captured->mutex);
    CHECK(captured->messages.size() == 1);
  }

  // Through RuntimeOptions: the level and the callback apply before plugins load, so the
  // runtime's own messages (an unusable plugin directory) arrive too.
  auto from_runtime = std::make_shared<Captured>();
  kiln::RuntimeOptions opts = kiln_test::offline_options("");
  opts.load_plugins = true;
  opts.plugin_dirs = {"relative/plugins"};
  opts.log_level = kiln::LogLevel::info;
  opts.log_callback = [from_runtime](kiln::LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(from_runtime->mutex);
    from_runtime->messages.emplace_back(level, std::string(message));
  };
  kiln::Runtime rt(opts);
  CHECK(kiln::log_level() == kiln::LogLevel::info);
  CHECK(from_runtime->has(kiln::LogLevel::error, "relative/plugins"));
  CHECK_FALSE(captured->has(kiln::LogLevel::error, "relative/plugins"));  // the newer callback took it
}

TEST_CASE("a program linking libkiln alone finds the tuner at run time, or says it cannot", "[layers]") {
  // The tuner is not linked into this test program.
  REQUIRE(dlsym(RTLD_DEFAULT, "kiln_tuner_install_tune_mode") == nullptr);
  LogGuard guard;
  auto captured = std::make_shared<Captured>();
  kiln::RuntimeOptions opts = kiln_test::offline_options("");
  opts.tune_mode = "lazy";
  opts.log_callback = [captured](kiln::LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(captured->mutex);
    captured->messages.emplace_back(level, std::string(message));
  };
  kiln::Runtime rt(kiln_test::scale_registry(), opts);
#if KILN_TEST_TUNER_BUILT
  // libkiln_tuner.so lies next to libkiln.so: loaded, and op() tunes the miss.
  CHECK(rt.tune_mode() == "lazy");
  CHECK(dlsym(RTLD_DEFAULT, "kiln_tuner_install_tune_mode") == nullptr);  // loaded locally
  auto x = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {64});
  auto y = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {64});
  x.fill_bytes(0);
  rt.op("scale")({x, y});
  const kiln::Problem p = rt.op("scale").problem({x, y});
  const kiln::Decision* d = rt.dispatcher().find(p);
  REQUIRE(d != nullptr);
  CHECK(d->from == kiln::Decision::From::tuned_now);
#else
  // Built with -DKILN_BUILD_TUNER=OFF: no tuner anywhere; op() says so once and does not tune.
  CHECK(rt.tune_mode() == "off");
  CHECK(captured->has(kiln::LogLevel::warn, "KILN_TUNE=lazy: cannot load the tuner library"));
#endif
  CHECK_THROWS_WITH(kiln::Runtime(kiln_test::scale_registry(), [] {
                      kiln::RuntimeOptions o = kiln_test::offline_options("");
                      o.tune_mode = "eager";
                      return o;
                    }()),
                    KILN_CONTAINS("RuntimeOptions::tune_mode = 'eager'"));
}

TEST_CASE("KILN_CHECK other than 0 or 1 is reported, not silently off", "[log]") {
  LogGuard guard;
  auto captured = std::make_shared<Captured>();
  kiln::RuntimeOptions opts = kiln_test::offline_options("");
  opts.log_callback = [captured](kiln::LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(captured->mutex);
    captured->messages.emplace_back(level, std::string(message));
  };
  ::setenv("KILN_CHECK", "yes", 1);
  kiln::Runtime rt(kiln_test::scale_registry(), opts);
  ::unsetenv("KILN_CHECK");
  CHECK_FALSE(rt.checks_every_call());
  CHECK(captured->has(kiln::LogLevel::warn, "KILN_CHECK='yes' is not 0 or 1"));
}

TEST_CASE("environment values quoted in warnings cannot send escape sequences to the terminal", "[log]") {
  // KILN_TUNE and KILN_CHECK were quoted byte for byte: an ESC in them reached standard error.
  LogGuard guard;
  auto captured = std::make_shared<Captured>();
  kiln::RuntimeOptions opts = kiln_test::offline_options("");
  opts.tune_mode.clear();  // read KILN_TUNE
  opts.log_callback = [captured](kiln::LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(captured->mutex);
    captured->messages.emplace_back(level, std::string(message));
  };
  ::setenv("KILN_TUNE", "\x1b[2Jrace", 1);
  ::setenv("KILN_CHECK", "\x1b]0;title\x07", 1);
  kiln::Runtime rt(kiln_test::scale_registry(), opts);
  ::unsetenv("KILN_TUNE");
  ::unsetenv("KILN_CHECK");
  CHECK(rt.tune_mode() == "off");
  CHECK(captured->has(kiln::LogLevel::warn, "KILN_TUNE='\\x1b[2Jrace' is not a tuning mode"));
  CHECK(captured->has(kiln::LogLevel::warn, "KILN_CHECK='\\x1b]0;title\\x07' is not 0 or 1"));
  std::lock_guard<std::mutex> lock(captured->mutex);
  for (const auto& m : captured->messages) CHECK(m.second.find('\x1b') == std::string::npos);
}

TEST_CASE("a log callback that logs or replaces itself does not hang", "[log]") {
  // The callback ran under the sink's lock: logging from it (or calling kiln code that logs), or
  // setting the callback from it, locked the same mutex again on the same thread and hung.
  LogGuard guard;
  kiln::set_log_level(kiln::LogLevel::warn);
  auto captured = std::make_shared<Captured>();
  auto replacement = [captured](kiln::LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(captured->mutex);
    captured->messages.emplace_back(level, "replacement: " + std::string(message));
  };
  kiln::set_log_callback([captured, replacement](kiln::LogLevel level, std::string_view message) {
    {
      std::lock_guard<std::mutex> lock(captured->mutex);
      captured->messages.emplace_back(level, "first: " + std::string(message));
    }
    kiln::log_message(kiln::LogLevel::error, "logged from inside the callback");  // to standard error
    kiln::set_log_callback(replacement);  // takes over once this call returns
  });
  // Off the test's thread, so that a hang fails the test instead of stalling the suite.
  auto done = std::async(std::launch::async, [] {
    kiln::log_message(kiln::LogLevel::warn, "one");
    kiln::log_message(kiln::LogLevel::warn, "two");
  });
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    std::fprintf(stderr, "a log callback that logs or replaces itself hung kiln's log\n");
    std::_Exit(1);  // the hung thread cannot be joined
  }
  CHECK(captured->has(kiln::LogLevel::warn, "first: one"));
  CHECK(captured->has(kiln::LogLevel::warn, "replacement: two"));
  CHECK_FALSE(captured->has(kiln::LogLevel::warn, "first: two"));
  CHECK_FALSE(captured->has(kiln::LogLevel::error, "logged from inside the callback"));
}
