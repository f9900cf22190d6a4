#include "kiln/tuner/tune_queue.hpp"

#include <algorithm>

#include "kiln/errors.hpp"

namespace kiln {

std::size_t TuneQueue::add(std::size_t item, std::string fingerprint) {
  Task t;
  t.item = item;
  t.fingerprint = std::move(fingerprint);
  tasks_.push_back(std::move(t));
  order_.push_back(tasks_.size() - 1);
  return tasks_.size() - 1;
}

std::optional<std::size_t> TuneQueue::take(const std::string& fingerprint) {
  for (auto it = order_.begin(); it != order_.end(); ++it) {
    Task& t = tasks_[*it];
    if (t.fingerprint != fingerprint) continue;
    const std::size_t id = *it;
    order_.erase(it);
    t.state = State::running;
    ++t.attempts;
    return id;
  }
  return std::nullopt;
}

void TuneQueue::finish(std::size_t id) {
  Task& t = tasks_.at(id);
  if (t.state != State::running) throw Error("TuneQueue::finish: task " + std::to_string(id) + " is not running");
  t.state = State::finished;
}

bool TuneQueue::retry(std::size_t id) {
  Task& t = tasks_.at(id);
  if (t.state != State::running) throw Error("TuneQueue::retry: task " + std::to_string(id) + " is not running");
  if (t.attempts >= max_attempts_) {
    t.state = State::failed;
    return false;
  }
  t.state = State::pending;
  order_.push_back(id);
  return true;
}

void TuneQueue::fail(std::size_t id) {
  Task& t = tasks_.at(id);
  if (t.state == State::pending) order_.erase(std::find(order_.begin(), order_.end(), id));
  t.state = State::failed;
}

std::size_t TuneQueue::count_for(const std::string& fingerprint, State state) const {
  return static_cast<std::size_t>(std::count_if(tasks_.begin(), tasks_.end(), [&](const Task& t) {
    return t.state == state && t.fingerprint == fingerprint;
  }));
}

std::size_t TuneQueue::pending(const std::string& fingerprint) const { return count_for(fingerprint, State::pending); }
std::size_t TuneQueue::running(const std::string& fingerprint) const { return count_for(fingerprint, State::running); }

std::size_t TuneQueue::count(State state) const {
  return static_cast<std::size_t>(
      std::count_if(tasks_.begin(), tasks_.end(), [&](const Task& t) { return t.state == state; }));
}

}  // namespace kiln
