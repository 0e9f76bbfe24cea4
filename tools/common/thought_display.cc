#include "tools/common/thought_display.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

absl::Status WriteStdout(absl::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
      std::fflush(stdout) != 0) {
    return absl::InternalError(absl::StrCat("stdout: write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

ThoughtDisplay::ThoughtDisplay()
    : terminal_(isatty(STDOUT_FILENO) == 1),
      color_(terminal_ && std::getenv("NO_COLOR") == nullptr) {}

absl::Status ThoughtDisplay::Thought(absl::string_view piece) {
  if (!terminal_) {
    std::fwrite(piece.data(), 1, piece.size(), stderr);  // stderr is unbuffered
    return absl::OkStatus();
  }
  if (!in_thought_) {
    // Thoughts after some answer text (a model that answers, then thinks): on a line of their own.
    if (!at_line_start_) CORTIQ_RETURN_IF_ERROR(WriteStdout("\n"));
    if (color_) CORTIQ_RETURN_IF_ERROR(WriteStdout("\x1b[2m"));
  }
  in_thought_ = true;
  if (!piece.empty()) at_line_start_ = piece.back() == '\n';
  return WriteStdout(piece);
}

absl::Status ThoughtDisplay::Answer(absl::string_view piece) {
  if (in_thought_) {
    CORTIQ_RETURN_IF_ERROR(EndReply());
    CORTIQ_RETURN_IF_ERROR(WriteStdout("\n"));
    at_line_start_ = true;
  }
  if (!piece.empty()) at_line_start_ = piece.back() == '\n';
  return WriteStdout(piece);
}

absl::Status ThoughtDisplay::EndReply() {
  if (in_thought_ && color_) CORTIQ_RETURN_IF_ERROR(WriteStdout("\x1b[0m"));
  in_thought_ = false;
  at_line_start_ = true;  // the tools end each reply's line themselves
  return absl::OkStatus();
}

}  // namespace cortiq
