#include "evaluate/worker_protocol.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kernelsmith::detail {

std::string frame(const std::string& payload) {
  std::string out(8, '\0');
  const std::uint64_t size = payload.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xFF);
  return out + payload;
}

std::uint64_t frame_length(const std::string& header) {
  std::uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= std::uint64_t(static_cast<unsigned char>(header[static_cast<std::size_t>(i)])) << (8 * i);
  return size;
}

namespace {


bool read_exact_blocking(int fd, std::string& out, std::size_t size) {
  out.assign(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::recv(fd, out.data() + got, size - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && got == 0) return false;
    if (n <= 0) throw ChannelClosed("the connection closed in the middle of a message");
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

// Blocking I/O for the worker's side: it has nothing else to do while it waits.
void write_all_blocking(int fd, const std::string& data) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::send(fd, data.data() + written, data.size() - written, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ChannelClosed(fmt::format("send failed: {}", std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
}

std::optional<std::string> receive_blocking(int fd) {
  std::string header;
  if (!read_exact_blocking(fd, header, 8)) return std::nullopt;
  const std::uint64_t size = frame_length(header);
  if (size > kMaxMessageBytes) throw ChannelClosed(fmt::format("a message of {} bytes is too large", size));
  std::string payload;
  if (size > 0 && !read_exact_blocking(fd, payload, static_cast<std::size_t>(size))) {
    throw ChannelClosed("the connection closed in the middle of a message");
  }
  return payload;
}

void send_json(int fd, const Json& message) { write_all_blocking(fd, frame(message.dump())); }

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::microseconds(static_cast<std::int64_t>(std::max(seconds, 0.001) * 1e6));
}
}  // namespace kernelsmith::detail
