// ConnectionThreads: cpp-httplib's task queue for cortiq-server's connections, a thread for each
// connection being served, started when one is needed and kept for the next, up to a maximum
// (beyond it connections wait for a free thread, as in httplib's fixed ThreadPool).
//
// Why: httplib serves a connection on one thread from reading its headers to closing it, and its
// ThreadPool has a fixed size. With parallel + queue + 8 threads, 27 clients sending their
// headers slowly (a byte every few seconds is within httplib's per-read timeout) held them all,
// and /health itself went unanswered until they stopped. Threads started on demand cost nothing
// until used, so the limit can be high: such clients then need hundreds of connections.
#ifndef CORTIQ_SERVER_CONNECTION_THREADS_H_
#define CORTIQ_SERVER_CONNECTION_THREADS_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace cortiq::server {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  // At most `max_threads` (>= 1) connections served at once.
  explicit ConnectionThreads(size_t max_threads);
  ~ConnectionThreads() override;
  ConnectionThreads(const ConnectionThreads&) = delete;
  ConnectionThreads& operator=(const ConnectionThreads&) = delete;

  // Runs `fn` (one connection) on an idle thread, a new one while fewer than max_threads exist,
  // else on the first thread to become free. If no thread can be started (std::system_error:
  // a process or memory limit), `fn` waits for a running thread, or with none runs here.
  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins every thread. enqueue must not be called afterwards.
  void shutdown() override;

  // Threads started so far (they are kept until shutdown).
  size_t threads() const;

 private:
  void Work();

  const size_t max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_CONNECTION_THREADS_H_
