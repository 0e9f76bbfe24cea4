#include "server/client_connection.h"

#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <string>

namespace cortiq::server {
namespace {

// The numeric host and port of a socket address, as httplib's get_ip_and_port writes them.
bool HostAndPort(const sockaddr_storage& address, socklen_t length, std::string* host,
                 int* port) {
  char name[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, name, sizeof(name),
                  nullptr, 0, NI_NUMERICHOST) != 0) {
    return false;
  }
  *host = name;
  if (address.ss_family == AF_INET) {
    *port = ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  } else if (address.ss_family == AF_INET6) {
    *port = ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  } else {
    return false;
  }
  return true;
}

bool Matches(int fd, const std::string& remote_addr, int remote_port,
             const std::string& local_addr, int local_port) {
  sockaddr_storage address;
  socklen_t length = sizeof(address);
  std::string host;
  int port = 0;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      !HostAndPort(address, length, &host, &port) || port != remote_port ||
      host != remote_addr) {
    return false;
  }
  length = sizeof(address);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
         HostAndPort(address, length, &host, &port) && port == local_port && host == local_addr;
}

// Calls `f(fd)` for each open socket of the process until it returns true; true if one did.
template <class F>
bool ForEachSocket(F f) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return false;
  bool stopped = false;
  const int listing = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long value = strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || value == listing) continue;
    const int fd = static_cast<int>(value);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (f(fd)) {
      stopped = true;
      break;
    }
  }
  closedir(dir);
  return stopped;
}

}  // namespace

int FindConnectionSocket(const std::string& remote_addr, int remote_port,
                         const std::string& local_addr, int local_port) {
  int found = -1;
  ForEachSocket([&](int fd) {
    if (!Matches(fd, remote_addr, remote_port, local_addr, local_port)) return false;
    found = fd;
    return true;
  });
  return found;
}

int ShutDownConnections(int local_port) {
  int count = 0;
  ForEachSocket([&](int fd) {
    sockaddr_storage address;
    socklen_t length = sizeof(address);
    // Connected (the listening socket has no peer) and on our port.
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return false;
    length = sizeof(address);
    std::string host;
    int port = 0;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
        HostAndPort(address, length, &host, &port) && port == local_port &&
        shutdown(fd, SHUT_RDWR) == 0) {
      ++count;
    }
    return false;
  });
  return count;
}

bool PeerClosed(int fd) {
  pollfd p{fd, POLLIN, 0};
  const int ready = poll(&p, 1, 0);
  if (ready < 0) return errno != EINTR;
  if (ready == 0) return false;
  if (p.revents & (POLLERR | POLLNVAL)) return true;
  char byte;
  const ssize_t got = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (got > 0) return false;  // bytes of a next request
  if (got == 0) return true;  // end of file: the client closed
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace cortiq::server
