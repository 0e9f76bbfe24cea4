// ConnectionThreads: threads started on demand, up to a maximum, for httplib's connections.
#include "server/connection_threads.h"

#include <system_error>
#include <utility>

namespace cortiq::server {

ConnectionThreads::ConnectionThreads(size_t max_threads)
    : max_threads_(max_threads < 1 ? 1 : max_threads) {}

ConnectionThreads::~ConnectionThreads() { shutdown(); }

void ConnectionThreads::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(mutex_);
  jobs_.push_back(std::move(fn));
  // An idle thread takes it (idle_ counts those waiting; each queued job claims one), else a new
  // thread if the limit allows, else it waits for the first thread to finish its connection.
  if (idle_ >= jobs_.size()) {
    lock.unlock();
    wake_.notify_one();
    return;
  }
  if (threads_.size() >= max_threads_) return;
  try {
    threads_.emplace_back([this] { Work(); });
  } catch (const std::system_error&) {
    // No thread to be had (a process or memory limit): the connection waits for a running
    // thread, or, with none, is served on the caller's (httplib's accepting thread), rather
    // than the uncaught exception ending the server.
    if (!threads_.empty()) return;
    std::function<void()> job = std::move(jobs_.back());
    jobs_.pop_back();
    lock.unlock();
    job();
  }
}

void ConnectionThreads::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shutdown_) return;
    shutdown_ = true;
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (std::thread& t : threads) t.join();
}

size_t ConnectionThreads::threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

void ConnectionThreads::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ++idle_;
    wake_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) return;  // shut down, nothing left
    std::function<void()> fn = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace cortiq::server
