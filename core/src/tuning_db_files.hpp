// The tuning database's file handling, where a shared or hostile cache directory is expected:
// capped reads, the symlink and directory rules, atomic writes through an unpredictable temp
// file, the lock file that names its holder, and the clean-up of temp files a killed writer left.
// Every function throws TuningDbError naming the database file and the reason.
#pragma once
#include <cstddef>
#include <string>

namespace kiln::detail {

// Where a database path really leads.  A symlink is followed only when the current user (or root)
// owns it, at most 8 deep; a directory writable by others without the sticky bit is refused; a
// directory or a non-regular file at the end is refused.  `exists` is false for a file not yet
// created (its directory may not exist either).
struct DbTarget {
  std::string path;
  bool exists = false;
};
DbTarget resolve_db_path(const std::string& path);

// The whole file, at most `cap` bytes (TuningDbError beyond).  `own_file`: the user file, read
// through resolve_db_path's rules (no symlink at the last step, regular files only); otherwise an
// explicit path (a merge input, a shipped file) that may be a symlink or a pipe, but not a directory.
std::string read_db_text(const std::string& path, std::size_t cap, bool own_file);

// Replaces `target` (resolved by resolve_db_path) with `text`: a temp file in its directory named
// "<name>.tmp.<pid>.<random>", created with O_EXCL|O_NOFOLLOW, given the old file's mode (and owner,
// when root rewrites another user's file), synced, renamed over.
void write_db_text(const DbTarget& target, const std::string& text);

// TuningDbError (naming `what`) when `target` exists and is read-only: no write permission bit at
// all (root included), or none for this user.  A rename would replace it regardless of its mode,
// so the owner's "do not change this file" would be overridden without a word.
void check_not_read_only(const DbTarget& target, const std::string& what);

// Removes "<name>.tmp.<pid>[.<random>]" files next to `target` that a writer killed mid-write
// left: regular files owned by this user whose pid is not running on this host, or older than an
// hour (a recycled pid).  Call it holding the lock: a writer that holds it is never among them.
// Returns how many it removed.
std::size_t remove_stale_temp_files(const std::string& target);

// flock on "<db path>.lock" for the object's lifetime.  The lock file is never a symlink and
// holds the pid of its holder, which a process that times out names in its error.
class DbLock {
 public:
  DbLock(const std::string& db_path, double timeout_seconds);
  ~DbLock();
  DbLock(const DbLock&) = delete;
  DbLock& operator=(const DbLock&) = delete;

 private:
  int fd_ = -1;
};

// Throws TuningDbError when `dir` is writable by other users and has no sticky bit: anyone could
// swap the database for their own or plant links in it.  A missing directory passes.
void check_dir_not_shared(const std::string& dir, const std::string& db_path);

// Text from a file (or an environment variable) made safe for a terminal: control characters, DEL and bytes outside printable
// ASCII become \xNN.
std::string printable(const std::string& text);
// Number text as a person writes it: digits, a sign, a point, an exponent.  strtod and stod also
// take " 5" and hex ("0x10" is 16), which a user meaning something else would never hear about;
// the CLI's numeric flags and the number variables check this first.
inline bool decimal_text(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
}
// Lighter, for paths and messages that quote them: only C0 controls, DEL and UTF-8 C1 controls
// (U+0080..U+009F, which some terminals honour) become \xNN; other UTF-8 ("café") and
// backslashes are kept, so text that went through printable() passes unchanged.
std::string control_escaped(const std::string& text);

// Whether `s` is a name the database stores and reads back as it is: letters, digits and '_'
// (op, dim and config parameter names), with allow_dots also '.' and '-' (variant and field names).
bool is_db_name(const std::string& s, bool allow_dots);

// Whether tuned_at `a` is strictly later than `b` (merge --prefer-newer).  Both are read as ISO
// 8601 times, YYYY-MM-DDTHH:MM:SS[.frac] with Z, +HH:MM, -HH:MM (or none: UTC); as strings,
// "2026-11-21T11:00:00+05:00" (06:00 UTC) beat "2026-11-21T10:00:00Z" and any text ("zzz",
// "9999") beat every real time.  A time that cannot be read is older than any that can.
bool tuned_later(const std::string& a, const std::string& b);

}  // namespace kiln::detail
