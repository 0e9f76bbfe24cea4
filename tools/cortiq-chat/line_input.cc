// LineInput (see line_input.h).
#include "tools/cortiq-chat/line_input.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace cortiq {

LineInput::LineInput(int fd, std::string prompt, std::string continuation,
                     const std::atomic<bool>* interrupt)
    : fd_(fd),
      interactive_(isatty(fd) == 1),
      prompt_(std::move(prompt)),
      continuation_(std::move(continuation)),
      interrupt_(interrupt) {}

absl::StatusOr<LineInput::LineEvent> LineInput::ReadLine(const std::string& marker,
                                                         std::string* line) {
  if (interactive_ && !marker.empty()) {
    std::fputs(marker.c_str(), stdout);
    std::fflush(stdout);
  }
  for (;;) {
    const size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      line->assign(buffer_, 0, newline);
      buffer_.erase(0, newline + 1);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      return LineEvent::kLine;
    }
    if (eof_) {
      if (buffer_.empty()) return LineEvent::kEndOfInput;
      *line = std::move(buffer_);
      buffer_.clear();
      if (!line->empty() && line->back() == '\r') line->pop_back();
      return LineEvent::kLine;
    }
    // Wait in short slices so that a SIGINT that arrived just before the wait (and so did not
    // interrupt it) is still seen within 100 ms.
    if (interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed)) {
      return LineEvent::kInterrupted;
    }
    pollfd p = {fd_, POLLIN, 0};
    const int ready = poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("stdin: poll failed: ", std::strerror(errno)));
    }
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::InternalError(absl::StrCat("stdin: read failed: ", std::strerror(errno)));
    }
    if (n == 0) {
      eof_ = true;
      // A terminal's Ctrl-D ends the input; so does the end of a pipe.
      if (interactive_ && buffer_.empty()) {
        std::fputc('\n', stdout);
        std::fflush(stdout);
      }
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

absl::StatusOr<InputEvent> LineInput::ReadMessage(std::string* message) {
  message->clear();
  std::string line;
  CORTIQ_ASSIGN_OR_RETURN(LineEvent event, ReadLine(prompt_, &line));
  if (event == LineEvent::kEndOfInput) return InputEvent::kEndOfInput;
  if (event == LineEvent::kInterrupted) return InputEvent::kInterrupted;

  if (absl::StartsWith(line, "\"\"\"")) {
    // A """ block: the rest of the first line, then lines up to one ending with """; the empty
    // rest of an opening or closing """ line is not a line of the message.
    std::vector<std::string> lines;
    std::string rest = line.substr(3);
    bool closed = false;
    for (;;) {
      if (absl::EndsWith(rest, "\"\"\"")) {
        rest.resize(rest.size() - 3);
        closed = true;
      }
      if (!(rest.empty() && (lines.empty() || closed))) lines.push_back(rest);
      if (closed) break;
      CORTIQ_ASSIGN_OR_RETURN(event, ReadLine(continuation_, &rest));
      if (event == LineEvent::kEndOfInput) break;
      if (event == LineEvent::kInterrupted) return InputEvent::kInterrupted;
    }
    *message = absl::StrJoin(lines, "\n");
    return InputEvent::kMessage;
  }
  // Backslash continuations.
  while (!line.empty() && line.back() == '\\') {
    line.pop_back();
    *message += line;
    *message += '\n';
    CORTIQ_ASSIGN_OR_RETURN(event, ReadLine(continuation_, &line));
    if (event == LineEvent::kEndOfInput) {
      line.clear();
      break;
    }
    if (event == LineEvent::kInterrupted) return InputEvent::kInterrupted;
  }
  *message += line;
  return InputEvent::kMessage;
}

}  // namespace cortiq
