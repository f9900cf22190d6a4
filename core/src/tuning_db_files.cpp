// Tuning database files in a directory other users may reach: see tuning_db_files.hpp and the
// threat model in docs/architecture.md.
#include "tuning_db_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <system_error>
#include <thread>

#include "kiln/errors.hpp"

namespace kiln::detail {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

[[noreturn]] void fail(const std::string& what, const std::string& reason) {
  // Paths (named by the user, or found in a directory) reach a terminal: no control character.
  throw TuningDbError(control_escaped("tuning database '" + what + "': " + reason));
}

std::string parent_of(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

bool trusted_owner(uid_t uid) { return uid == ::geteuid() || uid == 0; }

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

void write_all(int fd, const std::string& text, const std::string& what, const std::string& file) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(what, "cannot write '" + file + "': " + errno_text(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

std::string random_suffix() {
  std::random_device rd;
  const std::uint64_t r = (std::uint64_t(rd()) << 32) ^ rd() ^
                          std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(r));
  return buf;
}

bool pid_running(long pid) {
  if (pid <= 0 || pid > 0x7fffffffL) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The pid in "<base>.tmp.<pid>" or "<base>.tmp.<pid>.<anything>"; -1 when the name is not ours.
long temp_file_pid(const std::string& name, const std::string& base) {
  const std::string prefix = base + ".tmp.";
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  std::size_t i = prefix.size();
  long pid = 0;
  std::size_t digits = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 10) {
    pid = pid * 10 + (name[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0 || (i < name.size() && name[i] != '.')) return -1;
  return pid;
}

}  // namespace

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// Seconds since the epoch (and the fraction as nanoseconds) of an ISO 8601 time; false when the
// text is not one.
bool parse_tuned_at(const std::string& t, long long& seconds, long long& nanos) {
  auto digits = [&](std::size_t at, std::size_t n, int& out) {
    if (at + n > t.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      out = out * 10 + (t[i] - '0');
    }
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!digits(0, 4, y) || t.size() < 19 || t[4] != '-' || !digits(5, 2, mo) || t[7] != '-' || !digits(8, 2, d) ||
      (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !digits(11, 2, h) || t[13] != ':' || !digits(14, 2, mi) ||
      t[16] != ':' || !digits(17, 2, se))
    return false;
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || h > 23 || mi > 59 || se > 60) return false;
  std::size_t at = 19;
  nanos = 0;
  if (at < t.size() && (t[at] == '.' || t[at] == ',')) {
    std::size_t n = 0;
    for (++at; at < t.size() && t[at] >= '0' && t[at] <= '9'; ++at, ++n)
      if (n < 9) nanos = nanos * 10 + (t[at] - '0');
    if (n == 0) return false;
    for (; n < 9; ++n) nanos *= 10;
  }
  long long offset = 0;
  if (at < t.size()) {
    if ((t[at] == 'Z' || t[at] == 'z') && at + 1 == t.size()) {
      ++at;
    } else if (t[at] == '+' || t[at] == '-') {
      int oh = 0, om = 0;
      const std::size_t colon = at + 3 < t.size() && t[at + 3] == ':' ? 1 : 0;
      if (!digits(at + 1, 2, oh) || !digits(at + 3 + colon, 2, om) || at + 5 + colon != t.size() || oh > 23 || om > 59)
        return false;
      offset = (t[at] == '+' ? 1 : -1) * (oh * 3600LL + om * 60LL);
      at = t.size();
    } else {
      return false;
    }
  }
  seconds = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600LL + mi * 60LL +
            se - offset;
  return true;
}

}  // namespace

bool tuned_later(const std::string& a, const std::string& b) {
  long long as = 0, an = 0, bs = 0, bn = 0;
  const bool a_ok = parse_tuned_at(a, as, an), b_ok = parse_tuned_at(b, bs, bn);
  if (!a_ok) return false;  // unreadable: never later than anything
  if (!b_ok) return true;
  return as != bs ? as > bs : an > bn;
}

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string control_escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xc2 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80;
    if (c >= 0x20 && c != 0x7f && !c1) {
      out += static_cast<char>(c);
      continue;
    }
    for (std::size_t k = 0; k < (c1 ? 2u : 1u); ++k) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i + k]));
      out += buf;
    }
    i += c1 ? 1 : 0;
  }
  return out;
}

