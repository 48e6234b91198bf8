// The worker's message protocol: length-prefixed JSON documents over a socket (8-byte little-endian
// length, then the document; docs/evaluation.md lists the messages). The worker reads and writes
// blocking; the parent's Channel is non-blocking, every operation bounded by a deadline.
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <optional>
#include <string>

#include "detail/json_util.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

using Clock = std::chrono::steady_clock;

/// The largest message either side accepts.
constexpr std::uint64_t kMaxMessageBytes = std::uint64_t(2) << 30;

/// The other side closed the connection or the socket failed.
class ChannelClosed : public Error {
 public:
  using Error::Error;
};

/// A payload with its 8-byte length prefix.
std::string frame(const std::string& payload);
/// The payload length an 8-byte prefix states.
std::uint64_t frame_length(const std::string& header);

/// The worker's side: blocking, it has nothing else to do while it waits. Throws ChannelClosed.
void write_all_blocking(int fd, const std::string& data);
/// The next message, or nothing when the other side closed the connection between messages. Throws
/// ChannelClosed.
std::optional<std::string> receive_blocking(int fd);
/// Sends one JSON message, blocking. Throws ChannelClosed.
void send_json(int fd, const Json& message);

/// The parent's side: non-blocking, every operation bounded by a deadline.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) { fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK); }
  ~Channel() {
    if (fd_ >= 0) ::close(fd_);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// False when the deadline passed first. Throws ChannelClosed.
  bool send(const std::string& payload, Clock::time_point deadline) {
    const std::string data = frame(payload);
    std::size_t written = 0;
    while (written < data.size()) {
      if (!wait(POLLOUT, deadline)) return false;
      const ssize_t n = ::send(fd_, data.data() + written, data.size() - written, MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) throw ChannelClosed(fmt::format("send to the worker failed: {}", std::strerror(errno)));
      written += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// Nothing when the deadline passed first. Throws ChannelClosed.
  std::optional<std::string> receive(Clock::time_point deadline) {
    while (true) {
      if (buffer_.size() >= 8) {
        const std::uint64_t size = frame_length(buffer_);
        if (size > kMaxMessageBytes) throw ChannelClosed(fmt::format("a message of {} bytes is too large", size));
        if (buffer_.size() >= 8 + size) {
          std::string payload = buffer_.substr(8, static_cast<std::size_t>(size));
          buffer_.erase(0, 8 + static_cast<std::size_t>(size));
          return payload;
        }
      }
      if (!wait(POLLIN, deadline)) return std::nullopt;
      char chunk[65536];
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n == 0) throw ChannelClosed("the worker closed the connection");
      if (n < 0) throw ChannelClosed(fmt::format("receive from the worker failed: {}", std::strerror(errno)));
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  bool wait(short events, Clock::time_point deadline) {
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd entry{fd_, events, 0};
      const int ready = ::poll(&entry, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) throw ChannelClosed(fmt::format("poll failed: {}", std::strerror(errno)));
      if (ready > 0) return true;  // readable, writable, or closed (the next call says which)
    }
  }

  int fd_;
  std::string buffer_;
};

/// A deadline `seconds` from now (at least a millisecond).
Clock::time_point deadline_after(double seconds);

}  // namespace kernelsmith::detail
