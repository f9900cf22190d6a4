#include "worker_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <kiln/errors.hpp>

#include "common.hpp"
#include "pool_progress.hpp"
#include "worker_protocol.hpp"

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kGiveUpAfterDeaths = 3;  // in a row, without finishing a task

enum class WorkerState { none, starting, idle, busy, quitting };

struct Slot {
  PoolDevice device;
  PoolWorkerStats stats;
  WorkerState state = WorkerState::none;
  pid_t pid = -1;
  int to_fd = -1, from_fd = -1, err_fd = -1;
  MessageReader reader;
  std::string err_partial;             // a stderr line not finished yet
  std::optional<std::size_t> task;     // what it is tuning
  Clock::time_point task_start;
  int deaths_in_a_row = 0;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return signal_text(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

extern "C" void forward_sigterm(int) { std::raise(SIGINT); }  // SIGTERM stops the run like Ctrl-C

class Pool {
 public:
  Pool(const std::vector<PoolDevice>& devices, TuneQueue& queue, const PoolOptions& options)
      : queue_(queue), options_(options), progress_(names(devices), queue.size()) {
    for (const PoolDevice& d : devices) {
      Slot s;
      s.device = d;
      s.stats.device = d.name;
      slots_.push_back(std::move(s));
    }
  }

  PoolRun run() {
    const auto start = Clock::now();
    std::signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe must not end the parent
    std::signal(SIGTERM, forward_sigterm);
    for (;;) {
      if (interrupted() && !stopping_) stop_all();
      schedule();
      std::vector<pollfd> fds;
      std::vector<std::pair<std::size_t, bool>> owner;  // slot, is stderr
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].from_fd >= 0) {
          fds.push_back({slots_[i].from_fd, POLLIN, 0});
          owner.emplace_back(i, false);
        }
        if (slots_[i].err_fd >= 0) {
          fds.push_back({slots_[i].err_fd, POLLIN, 0});
          owner.emplace_back(i, true);
        }
      }
      if (fds.empty()) break;  // no worker alive and none to start
      const int n = ::poll(fds.data(), fds.size(), 250);
      if (n < 0 && errno != EINTR) throw Error(std::string("kiln tune: poll: ") + std::strerror(errno));
      for (std::size_t k = 0; n > 0 && k < fds.size(); ++k) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Slot& s = slots_[owner[k].first];
        if (owner[k].second)
          drain_stderr(s);
        else
          read_messages(s);
      }
      for (Slot& s : slots_)
        if (s.pid > 0 && s.from_fd < 0) reap(s);
      progress_.set_done(queue_.count(TuneQueue::State::finished) + queue_.count(TuneQueue::State::failed));
    }
    progress_.finish();
    std::signal(SIGTERM, SIG_DFL);
    PoolRun r;
    r.results = std::move(results_);
    for (const Slot& s : slots_) r.workers.push_back(s.stats);
    r.interrupted = stopping_;
    r.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }

 private:
  static std::vector<std::string> names(const std::vector<PoolDevice>& devices) {
    std::vector<std::string> out;
    for (const PoolDevice& d : devices) out.push_back(d.name);
    return out;
  }

  const std::string& label(std::size_t task) const {
    static const std::string none = "?";
    return task < options_.task_labels.size() ? options_.task_labels[task] : none;
  }

  // Hands out work and starts or stops workers; called after every event.
  void schedule() {
    if (stopping_) return;
    for (Slot& s : slots_) {
      if (s.state != WorkerState::idle) continue;
      const std::string& fp = s.device.fingerprint;
      if (auto id = queue_.take(fp)) {
        s.task = *id;
        s.task_start = Clock::now();
        s.state = WorkerState::busy;
        progress_.set_activity(index_of(s), label(*id));
        // A write to a worker that just died fails; its end of file then reports the task.
        write_message(s.to_fd, {"tune", {std::to_string(queue_.task(*id).item)}});
      } else if (queue_.running(fp) == 0) {
        close_fd(s.to_fd);  // no more work for it: end of file tells it to exit
        s.state = WorkerState::quitting;
        progress_.set_activity(index_of(s), "done");
      }  // else it waits: a task of its fingerprint may come back for another attempt
    }
    for (Slot& s : slots_) {
      const std::string& fp = s.device.fingerprint;
      if (s.state != WorkerState::none || s.stats.given_up || queue_.pending(fp) == 0) continue;
      spawn(s);
    }
    // Tasks no worker can run any more.
    for (std::size_t id = 0; id < queue_.size(); ++id) {
      const TuneQueue::Task& t = queue_.task(id);
      if (t.state != TuneQueue::State::pending) continue;
      bool served = false;
      for (const Slot& s : slots_)
        if (s.device.fingerprint == t.fingerprint && !s.stats.given_up) served = true;
      if (served) continue;
      queue_.fail(id);
      add_result(id, "", "failed", "no worker left for " + t.fingerprint + " (its workers kept dying)");
    }
  }

  std::size_t index_of(const Slot& s) const { return static_cast<std::size_t>(&s - slots_.data()); }

  void spawn(Slot& s) {
    int to[2], from[2], err[2];
    if (::pipe2(to, O_CLOEXEC) || ::pipe2(from, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC))
      throw Error(std::string("kiln tune: pipe: ") + std::strerror(errno));
    std::vector<std::string> args = options_.worker_args;
    args.push_back("--worker");
    args.push_back(s.device.device.to_string());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(std::string("kiln tune: fork: ") + std::strerror(errno));
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec.
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      ::signal(SIGPIPE, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      const int in = ::fcntl(to[0], F_DUPFD_CLOEXEC, 10);
      const int out = ::fcntl(from[1], F_DUPFD_CLOEXEC, 10);
      const int log = ::fcntl(err[1], F_DUPFD_CLOEXEC, 10);
      if (in < 0 || out < 0 || log < 0 || ::dup2(in, kWorkerInFd) < 0 || ::dup2(out, kWorkerOutFd) < 0 ||
          ::dup2(log, STDOUT_FILENO) < 0 || ::dup2(log, STDERR_FILENO) < 0)
        ::_exit(127);
      ::execv("/proc/self/exe", argv.data());
      ::_exit(127);
    }
    ::close(to[0]);
    ::close(from[1]);
    ::close(err[1]);
    s.to_fd = to[1];
    s.from_fd = from[0];
    s.err_fd = err[0];
    ::fcntl(s.from_fd, F_SETFL, O_NONBLOCK);
    ::fcntl(s.err_fd, F_SETFL, O_NONBLOCK);
    s.pid = pid;
    s.state = WorkerState::starting;
    s.reader = MessageReader();
    s.err_partial.clear();
    ++s.stats.started;
    progress_.set_activity(index_of(s), "starting");
    if (options_.verbose) progress_.message("kiln tune: worker on " + s.device.name + ": pid " + std::to_string(pid));
  }

  void read_messages(Slot& s) {
    char buf[8192];
    for (;;) {
      const ssize_t n = ::read(s.from_fd, buf, sizeof buf);
      if (n > 0) {
        s.reader.feed(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) break;
      close_fd(s.from_fd);  // end of file: the worker is exiting or died
      break;
    }
    try {
      while (auto m = s.reader.next()) handle(s, *m);
    } catch (const std::runtime_error& e) {
      progress_.message("kiln tune: worker on " + s.device.name + " sent a bad message (" + e.what() + "); stopping it");
      ::kill(s.pid, SIGKILL);
      close_fd(s.from_fd);
    }
  }

  void handle(Slot& s, const WorkerMessage& m) {
    if (m.kind == "ready") {
      if (m.field(0) != s.device.fingerprint)
        progress_.message("kiln tune: warning: worker on " + s.device.name + " reports fingerprint '" + m.field(0) +
                          "', expected '" + s.device.fingerprint + "'");
      if (s.state == WorkerState::starting) s.state = WorkerState::idle;
      progress_.set_activity(index_of(s), "idle");
    } else if (m.kind == "progress" && s.task) {
      progress_.set_activity(index_of(s), label(*s.task) + "  " + m.field(1) + "/" + m.field(2) + "  " + m.field(3));
    } else if (m.kind == "result" && s.task) {
      const std::size_t id = *s.task;
      s.task.reset();
      s.stats.busy_seconds += std::chrono::duration<double>(Clock::now() - s.task_start).count();
      const std::string status = m.field(1);
      if (status == "device_lost") {
        // The worker exits by itself: its CUDA context is unusable.
        s.state = WorkerState::quitting;
        close_fd(s.to_fd);
        lost(s, id, "its device became unusable (" + m.field(2) + ")", m);
        return;
      }
      queue_.finish(id);
      s.deaths_in_a_row = 0;
      if (status == "tuned") ++s.stats.tuned;
      if (status == "failed") ++s.stats.failed;
      add_result(id, s.device.name, status, m.field(2), m.field(3), m.field(4));
      if (options_.print_reports && !m.field(3).empty()) progress_.print_out(m.field(3));
      s.state = stopping_ ? WorkerState::quitting : WorkerState::idle;
      progress_.set_activity(index_of(s), "idle");
    }
  }

  // The worker of `s` cannot finish task `id`: put it back for one more try, or fail it.
  void lost(Slot& s, std::size_t id, const std::string& why, const WorkerMessage& last_report) {
    ++s.stats.deaths;
    ++s.deaths_in_a_row;
    const int attempt = queue_.task(id).attempts;
    if (queue_.retry(id)) {
      progress_.message("kiln tune: " + s.device.name + ": " + label(id) + ": the worker " + why +
                        "; trying it again on a fresh worker (attempt " + std::to_string(attempt + 1) + " of " +
                        std::to_string(queue_.max_attempts()) + ")");
    } else {
      ++s.stats.failed;
      progress_.message("kiln tune: " + s.device.name + ": " + label(id) + ": the worker " + why + " on attempt " +
                        std::to_string(attempt) + " of " + std::to_string(queue_.max_attempts()) + "; marked failed");
      add_result(id, s.device.name, "failed", "worker " + why + " (" + std::to_string(attempt) + " attempts)",
                 last_report.field(3), last_report.field(4));
    }
  }

  void drain_stderr(Slot& s) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(s.err_fd, buf, sizeof buf);
      if (n > 0) {
        s.err_partial.append(buf, static_cast<std::size_t>(n));
        std::size_t eol;
        while ((eol = s.err_partial.find('\n')) != std::string::npos) {
          progress_.message("[" + s.device.name + "] " + s.err_partial.substr(0, eol));
          s.err_partial.erase(0, eol + 1);
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (!s.err_partial.empty()) progress_.message("[" + s.device.name + "] " + s.err_partial);
      s.err_partial.clear();
      close_fd(s.err_fd);
      return;
    }
  }

  // The worker closed its message pipe: wait for it and account for what it was doing.
  void reap(Slot& s) {
    int status = 0;
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (s.err_fd >= 0) drain_stderr(s);  // its last words (an abort message)
    close_fd(s.err_fd);
    close_fd(s.to_fd);
    const std::string how = exit_text(status);
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (s.task) {
      const std::size_t id = *s.task;
      s.task.reset();
      s.stats.busy_seconds += std::chrono::duration<double>(Clock::now() - s.task_start).count();
      if (stopping_) {
        queue_.fail(id);
        add_result(id, s.device.name, "interrupted", "the worker stopped (" + how + ")");
      } else {
        lost(s, id, "died (" + how + ", pid " + std::to_string(s.pid) + ")", WorkerMessage{});
      }
    } else if (s.state == WorkerState::starting && !stopping_) {
      ++s.stats.deaths;
      ++s.deaths_in_a_row;
      progress_.message("kiln tune: the worker on " + s.device.name + " " + how + " before it was ready");
    } else if (!clean && !stopping_ && s.state != WorkerState::quitting) {
      progress_.message("kiln tune: the worker on " + s.device.name + " " + how);
    }
    s.pid = -1;
    s.state = WorkerState::none;
    if (s.deaths_in_a_row >= kGiveUpAfterDeaths && !s.stats.given_up) {
      s.stats.given_up = true;
      progress_.message("kiln tune: giving up on " + s.device.name + ": its worker died " +
                        std::to_string(s.deaths_in_a_row) + " times in a row");
    }
    progress_.set_activity(index_of(s), s.stats.given_up ? "given up" : (clean ? "done" : "stopped"));
  }

  void stop_all() {
    stopping_ = true;
    progress_.message("kiln tune: stopping the workers (Ctrl-C again to kill them)");
    for (Slot& s : slots_) {
      if (s.pid > 0 && (s.state == WorkerState::busy || s.state == WorkerState::starting)) ::kill(s.pid, SIGINT);
      close_fd(s.to_fd);
      if (s.state == WorkerState::idle) s.state = WorkerState::quitting;
    }
  }

  void add_result(std::size_t id, const std::string& device, const std::string& status, const std::string& detail,
                  const std::string& text = "", const std::string& json = "") {
    PoolResult r;
    r.task = id;
    r.device = device;
    r.status = status;
    r.detail = detail;
    r.report_text = text;
    r.report_json = json;
    results_.push_back(std::move(r));
  }

  TuneQueue& queue_;
  const PoolOptions& options_;
  PoolProgress progress_;
  std::vector<Slot> slots_;
  std::vector<PoolResult> results_;
  bool stopping_ = false;
};

}  // namespace

PoolRun run_worker_pool(const std::vector<PoolDevice>& devices, TuneQueue& queue, const PoolOptions& options) {
  Pool pool(devices, queue, options);
  return pool.run();
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  if (!in) throw Error("kiln tune --devices: cannot read /proc/self/cmdline (worker processes need Linux's /proc)");
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  return args;
}

}  // namespace kiln::cli
