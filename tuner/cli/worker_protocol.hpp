// The messages between `kiln tune --devices` and its worker processes, over two pipes.  The
// worker reads the parent's messages on fd 3 and writes its own on fd 4 (its stderr and stdout go
// to a third pipe that the parent relays, prefixed with the device).
//
//   parent -> worker   tune <plan index>        tune this problem on your device
//                      (end of file)            no more work: exit 0
//   worker -> parent   ready <fingerprint>      runtime open, waiting for work
//                      progress <index> <done> <planned> <note>
//                      result <index> <status> <detail> <report text> <report JSON>
//                         status: tuned, failed, interrupted, or device_lost (the worker then
//                         exits: its CUDA context is unusable; the parent starts a fresh one)
//
// A message is a header line "<kind> <field count> <length>..." followed by the fields' bytes,
// so fields may hold any text (a multi-line report).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

inline constexpr int kWorkerInFd = 3;
inline constexpr int kWorkerOutFd = 4;

struct WorkerMessage {
  std::string kind;
  std::vector<std::string> fields;
  const std::string& field(std::size_t i) const;  // "" when absent
};

std::string encode_message(const WorkerMessage& m);
// Writes all of it (retrying short writes and EINTR); false when the reader is gone.
bool write_message(int fd, const WorkerMessage& m);

// Reassembles messages from bytes as they arrive (the parent reads without blocking).
class MessageReader {
 public:
  void feed(const char* data, std::size_t n) { buffer_.append(data, n); }
  // The next complete message; throws std::runtime_error on a malformed header.
  std::optional<WorkerMessage> next();

 private:
  std::string buffer_;
};

// Blocks until a whole message arrived on `fd`; nullopt at end of file.
std::optional<WorkerMessage> read_message(int fd, MessageReader& reader);

}  // namespace kiln::cli
