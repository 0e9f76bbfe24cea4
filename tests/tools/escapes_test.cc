// ProcessEscapes against llama.cpp's string_process_escapes (common/common.cpp): the same
// sequences; a \x takes exactly two hex digits (llama.cpp's strtol also reads "\x+1" or "\x 1",
// which are kept here as written).
#include "tools/common/escapes.h"

#include "gtest/gtest.h"

namespace cortiq {
namespace {

TEST(ProcessEscapes, TheSequencesLlamaCppProcesses) {
  EXPECT_EQ(ProcessEscapes("a\\nb"), "a\nb");
  EXPECT_EQ(ProcessEscapes("\\r\\t\\'\\\"\\\\"), "\r\t'\"\\");
  EXPECT_EQ(ProcessEscapes("\\x41\\x7a\\x0A"), "Az\n");
  EXPECT_EQ(ProcessEscapes("caf\\xC3\\xA9"), "caf\xC3\xA9");
}

TEST(ProcessEscapes, KeepsWhatIsNotAnEscape) {
  EXPECT_EQ(ProcessEscapes(""), "");
  EXPECT_EQ(ProcessEscapes("plain text"), "plain text");
  EXPECT_EQ(ProcessEscapes("\\q"), "\\q");      // unknown: the backslash stays
  EXPECT_EQ(ProcessEscapes("\\x4"), "\\x4");    // one hex digit
  EXPECT_EQ(ProcessEscapes("\\xg1"), "\\xg1");  // not hex
  EXPECT_EQ(ProcessEscapes("end\\"), "end\\");  // a final backslash
  EXPECT_EQ(ProcessEscapes("\\\\n"), "\\n");     // an escaped backslash, then an n
}

}  // namespace
}  // namespace cortiq
