// A shared library named like a plugin that exports no kiln_plugin_entry.
extern "C" int kiln_fixture_not_a_plugin() { return 42; }
