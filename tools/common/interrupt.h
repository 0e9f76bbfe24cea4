// Ctrl-C in the interactive tools: SIGINT sets a flag that the generation loop checks
// (runtime/generation/generator.h), so it stops the current answer instead of the program.
#ifndef CORTIQ_TOOLS_COMMON_INTERRUPT_H_
#define CORTIQ_TOOLS_COMMON_INTERRUPT_H_

#include <atomic>

namespace cortiq {

// Installs the SIGINT handler (idempotent). It sets InterruptFlag(); a second SIGINT while the
// flag is still set restores the default action and re-raises it, so a program that does not
// react still ends on a second Ctrl-C. Installed without SA_RESTART: a blocking read (a chat
// waiting for input) returns EINTR.
void InstallInterruptHandler();

// The flag the handler sets (lock-free, so safe to set from the handler).
std::atomic<bool>& InterruptFlag();

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_INTERRUPT_H_
