// The SIGINT handler of the interactive tools (see interrupt.h).
#include "tools/common/interrupt.h"

#include <signal.h>

namespace cortiq {
namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void OnInterrupt(int signal_number) {
  if (g_interrupted.exchange(true)) {
    // Second Ctrl-C before the first was handled: give up, as without a handler.
    struct sigaction action = {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
    raise(signal_number);
  }
}

}  // namespace

void InstallInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: interrupt blocking reads
  sigaction(SIGINT, &action, nullptr);
}

std::atomic<bool>& InterruptFlag() { return g_interrupted; }

}  // namespace cortiq
