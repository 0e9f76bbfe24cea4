// The input side of cortiq-chat: one user message at a time from stdin, read so that Ctrl-C and
// a pipe both work — a prompt marker only on a terminal, multi-line messages (a trailing
// backslash continues the line, as in llama.cpp's llama-cli; a block between lines of """, as in
// `ollama run`), and a read that returns when SIGINT sets the interrupt flag
// (tools/common/interrupt.h) instead of blocking until the next line.
#ifndef CORTIQ_TOOLS_CORTIQ_CHAT_LINE_INPUT_H_
#define CORTIQ_TOOLS_CORTIQ_CHAT_LINE_INPUT_H_

#include <atomic>
#include <string>

#include "absl/status/statusor.h"

namespace cortiq {

// What ReadMessage got.
enum class InputEvent {
  kMessage,      // a message (possibly empty: an empty line)
  kEndOfInput,   // EOF (Ctrl-D on a terminal, the end of a pipe) before any text of a message
  kInterrupted,  // the interrupt flag was set while waiting
};

// Reads messages from a file descriptor (stdin in the tool). Not thread-safe.
class LineInput {
 public:
  // `fd`: the descriptor read (its terminal-ness decides the prompt markers); `prompt` and
  // `continuation` are written to stdout before the first and every further line of a message
  // when `fd` is a terminal; `interrupt` (may be null) is polled while waiting (every 100 ms and
  // whenever a read is interrupted by a signal).
  LineInput(int fd, std::string prompt, std::string continuation,
            const std::atomic<bool>* interrupt);

  bool interactive() const { return interactive_; }

  // The next message into *message (without the final newline): one line; or, while a line
  // ends in a backslash, that line without the backslash, a newline, and the next line; or,
  // when a line starts with """, everything up to a line that ends with """ (the quotes
  // removed, newlines kept). EOF in the middle of a message ends it (kMessage); EOF before it
  // is kEndOfInput. A "\r\n" line end is read as "\n". Errors: Internal for a failed read
  // (naming errno).
  absl::StatusOr<InputEvent> ReadMessage(std::string* message);

 private:
  enum class LineEvent { kLine, kEndOfInput, kInterrupted };
  // One line into *line (without '\n'); kEndOfInput at EOF with nothing read (a last line
  // without '\n' is a line).
  absl::StatusOr<LineEvent> ReadLine(const std::string& marker, std::string* line);

  int fd_;
  bool interactive_;
  std::string prompt_;
  std::string continuation_;
  const std::atomic<bool>* interrupt_;
  std::string buffer_;  // bytes read past the last line
  bool eof_ = false;
};

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_CHAT_LINE_INPUT_H_
