// The cortiq-chat file (see chat_file.h).
#include "tools/cortiq-chat/chat_file.h"

#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/file_checks.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "base/xxh3.h"

namespace cortiq {
namespace {

constexpr char kMagic[8] = {'C', 'Q', 'C', 'H', 'A', 'T', '\r', '\n'};
constexpr uint32_t kByteOrderMark = 0x01020304;
constexpr size_t kChecksumEnd = 8 + 4 + 4 + 8;  // the checksum covers the bytes after it
// A chat file holds a KV cache, which may be gigabytes for a long context of a large model.
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 40;

template <typename T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// Reads fields in order; a read past the end fails and every later read fails too.
class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  bool Get(T* value) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Take(uint64_t size, absl::string_view* out) {
    if (bytes_.size() - pos_ < size) return false;
    *out = bytes_.substr(pos_, static_cast<size_t>(size));
    pos_ += static_cast<size_t>(size);
    return true;
  }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  absl::string_view bytes_;
  size_t pos_ = 0;
};

absl::Status Truncated(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("damaged: truncated in ", what));
}

}  // namespace

std::string EncodeChatFile(const SavedChat& chat) {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, kChatFileVersion);
  Put<uint32_t>(&out, kByteOrderMark);
  Put<uint64_t>(&out, 0);  // the checksum, below
  Put<uint32_t>(&out, chat.enable_thinking ? 1 : 0);
  Put<uint32_t>(&out, static_cast<uint32_t>(chat.system.size()));
  out += chat.system;
  Put<uint32_t>(&out, static_cast<uint32_t>(chat.messages.size()));
  for (const text::ChatMessage& m : chat.messages) {
    Put<uint32_t>(&out, static_cast<uint32_t>(m.role.size()));
    out += m.role;
    Put<uint64_t>(&out, m.content.size());
    out += m.content;
  }
  for (const uint64_t word : chat.generator_state) Put<uint64_t>(&out, word);
  Put<uint64_t>(&out, chat.sequence_state.size());
  out.append(reinterpret_cast<const char*>(chat.sequence_state.data()),
             chat.sequence_state.size());
  const uint64_t checksum = Xxh3_64(out.data() + kChecksumEnd, out.size() - kChecksumEnd);
  std::memcpy(&out[kChecksumEnd - 8], &checksum, sizeof(checksum));
  return out;
}

absl::StatusOr<SavedChat> DecodeChatFile(absl::string_view bytes) {
  Reader r(bytes);
  absl::string_view magic;
  uint32_t version = 0, bom = 0, flags = 0, system_size = 0, count = 0;
  uint64_t checksum = 0;
  if (!r.Take(sizeof(kMagic), &magic) || magic != absl::string_view(kMagic, sizeof(kMagic))) {
    return absl::DataLossError("not a cortiq-chat file (bad magic)");
  }
  if (!r.Get(&version) || !r.Get(&bom) || !r.Get(&checksum)) return Truncated("the header");
  if (bom != kByteOrderMark) {
    return absl::UnimplementedError("the chat was saved on a host of another byte order");
  }
  if (version != kChatFileVersion) {
    const std::string message = absl::StrCat("chat file version ", version,
                                             "; this cortiq-chat reads ", kChatFileVersion);
    return version > kChatFileVersion ? absl::UnimplementedError(message)
                                      : absl::DataLossError(absl::StrCat("damaged: ", message));
  }
  if (Xxh3_64(bytes.data() + kChecksumEnd, bytes.size() - kChecksumEnd) != checksum) {
    return absl::DataLossError("damaged: checksum mismatch");
  }
  SavedChat chat;
  if (!r.Get(&flags)) return Truncated("the flags");
  if (flags > 1) return absl::DataLossError(absl::StrCat("damaged: unknown flags ", flags));
  chat.enable_thinking = flags == 1;
  absl::string_view text;
  if (!r.Get(&system_size) || !r.Take(system_size, &text)) return Truncated("the system message");
  chat.system = std::string(text);
  if (!r.Get(&count)) return Truncated("the message count");
  // Each message takes at least 12 bytes: no allocation beyond what the file holds.
  if (count > r.left() / 12) return Truncated("the messages");
  chat.messages.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t role_size = 0;
    uint64_t content_size = 0;
    absl::string_view role, content;
    if (!r.Get(&role_size) || !r.Take(role_size, &role) || !r.Get(&content_size) ||
        !r.Take(content_size, &content)) {
      return Truncated(absl::StrCat("message ", i));
    }
    text::ChatMessage m;
    m.role = std::string(role);
    m.content_kind = text::ChatMessage::ContentKind::kString;
    m.content = std::string(content);
    chat.messages.push_back(std::move(m));
  }
  for (uint64_t& word : chat.generator_state) {
    if (!r.Get(&word)) return Truncated("the generator state");
  }
  uint64_t state_size = 0;
  absl::string_view state;
  if (!r.Get(&state_size) || !r.Take(state_size, &state)) return Truncated("the session state");
  if (r.left() != 0) {
    return absl::DataLossError(absl::StrCat("damaged: ", r.left(), " trailing bytes"));
  }
  chat.sequence_state.assign(state.begin(), state.end());
  return chat;
}

absl::Status WriteChatFile(const std::string& path, const SavedChat& chat) {
  const std::string bytes = EncodeChatFile(chat);
  // Another file at the path (the model being chatted with, a document) is refused, not replaced.
  CORTIQ_RETURN_IF_ERROR(
      CheckReplaceable(path, std::string(kMagic, sizeof(kMagic)), "cortiq-chat file"));
  CORTIQ_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path));
  CORTIQ_RETURN_IF_ERROR(file.Write(bytes.data(), bytes.size()));
  return file.Commit();
}

absl::StatusOr<SavedChat> ReadChatFile(const std::string& path) {
  CORTIQ_ASSIGN_OR_RETURN(const std::string bytes, ReadFileToString(path, kMaxFileBytes));
  absl::StatusOr<SavedChat> chat = DecodeChatFile(bytes);
  if (!chat.ok()) {
    return absl::Status(chat.status().code(), absl::StrCat(path, ": ", chat.status().message()));
  }
  return chat;
}

}  // namespace cortiq
