// The shared work queue of `kiln tune --devices`: one task per (plan problem, device
// fingerprint), handed to whichever worker of that fingerprint is free.  Devices with the same
// fingerprint share their entries in the database, so each problem is tuned once per
// fingerprint; a host with two GPU models tunes each model's share.  Problems differ in cost by
// 1000x, so tasks are taken one at a time rather than split up front.
//
//   kiln::TuneQueue q;                         // a task gets 2 attempts
//   q.add(0, "NVIDIA H200|sm_90|132sm");
//   if (auto id = q.take("NVIDIA H200|sm_90|132sm")) {
//     bool worker_died = false;                // a worker tunes task *id here
//     if (!worker_died) q.finish(*id);
//     else if (!q.retry(*id)) q.fail(*id);     // put it back once, then give up
//   }
#pragma once
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class TuneQueue {
 public:
  enum class State { pending, running, finished, failed };
  struct Task {
    std::size_t item = 0;       // index into the plan's problems
    std::string fingerprint;    // the devices that may run it
    int attempts = 0;           // times it was handed out
    State state = State::pending;
  };

  explicit TuneQueue(int max_attempts = 2) : max_attempts_(max_attempts < 1 ? 1 : max_attempts) {}

  // Adds a pending task; returns its id.
  std::size_t add(std::size_t item, std::string fingerprint);
  // The oldest pending task for `fingerprint`, now running; nullopt when there is none.
  std::optional<std::size_t> take(const std::string& fingerprint);
  // The running task was finished (tuned, or failed on its own merits: no candidate passed...).
  void finish(std::size_t id);
  // The worker running it was lost (died, or its device became unusable).  The task is pending
  // again at the back of the queue while it has attempts left (returns true), else failed.
  bool retry(std::size_t id);
  // Marks a pending or running task failed (e.g. no worker is left for its fingerprint).
  void fail(std::size_t id);

  const Task& task(std::size_t id) const { return tasks_.at(id); }
  std::size_t size() const { return tasks_.size(); }
  std::size_t pending(const std::string& fingerprint) const;
  std::size_t running(const std::string& fingerprint) const;
  std::size_t count(State state) const;
  int max_attempts() const { return max_attempts_; }

 private:
  std::size_t count_for(const std::string& fingerprint, State state) const;
  int max_attempts_;
  std::vector<Task> tasks_;
  std::deque<std::size_t> order_;  // pending ids, oldest first
};

}  // namespace kiln
