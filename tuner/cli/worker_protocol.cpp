#include "worker_protocol.hpp"

#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <stdexcept>

namespace kiln::cli {

const std::string& WorkerMessage::field(std::size_t i) const {
  static const std::string empty;
  return i < fields.size() ? fields[i] : empty;
}

std::string encode_message(const WorkerMessage& m) {
  std::string out = m.kind + " " + std::to_string(m.fields.size());
  for (const std::string& f : m.fields) out += " " + std::to_string(f.size());
  out += "\n";
  for (const std::string& f : m.fields) out += f;
  return out;
}

bool write_message(int fd, const WorkerMessage& m) {
  const std::string bytes = encode_message(m);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<WorkerMessage> MessageReader::next() {
  const auto eol = buffer_.find('\n');
  if (eol == std::string::npos) {
    if (buffer_.size() > 4096) throw std::runtime_error("worker message: header line too long");
    return std::nullopt;
  }
  std::istringstream header(buffer_.substr(0, eol));
  WorkerMessage m;
  std::size_t count = 0;
  if (!(header >> m.kind >> count) || count > 64) throw std::runtime_error("worker message: bad header");
  std::vector<std::size_t> lengths(count);
  std::size_t total = 0;
  for (std::size_t& len : lengths) {
    if (!(header >> len)) throw std::runtime_error("worker message: bad field length");
    total += len;
  }
  if (buffer_.size() < eol + 1 + total) return std::nullopt;
  std::size_t at = eol + 1;
  for (std::size_t len : lengths) {
    m.fields.push_back(buffer_.substr(at, len));
    at += len;
  }
  buffer_.erase(0, at);
  return m;
}

std::optional<WorkerMessage> read_message(int fd, MessageReader& reader) {
  for (;;) {
    if (auto m = reader.next()) return m;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    reader.feed(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace kiln::cli