void check_dir_not_shared(const std::string& dir, const std::string& db_path) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return;  // created later, by us
  if (!S_ISDIR(st.st_mode)) fail(db_path, "'" + dir + "' is not a directory");
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    fail(db_path, "directory '" + dir +
                      "' is writable by every user and has no sticky bit: another user could replace the "
                      "database or plant links in it, so kiln neither reads nor writes it there (chmod o-w or +t "
                      "it, or set KILN_CACHE_DIR to a directory of your own)");
}

namespace {

// A database path must end in a file name: "" or "dir/" made the lock code create the directory
// and a stray "dir/.lock" before the write failed naming a temp file the caller never gave.
void check_file_name(const std::string& path) {
  if (path.empty()) fail(path, "the path is empty; expected a database file such as tuning.yaml");
  const std::string name = fs::path(path).filename().string();
  if (name.empty() || name == "." || name == "..")
    fail(path, "ends in a directory ('/', '.' or '..'), expected a database file name such as tuning.yaml");
}

}  // namespace

DbTarget resolve_db_path(const std::string& path) {
  check_file_name(path);
  std::string current = path;
  for (int hop = 0; hop <= 8; ++hop) {
    check_dir_not_shared(parent_of(current), path);
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      if (errno == ENOENT) return {current, false};
      fail(path, "cannot inspect '" + current + "': " + errno_text(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      if (!trusted_owner(st.st_uid))
        fail(path, "'" + current + "' is a symbolic link owned by another user (uid " + std::to_string(st.st_uid) +
                       "); kiln does not follow it (remove it)");
      std::string target(4096, '\0');
      ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
      if (n < 0 || static_cast<std::size_t>(n) >= target.size())
        fail(path, "cannot read the symbolic link '" + current + "'");
      target.resize(static_cast<std::size_t>(n));
      current = fs::path(target).is_absolute() ? target : (fs::path(parent_of(current)) / target).string();
      continue;
    }
    if (S_ISDIR(st.st_mode)) fail(path, "'" + current + "' is a directory, not a database file");
    if (!S_ISREG(st.st_mode)) fail(path, "'" + current + "' is not a regular file");
    return {current, true};
  }
  fail(path, "too many symbolic links");
}

std::string read_db_text(const std::string& path, std::size_t cap, bool own_file) {
  // O_NONBLOCK: opening a FIFO must not hang; it is cleared again for an explicit pipe.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (own_file ? O_NOFOLLOW : 0);
  Fd fd(::open(path.c_str(), flags));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ELOOP && own_file) fail(path, "is a symbolic link; kiln does not follow it here");
    // A link to nothing: open() says only "No such file", of a file that `ls` shows.
    std::error_code ec;
    if ((err == ENOENT || err == ELOOP) && fs::is_symlink(fs::symlink_status(path, ec))) {
      const fs::path target = fs::read_symlink(path, ec);
      fail(path, std::string(err == ELOOP ? "is a symbolic link in a loop of links" : "is a symbolic link to a file that does not exist") +
                     (ec ? std::string() : " ('" + printable(target.string()) + "')"));
    }
    fail(path, "cannot open: " + errno_text(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(path, "cannot inspect: " + errno_text(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory, not a database file");
  if (!S_ISREG(st.st_mode)) {
    if (own_file) fail(path, "is not a regular file");
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > cap)
    fail(path, "is " + std::to_string(st.st_size) + " bytes, more than the limit of " + std::to_string(cap) +
                   " bytes for a tuning database");
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "cannot read: " + errno_text(errno));
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > cap)
      fail(path, "holds more than the limit of " + std::to_string(cap) + " bytes for a tuning database");
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

void check_not_read_only(const DbTarget& target, const std::string& what) {
  if (!target.exists) return;
  struct stat st {};
  if (::stat(target.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;  // resolve_db_path reports those
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  const std::string where = target.path == what ? "" : " ('" + target.path + "')";
  if ((st.st_mode & 0222) == 0 || (::access(target.path.c_str(), W_OK) != 0 && errno == EACCES))
    fail(what, "is read-only" + where + " (mode " + mode +
                   "): kiln does not replace a file its owner made read-only (make it writable, e.g. chmod u+w, to store in it)");
}

void write_db_text(const DbTarget& target, const std::string& text) {
  check_not_read_only(target, target.path);
  const std::string& path = target.path;
  const std::string dir = parent_of(path);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(path, "cannot create directory '" + dir + "': " + ec.message());
  check_dir_not_shared(dir, path);

  // The old file's mode and owner, kept across the rewrite.
  struct stat old {};
  bool have_old = false;
  if (target.exists && ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) have_old = true;

  const std::string base = fs::path(path).filename().string();
  std::string tmp;
  int raw = -1;
  for (int attempt = 0; attempt < 16 && raw < 0; ++attempt) {
    tmp = (fs::path(dir) / (base + ".tmp." + std::to_string(::getpid()) + "." + random_suffix())).string();
    raw = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, have_old ? 0600 : 0644);
    if (raw < 0 && errno != EEXIST) fail(path, "cannot create '" + tmp + "': " + errno_text(errno));
  }
  if (raw < 0) fail(path, "cannot create a temp file next to it: every name tried exists");
  Fd fd(raw);
  auto give_up = [&](const std::string& why) {
    ::unlink(tmp.c_str());
    fail(path, why);
  };
  try {
    if (have_old) {
      // Best effort (root keeping a user's file theirs); `if` rather than a (void) cast, which
      // glibc's warn_unused_result still warns about.
      if (::geteuid() == 0 && (old.st_uid != 0 || old.st_gid != 0) && ::fchown(fd.get(), old.st_uid, old.st_gid) != 0) {
      }
      if (::fchmod(fd.get(), old.st_mode & 0777) != 0) give_up("cannot set the mode of '" + tmp + "': " + errno_text(errno));
    }
    write_all(fd.get(), text, path, tmp);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // fsync before rename: after a crash the file is either the old one or the complete new one.
  if (::fsync(fd.get()) != 0) give_up("cannot sync '" + tmp + "': " + errno_text(errno));
  if (::close(fd.release()) != 0) give_up("cannot close '" + tmp + "': " + errno_text(errno));
  // rename() replaces whatever the name points at now, a symlink included, never its target.
  if (::rename(tmp.c_str(), path.c_str()) != 0) give_up("cannot rename '" + tmp + "' over it: " + errno_text(errno));
  // Make the rename itself durable; failure here loses nothing already visible, so it is ignored.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::size_t remove_stale_temp_files(const std::string& target) {
  const std::string dir = parent_of(target);
  const std::string base = fs::path(target).filename().string();
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  const std::time_t now = std::time(nullptr);
  constexpr std::time_t kRecycledPidAge = 3600;
  std::size_t removed = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const long pid = temp_file_pid(name, base);
    if (pid < 0) continue;
    const std::string file = (fs::path(dir) / name).string();
    struct stat st {};
    if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    const bool old = now - st.st_mtime > kRecycledPidAge;
    const bool ours = pid == ::getpid();  // another thread of this process may be writing it
    if (old || (!ours && !pid_running(pid))) {
      if (::unlink(file.c_str()) == 0) ++removed;
    }
  }
  ::closedir(d);
  return removed;
}

DbLock::DbLock(const std::string& db_path, double timeout_seconds) {
  check_file_name(db_path);  // before anything is created for it
  const std::string lock_path = db_path + ".lock";
  const std::string dir = parent_of(db_path);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(db_path, "cannot create directory '" + dir + "': " + ec.message());
  check_dir_not_shared(dir, db_path);
  Fd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644));
  if (fd.get() < 0) {
    if (errno == ELOOP) fail(db_path, "lock file '" + lock_path + "' is a symbolic link; kiln does not follow it (remove it)");
    fail(db_path, "cannot open lock file '" + lock_path + "': " + errno_text(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    fail(db_path, "lock file '" + lock_path + "' is not a regular file (remove it)");
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::milliseconds(1);
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) fail(db_path, "cannot lock '" + lock_path + "': " + errno_text(errno));
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= timeout_seconds) {
      char buf[64] = {};
      ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
      long holder = n > 0 ? std::strtol(buf, nullptr, 10) : 0;
      std::string who = holder > 0 ? "process " + std::to_string(holder) : "another process";
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.3g", timeout_seconds);
      fail(db_path, "locked by " + who + " (lock file '" + lock_path + "'); gave up after " + secs +
                        " s (KILN_DB_LOCK_TIMEOUT sets how long to wait)");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  // Name the holder for whoever waits next.  Failing to is harmless: the lock is what counts.
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) == 0 && ::pwrite(fd.get(), me.data(), me.size(), 0) < 0) {
  }
  fd_ = fd.release();
}

DbLock::~DbLock() {
  if (::ftruncate(fd_, 0) != 0) {
  }  // best effort: the unlock below is what counts
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace kiln::detail
