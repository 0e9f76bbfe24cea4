// Test helper: turns a hang in a blocking system call into a failure. Used by the tests that open
// FIFOs, which a blocking open(2) would wait on forever.
#ifndef CORTIQ_TESTS_COMPILER_CHECKPOINT_INTERRUPT_GUARD_H_
#define CORTIQ_TESTS_COMPILER_CHECKPOINT_INTERRUPT_GUARD_H_

#include <signal.h>
#include <sys/time.h>

namespace cortiq {

// While alive, sends SIGALRM after 2 s and then every 0.5 s, to a handler that does nothing,
// installed without SA_RESTART: a system call blocked for that long (every one of them, not just
// the first) fails with EINTR, so the code under test returns an error and the test fails
// instead of hanging. Restores the previous handler and timer on destruction.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction action = {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, &previous_action_);
    const struct itimerval timer = {{0, 500'000}, {2, 0}};
    setitimer(ITIMER_REAL, &timer, &previous_timer_);
  }
  ~InterruptGuard() {
    setitimer(ITIMER_REAL, &previous_timer_, nullptr);
    sigaction(SIGALRM, &previous_action_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_action_;
  struct itimerval previous_timer_;
};

}  // namespace cortiq

#endif  // CORTIQ_TESTS_COMPILER_CHECKPOINT_INTERRUPT_GUARD_H_
