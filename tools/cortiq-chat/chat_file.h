// The chat file of cortiq-chat's /save and /load: one conversation and the sequence state that
// holds it, so that a later process continues the chat where it stopped — the same rendering,
// the KV cache of the conversation (only the next message is evaluated) and the sampler's
// generator (a seeded chat draws what it would have drawn). llama.cpp's llama-cli keeps the
// tokens and state in its --prompt-cache file in the same spirit.
//
// Layout (host byte order, like the sequence state it embeds; integers unsigned):
//
//   magic    8 bytes "CQCHAT\r\n"
//   version  u32 (kChatFileVersion)
//   bom      u32 0x01020304 (another byte order is refused)
//   checksum u64 XXH3-64 of every byte after this field
//   flags    u32: bit 0 = thinking on; the other bits are 0
//   system   u32 length + bytes (the system message; length 0 = none)
//   count    u32 messages, each: u32 role length + role, u64 content length + content
//   rng      4 × u64 (the sampler's xoshiro256** state)
//   state    u64 length + the bytes of Sequence::Save (runtime/sequence.h: it carries the
//            model's identity, its own version and checksum)
//
// and nothing after it.
#ifndef CORTIQ_TOOLS_CORTIQ_CHAT_CHAT_FILE_H_
#define CORTIQ_TOOLS_CORTIQ_CHAT_CHAT_FILE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/text/gemma4_chat.h"

namespace cortiq {

inline constexpr uint32_t kChatFileVersion = 1;

// A saved chat.
struct SavedChat {
  bool enable_thinking = false;
  std::string system;  // "" = none
  // The user / assistant messages after the system message (string contents).
  std::vector<text::ChatMessage> messages;
  std::array<uint64_t, 4> generator_state{};
  std::vector<uint8_t> sequence_state;  // Sequence::Save
};

// The bytes of `chat` in the layout above.
std::string EncodeChatFile(const SavedChat& chat);

// Parses a chat file's bytes: the sequence state is not interpreted (Sequence::Restore checks
// it). Errors: DataLoss "not a cortiq-chat file (bad magic)", "damaged: checksum mismatch",
// "damaged: truncated ..." / "... trailing bytes" (checked in that order, so a damaged file
// never yields a partial conversation); Unimplemented for a newer version or another byte
// order, naming it.
absl::StatusOr<SavedChat> DecodeChatFile(absl::string_view bytes);

// Writes `chat` to `path` atomically (AtomicFile: an existing file is replaced only by a complete
// new one), replacing only an empty file or a cortiq-chat file. Errors: CheckReplaceable's
// (AlreadyExists for another existing file, e.g. the model being chatted with) and AtomicFile's,
// naming the path.
absl::Status WriteChatFile(const std::string& path, const SavedChat& chat);

// Reads and decodes the chat file at `path`. Errors: ReadFileToString's and DecodeChatFile's,
// prefixed with the path ("PATH: damaged: checksum mismatch").
absl::StatusOr<SavedChat> ReadChatFile(const std::string& path);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_CHAT_CHAT_FILE_H_
