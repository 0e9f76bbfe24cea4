// How the interactive tools (cortiq-chat, cortiq-run) show a reply's thought channel: the text a
// Gemma 4 model writes between <|channel>thought\n and <channel|> with thinking on
// (GenerateOptions::reasoning, runtime/generation/thought_channel.h), apart from its answer.
#ifndef CORTIQ_TOOLS_COMMON_THOUGHT_DISPLAY_H_
#define CORTIQ_TOOLS_COMMON_THOUGHT_DISPLAY_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cortiq {

// On a terminal the thoughts are written to stdout in faint text (SGR 2; plain where NO_COLOR is
// set, https://no-color.org), each run of them and the answer after them on lines of their own; when stdout is a file
// or a pipe they go to stderr, so that stdout holds the answers only, as without thinking.
// Errors: Internal "stdout: write failed: ..." (a failed write to stdout ends the tool's run).
class ThoughtDisplay {
 public:
  // Looks at stdout (isatty) and NO_COLOR once.
  ThoughtDisplay();

  // A piece of the thought channel (GenerateOptions::reasoning).
  absl::Status Thought(absl::string_view piece);
  // A piece of the answer (the generation's sink).
  absl::Status Answer(absl::string_view piece);
  // After each reply, whatever ended it: the terminal's normal rendition back if the reply ended
  // inside its thoughts.
  absl::Status EndReply();

 private:
  bool terminal_ = false;
  bool color_ = false;
  bool in_thought_ = false;     // the last text written to the terminal was a thought
  bool at_line_start_ = true;   // the reply's text on the terminal so far ends a line
};

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_THOUGHT_DISPLAY_H_
