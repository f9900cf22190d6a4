// The plugin loader against the fixture plugins in tests/core/plugins_fixture: a good plugin, one
// without the entry, one with the next ABI version, one clashing with the good one, and a
// garbage file written here.  The good one must load and run whatever the others do; the rival
// loads without the name it clashes on.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>
#include <kiln/plugin.hpp>  // kPluginAbiVersion

#include "catch.hpp"
#include "test_util.hpp"
#include "install_paths.hpp"  // core/src: kiln::detail::library_dir() and friends

using kiln_test::contains;

#ifndef KILN_FIXTURE_PLUGIN_DIR
#error "KILN_FIXTURE_PLUGIN_DIR must name the directory holding the fixture plugins"
#endif
#ifndef KILN_FIXTURE_EXTRA_DIR
#error "KILN_FIXTURE_EXTRA_DIR must name the directory holding fixture_offspace"
#endif

namespace fs = std::filesystem;

namespace {

// A fresh directory with copies of the fixture plugins plus a garbage "plugin" and a file the
// loader must ignore; removed at the end.
class FixtureDir {
 public:
  explicit FixtureDir(const std::string& tag) {
    path_ = fs::temp_directory_path() / ("kiln_plugin_loader_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
    for (const auto& entry : fs::directory_iterator(KILN_FIXTURE_PLUGIN_DIR)) {
      if (entry.path().extension() == ".so") fs::copy_file(entry.path(), path_ / entry.path().filename());
    }
    std::mt19937 rng(1234);
    std::ofstream garbage(path_ / "libkiln_garbage.so", std::ios::binary);
    for (int i = 0; i < 4096; ++i) garbage.put(static_cast<char>(rng() & 0xff));
    std::ofstream(path_ / "libkiln_ignored.so.txt") << "not a plugin name";
  }
  ~FixtureDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

kiln::RuntimeOptions options_with_plugins(std::vector<std::string> dirs) {
  kiln::RuntimeOptions o;
  o.load_plugins = true;
  o.plugin_dirs = std::move(dirs);
  o.use_default_db_paths = false;
  o.tune_mode = "off";
  return o;
}

kiln::RuntimeOptions options_without_plugins() {
  kiln::RuntimeOptions o;
  o.load_plugins = false;
  o.use_default_db_paths = false;
  o.tune_mode = "off";
  return o;
}

// The reason recorded for `file`, or "" when it has none.
std::string reason_for(const std::vector<kiln::PluginLoadError>& errors, const std::string& file) {
  for (const kiln::PluginLoadError& e : errors) {
    if (e.file == file) return e.reason;
  }
  return {};
}

// Runs fixture_scale (y = factor * x) on the host through `rt` and checks the result.
void check_scale_runs(kiln::Runtime& rt) {
  const int n = 37;
  std::vector<float> xs(n);
  for (int i = 0; i < n; ++i) xs[i] = 0.25f * static_cast<float>(i) - 3.0f;
  auto x = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  auto y = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  x.copy_from_host(xs.data(), xs.size() * sizeof(float));
  y.fill_bytes(0xff);  // NaN: an unwritten element cannot pass
  rt.op("fixture_scale")(kiln::Args({x, y}, {3.0}));
  const std::vector<float> ys = y.to_host<float>();
  for (int i = 0; i < n; ++i) {
    INFO("i = " << i);
    REQUIRE(ys[i] == 3.0f * xs[i]);
  }
}

}  // namespace

TEST_CASE("the good plugin loads and runs while every bad one is reported", "[plugin_loader]") {
  FixtureDir dir("mixed");
  const std::string missing = dir.str() + "/no_such_dir";
  kiln::Runtime rt(options_with_plugins({dir.str(), missing}));

  REQUIRE(rt.loaded_plugins() ==
          std::vector<std::string>{dir.file("libkiln_fixture_good.so"), dir.file("libkiln_fixture_rival.so")});
  const kiln::Variant* v = rt.registry().find_variant("fixture_scale_host");
  REQUIRE(v != nullptr);
  const kiln::Source& source = rt.registry().source_of(*v);
  CHECK(source.plugin == "fixture_good");
  CHECK(source.version == "1.2.3");
  CHECK(source.build_id.size() == 12);  // kiln_add_plugin's hash
  CHECK(source.file == dir.file("libkiln_fixture_good.so"));
  CHECK(rt.registry().source_of(rt.registry().op("fixture_scale")).plugin == "fixture_good");
  // The rival's clashing op is refused; its variant (of the good plugin's op) got in.
  REQUIRE(rt.registry().find_variant("fixture_scale_rival") != nullptr);
  CHECK(rt.registry().source_of(*rt.registry().find_variant("fixture_scale_rival")).plugin == "fixture_rival");

  check_scale_runs(rt);

  const std::vector<kiln::PluginLoadError>& errors = rt.plugin_errors();
  std::string all;
  for (const kiln::PluginLoadError& e : errors) all += e.file + ": " + e.reason + "\n";
  INFO(all);
  CHECK(errors.size() == 5);
  CHECK(reason_for(errors, dir.file("libkiln_fixture_noentry.so")) == "no kiln_plugin_entry (not a kiln plugin)");
  const std::string abi = reason_for(errors, dir.file("libkiln_fixture_abi.so"));
  CHECK(contains(abi, "ABI version " + std::to_string(kiln::kPluginAbiVersion + 1)));
  CHECK(contains(abi, "expects ABI version " + std::to_string(kiln::kPluginAbiVersion)));
  CHECK(contains(reason_for(errors, dir.file("libkiln_garbage.so")), "not an ELF file"));
  const std::string rival = reason_for(errors, dir.file("libkiln_fixture_rival.so"));
  CHECK(contains(rival, "op 'fixture_scale' is already registered by plugin fixture_good"));
  CHECK(contains(rival, dir.file("libkiln_fixture_good.so")));
  CHECK(contains(rival, dir.file("libkiln_fixture_rival.so")));
  CHECK(contains(reason_for(errors, missing), "cannot read plugin directory"));
  CHECK(reason_for(errors, dir.file("libkiln_ignored.so.txt")).empty());

  // An op nobody registered: the error says which plugin files did not load (one of them may
  // have held it), at most three of them by name.
  const std::string unknown = kiln_test::error_message([&] { rt.op("fixture_missing"); });
  CHECK(contains(unknown, "unknown op 'fixture_missing'"));
  CHECK(contains(unknown, "5 plugin file(s) failed to load"));
  CHECK(contains(unknown, "no kiln_plugin_entry (not a kiln plugin)") + contains(unknown, "not an ELF file") +
            contains(unknown, "ABI version") + contains(unknown, "already registered") +
            contains(unknown, "cannot read plugin directory") == 3);
  CHECK(contains(unknown, "; and 2 more"));
  CHECK_THROWS_AS(rt.op("fixture_missing"), kiln::UnknownOpError);
}

TEST_CASE("PluginLoader reports each file with its reason and never throws", "[plugin_loader]") {
  FixtureDir dir("direct");
  kiln::Registry registry;
  kiln::PluginLoader loader;

  CHECK_FALSE(loader.load_file(dir.file("libkiln_garbage.so"), registry));
  CHECK_FALSE(loader.load_file(dir.file("libkiln_fixture_noentry.so"), registry));
  CHECK_FALSE(loader.load_file(dir.file("libkiln_fixture_abi.so"), registry));
  CHECK_FALSE(loader.load_file(dir.file("no_such_file.so"), registry));
  CHECK(loader.load_file(dir.file("libkiln_fixture_good.so"), registry));
  CHECK(loader.load_file(dir.file("libkiln_fixture_rival.so"), registry));  // less its clashing op
  REQUIRE(loader.errors().size() == 5);
  CHECK(loader.errors()[0].file == dir.file("libkiln_garbage.so"));
  CHECK(loader.errors()[1].reason == "no kiln_plugin_entry (not a kiln plugin)");
  CHECK(loader.errors()[4].file == dir.file("libkiln_fixture_rival.so"));
  CHECK(loader.loaded() ==
        std::vector<std::string>{dir.file("libkiln_fixture_good.so"), dir.file("libkiln_fixture_rival.so")});
  CHECK(registry.find_variant("fixture_scale_host") != nullptr);
}

TEST_CASE("a second library with an already loaded plugin name is skipped", "[plugin_loader]") {
  FixtureDir dir("dup");
  const fs::path second = fs::path(dir.str()) / "second";
  fs::create_directories(second);
  fs::copy_file(dir.file("libkiln_fixture_good.so"), second / "libkiln_fixture_good_copy.so");

  kiln::Registry registry;
  kiln::PluginLoader loader;
  // The first directory listed twice: its files load once, without errors for the repeat.
  loader.load_dirs({dir.str(), dir.str(), second.string()}, registry);
  CHECK(loader.loaded() ==
        std::vector<std::string>{dir.file("libkiln_fixture_good.so"), dir.file("libkiln_fixture_rival.so")});
  const std::string reason = reason_for(loader.errors(), (second / "libkiln_fixture_good_copy.so").string());
  CAPTURE(reason);
  CHECK(contains(reason, "'fixture_good' is already loaded"));
  CHECK(loader.errors().size() == 5);  // garbage, noentry, abi, rival, the copy
}

TEST_CASE("loaded_plugins names the plugin of every loaded file, in load order", "[plugin_loader]") {
  FixtureDir dir("names");
  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.load_dirs({dir.str()}, registry);
  REQUIRE(loader.loaded_plugins().size() == loader.loaded().size());
  REQUIRE(loader.loaded_plugins().size() == 2);
  CHECK(loader.loaded_plugins()[0].plugin == "fixture_good");
  CHECK(loader.loaded_plugins()[0].version == "1.2.3");
  CHECK(loader.loaded_plugins()[0].file == dir.file("libkiln_fixture_good.so"));
  CHECK(loader.loaded_plugins()[1].plugin == "fixture_rival");
}

TEST_CASE("a loaded variant keeps its library alive after the loader is gone", "[plugin_loader]") {
  FixtureDir dir("alive");
  const std::string good = dir.file("libkiln_fixture_good.so");
  kiln::Registry registry;
  {
    kiln::PluginLoader loader;
    REQUIRE(loader.load_file(good, registry));
  }
  // Still mapped: RTLD_NOLOAD only finds a library that is loaded.
  void* handle = dlopen(good.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  CHECK(handle != nullptr);
  if (handle != nullptr) dlclose(handle);

  kiln::Runtime rt(std::move(registry), options_without_plugins());
  check_scale_runs(rt);
}

TEST_CASE("the default search path follows KILN_PLUGIN_PATH, else the install", "[plugin_loader]") {
  const char* saved = std::getenv("KILN_PLUGIN_PATH");
  const std::string saved_value = saved != nullptr ? saved : "";

  ::unsetenv("KILN_PLUGIN_PATH");
  const std::vector<std::string> installed = kiln::PluginLoader::default_search_path();
  REQUIRE(installed.size() == 1);
  // Found from libkiln.so itself: <libdir>/kiln/plugins, and <libdir> holds libkiln.so (the
  // build tree has the install's layout).
  const fs::path plugin_dir(installed[0]);
  CHECK(plugin_dir.filename() == "plugins");
  CHECK(plugin_dir.parent_path().filename() == "kiln");
  CHECK(fs::exists(plugin_dir.parent_path().parent_path() / "libkiln.so"));
  const fs::path lib_dir(kiln::detail::library_dir());
  CHECK(lib_dir == plugin_dir.parent_path().parent_path());
  CHECK(fs::path(kiln::detail::installed_plugin_dir()) == plugin_dir);
  // <libdir>/../share/kiln/configs for libdir = lib (one more ../ for lib/<multiarch>).
  const std::string config_dir = kiln::detail::installed_config_dir();
  CAPTURE(config_dir);
  CHECK(config_dir.size() > 19);
  CHECK(config_dir.compare(config_dir.size() - 19, 19, "/share/kiln/configs") == 0);
  CHECK(config_dir.find("..") == std::string::npos);

  ::setenv("KILN_PLUGIN_PATH", "/opt/a:/opt/b", 1);
  CHECK(kiln::PluginLoader::default_search_path() == std::vector<std::string>{"/opt/a", "/opt/b"});
  // An empty entry stands for the installed directory.
  ::setenv("KILN_PLUGIN_PATH", "/opt/a:", 1);
  CHECK(kiln::PluginLoader::default_search_path() == std::vector<std::string>{"/opt/a", installed[0]});
  // Set but empty: no plugin directory (the rule of KILN_CONFIG_PATH too).
  ::setenv("KILN_PLUGIN_PATH", "", 1);
  CHECK(kiln::PluginLoader::default_search_path().empty());
  ::setenv("KILN_PLUGIN_PATH", ":", 1);
  CHECK(kiln::PluginLoader::default_search_path() == installed);

  if (saved != nullptr) {
    ::setenv("KILN_PLUGIN_PATH", saved_value.c_str(), 1);
  } else {
    ::unsetenv("KILN_PLUGIN_PATH");
  }
}

namespace {

// An empty scratch directory, removed at the end.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = fs::temp_directory_path() / ("kiln_plugin_loader_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Copies a fixture plugin in (under `as`, default its own name).
  std::string add(const std::string& fixture, const std::string& as = "") const {
    const fs::path to = path_ / (as.empty() ? fixture : as);
    fs::copy_file(fs::path(KILN_FIXTURE_PLUGIN_DIR) / fixture, to);
    return to.string();
  }

 private:
  fs::path path_;
};

}  // namespace

TEST_CASE("shipped plugins keep their names whoever is found first", "[plugin_loader]") {
  ScratchDir shipped("shipped"), third("third_party");
  const std::string good = shipped.add("libkiln_fixture_good.so");
  // Named to be found first: a third party that reuses the shipped plugin's op name.
  const std::string rival = third.add("libkiln_fixture_rival.so", "libkiln_aaa_rival.so");

  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.set_shipped_dir(shipped.str());
  // The third-party directory is listed first; the shipped directory still loads first.
  loader.load_dirs({third.str(), shipped.str()}, registry);

  REQUIRE(loader.loaded() == std::vector<std::string>{good, rival});
  CHECK(registry.source_of(registry.op("fixture_scale")).file == good);
  REQUIRE(registry.find_variant("fixture_scale_host") != nullptr);
  CHECK(registry.source_of(*registry.find_variant("fixture_scale_host")).plugin == "fixture_good");
  // The rest of the third-party plugin still loads.
  REQUIRE(registry.find_variant("fixture_scale_rival") != nullptr);
  CHECK(registry.source_of(*registry.find_variant("fixture_scale_rival")).file == rival);
  REQUIRE(loader.errors().size() == 1);
  CHECK(loader.errors()[0].file == rival);
  CHECK(contains(loader.errors()[0].reason, "op 'fixture_scale' is already registered by plugin fixture_good"));
  CHECK(contains(loader.errors()[0].reason, good));
  CHECK(contains(loader.errors()[0].reason, rival));

  kiln::Runtime rt(std::move(registry), options_without_plugins());
  check_scale_runs(rt);
}

TEST_CASE("between other plugins the first found keeps a name; the rest of the second loads", "[plugin_loader]") {
  ScratchDir dir("first_wins");
  const std::string rival = dir.add("libkiln_fixture_rival.so", "libkiln_aaa_rival.so");
  const std::string good = dir.add("libkiln_fixture_good.so");
  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.set_shipped_dir("");
  loader.load_dirs({dir.str()}, registry);
  CHECK(loader.loaded() == std::vector<std::string>{rival, good});
  CHECK(registry.source_of(registry.op("fixture_scale")).file == rival);
  CHECK(registry.find_variant("fixture_scale_host") != nullptr);  // the good one's variant, kept
  CHECK(registry.find_variant("fixture_scale_rival") != nullptr);
  REQUIRE(loader.errors().size() == 1);
  CHECK(loader.errors()[0].file == good);
}

TEST_CASE("relative plugin directories are ignored with a reason", "[plugin_loader]") {
  ScratchDir dir("relative");
  dir.add("libkiln_fixture_good.so");
  const fs::path saved = fs::current_path();
  fs::current_path(dir.path());  // "." would find the plugin
  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.load_dirs({".", "plugins", ""}, registry);
  fs::current_path(saved);
  CHECK(loader.loaded().empty());
  CHECK(registry.find_op("fixture_scale") == nullptr);
  REQUIRE(loader.errors().size() == 3);
  for (const kiln::PluginLoadError& e : loader.errors()) CHECK(contains(e.reason, "relative plugin directory ignored"));
  CHECK(loader.errors()[0].file == ".");
  // An empty name gets no "$PWD/" advice (there is nothing to append it to).
  CHECK(contains(loader.errors()[2].reason, "the name is empty"));
  CHECK(!contains(loader.errors()[2].reason, "$PWD/"));

  // Through KILN_PLUGIN_PATH and a Runtime: the absolute entry still loads.
  const char* saved_env = std::getenv("KILN_PLUGIN_PATH");
  const std::string saved_value = saved_env != nullptr ? saved_env : "";
  ::setenv("KILN_PLUGIN_PATH", (".:plugins:" + dir.str()).c_str(), 1);
  kiln::RuntimeOptions o = options_with_plugins({});
  kiln::Runtime rt(o);
  if (saved_env != nullptr) {
    ::setenv("KILN_PLUGIN_PATH", saved_value.c_str(), 1);
  } else {
    ::unsetenv("KILN_PLUGIN_PATH");
  }
  CHECK(rt.loaded_plugins() == std::vector<std::string>{dir.file("libkiln_fixture_good.so")});
  CHECK(contains(reason_for(rt.plugin_errors(), "."), "relative plugin directory ignored"));
  CHECK(contains(reason_for(rt.plugin_errors(), "plugins"), "relative plugin directory ignored"));
}

TEST_CASE("files that cannot be whole libraries are refused before dlopen, named", "[plugin_loader]") {
  ScratchDir dir("precheck");
  const std::string good = dir.add("libkiln_fixture_good.so");
  const auto size = fs::file_size(good);
  // A library cut short: dlopen of such a file died with SIGBUS (the whole process).
  const std::string truncated = dir.add("libkiln_fixture_good.so", "libkiln_truncated.so");
  fs::resize_file(truncated, size / 2);
  const std::string tiny = dir.file("libkiln_tiny.so");
  std::ofstream(tiny, std::ios::binary) << "\x7f" "ELF";
  const std::string text = dir.file("libkiln_text.so");
  std::ofstream(text) << "INPUT(libfoo.so) /* a linker script is not a plugin */\n" << std::string(200, ' ');
  const std::string empty = dir.file("libkiln_empty.so");
  std::ofstream{empty};

  CHECK(kiln::plugin_file_problem(good).empty());
  CHECK(contains(kiln::plugin_file_problem(truncated), "truncated"));
  CHECK(contains(kiln::plugin_file_problem(tiny), "smaller than an ELF header"));
  CHECK(contains(kiln::plugin_file_problem(text), "not an ELF file"));
  CHECK(contains(kiln::plugin_file_problem(empty), "0 bytes"));
  CHECK(contains(kiln::plugin_file_problem(dir.file("missing.so")), "cannot open"));
  CHECK(contains(kiln::plugin_file_problem(dir.str()), "not a regular file"));

  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.load_dirs({dir.str()}, registry);
  CHECK(loader.loaded() == std::vector<std::string>{good});
  CHECK(contains(reason_for(loader.errors(), truncated), "truncated"));
  CHECK(contains(reason_for(loader.errors(), tiny), "ELF header"));
  CHECK(contains(reason_for(loader.errors(), text), "not an ELF file"));
  CHECK(loader.errors().size() == 4);
}

TEST_CASE("non-files named like plugins and off-space defaults are reported, not skipped silently", "[plugin_loader]") {
  ScratchDir dir("odd_files");
  fs::create_directory(dir.path() / "libkiln_a_directory.so");
  fs::create_symlink(dir.path() / "no_such_target.so", dir.path() / "libkiln_dangling.so");
  REQUIRE(::mkfifo(dir.file("libkiln_fifo.so").c_str(), 0600) == 0);
  fs::copy_file(fs::path(KILN_FIXTURE_EXTRA_DIR) / "libkiln_fixture_offspace.so", dir.path() / "libkiln_fixture_offspace.so");

  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.load_dirs({dir.str()}, registry);  // must not block on the FIFO
  CHECK(loader.errors().empty());
  CHECK(loader.loaded() == std::vector<std::string>{dir.file("libkiln_fixture_offspace.so")});
  std::string all;
  for (const kiln::PluginLoadError& w : loader.warnings()) all += w.file + ": " + w.reason + "\n";
  INFO(all);
  CHECK(loader.warnings().size() == 4);
  CHECK(contains(reason_for(loader.warnings(), dir.file("libkiln_a_directory.so")), "a directory"));
  CHECK(contains(reason_for(loader.warnings(), dir.file("libkiln_dangling.so")), "does not exist"));
  CHECK(contains(reason_for(loader.warnings(), dir.file("libkiln_fifo.so")), "not a regular file"));
  const std::string offspace = reason_for(loader.warnings(), dir.file("libkiln_fixture_offspace.so"));
  CHECK(contains(offspace, "fixture_offspace_host"));
  CHECK(contains(offspace, "unroll=3"));
  CHECK(contains(offspace, "outside its own space"));
}

TEST_CASE("a plugin that needs a symbol nothing defines is refused at load, not called", "[plugin_loader]") {
  // Loaded lazily it passed the checks, and its register function's first call of the missing
  // function made ld.so end the process ("symbol lookup error", status 127).
  ScratchDir dir("unresolved");
  fs::copy_file(fs::path(KILN_FIXTURE_EXTRA_DIR) / "libkiln_fixture_unresolved.so",
                dir.path() / "libkiln_fixture_unresolved.so");
  dir.add("libkiln_fixture_good.so");
  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.load_dirs({dir.str()}, registry);
  CHECK(loader.loaded() == std::vector<std::string>{dir.file("libkiln_fixture_good.so")});
  const std::string why = reason_for(loader.errors(), dir.file("libkiln_fixture_unresolved.so"));
  INFO(why);
  CHECK(contains(why, "cannot load"));
  CHECK(contains(why, "undefined symbol"));
  CHECK(contains(why, "kiln_fixture_function_nobody_defines"));
}

TEST_CASE("a load error quoting raw bytes from the library is escaped", "[plugin_loader]") {
  // dlerror() quotes the name of the symbol that is missing, bytes the library chose.  Here the
  // unresolved fixture's symbol name is patched to hold 0xff 0xfe, ESC [ and a UTF-8 C1 control:
  // they went into the log, PluginLoadError::reason and `kiln plugins` unescaped.
  ScratchDir dir("raw_bytes");
  std::ifstream in(fs::path(KILN_FIXTURE_EXTRA_DIR) / "libkiln_fixture_unresolved.so", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string marker = "nobody", raw = "\xff\xfe\x1b[\xc2\x9b";
  REQUIRE(marker.size() == raw.size());
  std::size_t patched = 0;
  for (std::size_t at = bytes.find(marker); at != std::string::npos; at = bytes.find(marker, at + raw.size())) {
    bytes.replace(at, marker.size(), raw);
    ++patched;
  }
  REQUIRE(patched > 0);
  std::ofstream(dir.file("libkiln_fixture_rawbytes.so"), std::ios::binary) << bytes;
  kiln::Registry registry;
  kiln::PluginLoader loader;
  loader.load_dirs({dir.str()}, registry);
  REQUIRE(loader.errors().size() == 1);
  const std::string why = loader.errors().front().reason;
  INFO(why);
  CHECK(contains(why, "cannot load: "));
  CHECK(contains(why, "undefined symbol: _Z36kiln_fixture_function_\\xff\\xfe\\x1b[\\xc2\\x9b_definesv"));
  for (unsigned char c : why) CHECK((c >= 0x20 && c < 0x7f));
}
