// Whether the client of a request being answered is still connected, for a handler of
// cpp-httplib 0.11 (Debian 12's), which gives a handler neither the connection's socket nor its
// state (Request::is_connection_closed came in later releases). A non-streamed completion waits
// for its whole answer before writing a byte, so without this it could not tell that its
// client left (a timeout, a retry, Ctrl-C) and would keep a slot generating for nobody.
#ifndef CORTIQ_SERVER_CLIENT_CONNECTION_H_
#define CORTIQ_SERVER_CLIENT_CONNECTION_H_

#include <string>

namespace cortiq::server {

// The socket of a connection, found among the process's open sockets by its two ends, as
// cpp-httplib names them in Request (remote_addr / remote_port, local_addr / local_port: the
// numeric host of getnameinfo and the port). -1 if no socket matches (e.g. a request not
// from a socket, as in tests). Called by the thread that serves the connection, while the
// handler runs, when httplib keeps the socket open: the descriptor cannot be reused meanwhile.
// Cost: one getsockname/getpeername pair per open socket of the process.
int FindConnectionSocket(const std::string& remote_addr, int remote_port,
                         const std::string& local_addr, int local_port);

// True if the peer of connected socket `fd` has closed its side (a read would return end of
// file) or the connection failed; false while it is open, also with unread bytes waiting (a
// pipelined next request). Does not block. The test httplib's later is_connection_closed uses
// (peek one byte: 0 = closed), so a client that only shuts down its sending side counts as
// gone, as there.
bool PeerClosed(int fd);

// Shuts down (both directions) every connected TCP socket of the process whose local port is
// `local_port`: the connections of a server on that port. A thread blocked reading from or
// writing to one of them returns at once (end of file, or an error). For a server that is
// stopping and would otherwise wait for clients that send or read slowly (httplib's stop joins
// every connection's thread). Returns how many were shut down.
int ShutDownConnections(int local_port);

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_CLIENT_CONNECTION_H_
