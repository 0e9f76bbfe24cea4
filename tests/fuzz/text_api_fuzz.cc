// Fuzz target: the text calls of the C API (runtime/cortiq.h, API 1.3) on arbitrary bytes, over
// a micro model with tiny-a's 512-token tokenizer (tests/fuzz/corpus/artifact_fuzz/
// seed-micro-text-q8_0.cortiq, or $CORTIQ_FUZZ_MODEL). The first input byte chooses the options
// (add_special, skip_special, thinking, generation prompt); the rest is used three ways:
//   - as text: cortiq_tokenize (size query, then exactly that capacity, then one id too few),
//     then cortiq_detokenize and a cortiq_decoder over the ids;
//   - as int32 ids: cortiq_detokenize, cortiq_token_piece, the end-of-generation/turn checks and
//     the decoder, each id in or out of range;
//   - as NUL-separated role/content pairs: cortiq_model_chat_format.
// Invariants: every call returns OK or a documented status (never a crash, leak or hang); text
// is rejected iff it is not valid UTF-8; ids are in range; a size query gives the size the fill
// uses; a too-small buffer is refused and left untouched; every text out is valid UTF-8 and
// NUL-terminated; the decoder's text equals cortiq_detokenize's; a bad id is refused with the
// decoder unchanged.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cortiq.h"
#include "tests/fuzz/fuzz_util.h"

#ifndef CORTIQ_FUZZ_TEXT_MODEL
#define CORTIQ_FUZZ_TEXT_MODEL "tests/fuzz/corpus/artifact_fuzz/seed-micro-text-q8_0.cortiq"
#endif

namespace {

cortiq_model* g_model = nullptr;
int64_t g_vocab = 0;

// Well-formed UTF-8 (RFC 3629: no overlongs, surrogates or code points past U+10FFFF), written
// here rather than taken from the tokenizer so the check does not share its code.
bool IsUtf8(const char* s, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  size_t i = 0;
  while (i < n) {
    const unsigned c = p[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// cortiq_detokenize of `ids` with a size query, the exact buffer and a one-byte-short one.
// Returns the status; *out the text on OK.
cortiq_status Detokenize(const std::vector<int32_t>& ids, int skip_special, std::string* out) {
  size_t length = 0;
  const cortiq_status query =
      cortiq_detokenize(g_model, ids.data(), ids.size(), skip_special, nullptr, 0, &length);
  if (query != CORTIQ_STATUS_OK) {
    CORTIQ_FUZZ_CHECK(query == CORTIQ_STATUS_INVALID_ARGUMENT, "detokenize: status ", query);
    return query;
  }
  std::vector<char> text(length + 1, '\x7f');
  if (length > 0) {
    size_t short_length = 12345;
    CORTIQ_FUZZ_CHECK(cortiq_detokenize(g_model, ids.data(), ids.size(), skip_special,
                                        text.data(), length, &short_length) ==
                          CORTIQ_STATUS_INVALID_ARGUMENT,
                      "a short detokenize buffer was accepted");
    for (char c : text) CORTIQ_FUZZ_CHECK(c == '\x7f', "a refused buffer was written");
  }
  size_t filled = 0;
  CORTIQ_FUZZ_CHECK(cortiq_detokenize(g_model, ids.data(), ids.size(), skip_special, text.data(),
                                      text.size(), &filled) == CORTIQ_STATUS_OK,
                    "detokenize failed after its size query");
  CORTIQ_FUZZ_CHECK(filled == length, "detokenize wrote ", filled, " bytes, the query said ",
                    length);
  CORTIQ_FUZZ_CHECK(text[length] == '\0', "detokenize text not NUL-terminated");
  CORTIQ_FUZZ_CHECK(IsUtf8(text.data(), length), "detokenize gave invalid UTF-8");
  out->assign(text.data(), length);
  return CORTIQ_STATUS_OK;
}

// The decoder over `ids`: the text pushed and finished, which must be cortiq_detokenize's. A bad
// id is refused and the decoder goes on as if it had not been pushed.
// True if `id`'s vocabulary string is a byte-fallback token, "<0xHH>".
bool IsByteToken(int32_t id) {
  char piece[16];
  size_t length = 0;
  if (cortiq_token_piece(g_model, id, piece, sizeof(piece), &length) != CORTIQ_STATUS_OK) {
    return false;  // longer than any byte token
  }
  return length == 6 && piece[0] == '<' && piece[1] == '0' && piece[2] == 'x' &&
         std::isxdigit(static_cast<unsigned char>(piece[3])) &&
         std::isxdigit(static_cast<unsigned char>(piece[4])) && piece[5] == '>';
}

// The longest run of consecutive byte tokens in `ids`; a token with no text of its own (a special
// token left out when skip_special) does not end a run, as it does not in the decoder.
size_t LongestByteTokenRun(const std::vector<int32_t>& ids, int skip_special) {
  size_t longest = 0;
  size_t run = 0;
  for (const int32_t id : ids) {
    if (IsByteToken(id)) {
      longest = std::max(longest, ++run);
      continue;
    }
    std::string text;
    if (Detokenize({id}, skip_special, &text) != CORTIQ_STATUS_OK || !text.empty()) run = 0;
  }
  return longest;
}

void CheckDecoder(const std::vector<int32_t>& ids, int skip_special) {
  cortiq_decoder* decoder = nullptr;
  CORTIQ_FUZZ_CHECK(cortiq_decoder_create(g_model, skip_special, &decoder) == CORTIQ_STATUS_OK,
                    "decoder_create failed");
  std::vector<int32_t> good;
  std::string streamed;
  for (const int32_t id : ids) {
    const char* text = nullptr;
    size_t length = 0;
    const cortiq_status s = cortiq_decoder_push(decoder, id, &text, &length);
    if (id < 0 || id >= g_vocab) {
      CORTIQ_FUZZ_CHECK(s == CORTIQ_STATUS_INVALID_ARGUMENT, "decoder took bad id ", id);
      continue;
    }
    CORTIQ_FUZZ_CHECK(s == CORTIQ_STATUS_OK, "decoder_push(", id, "): status ", s);
    CORTIQ_FUZZ_CHECK(text != nullptr && text[length] == '\0', "decoder text not terminated");
    CORTIQ_FUZZ_CHECK(IsUtf8(text, length), "decoder emitted invalid UTF-8");
    streamed.append(text, length);
    good.push_back(id);
  }
  const char* text = nullptr;
  size_t length = 0;
  CORTIQ_FUZZ_CHECK(cortiq_decoder_finish(decoder, &text, &length) == CORTIQ_STATUS_OK,
                    "decoder_finish failed");
  CORTIQ_FUZZ_CHECK(IsUtf8(text, length), "decoder_finish emitted invalid UTF-8");
  streamed.append(text, length);
  cortiq_decoder_free(decoder);
  std::string whole;
  CORTIQ_FUZZ_CHECK(Detokenize(good, skip_special, &whole) == CORTIQ_STATUS_OK,
                    "detokenize refused ids the decoder took");
  // The decoder streams a run of more than 16 byte tokens (cortiq.h: a model looping on bytes)
  // as its characters complete; only such a run that is not valid UTF-8 as a whole (detokenize
  // gives U+FFFD for every byte of it) may make the texts differ.
  const bool may_differ = LongestByteTokenRun(good, skip_special) > 16 &&
                          whole.find("\xEF\xBF\xBD") != std::string::npos;
  CORTIQ_FUZZ_CHECK(streamed == whole || may_differ,
                    "the decoder's text differs from detokenize's");
}

void FuzzText(const char* text, size_t size, int add_special, int skip_special) {
  size_t n = 0;
  const cortiq_status query = cortiq_tokenize(g_model, text, size, add_special, nullptr, 0, &n);
  const bool valid = IsUtf8(text, size);
  CORTIQ_FUZZ_CHECK((query == CORTIQ_STATUS_OK) == valid, "tokenize: status ", query,
                    " for text that is ", valid ? "" : "not ", "valid UTF-8");
  if (!valid) {
    CORTIQ_FUZZ_CHECK(query == CORTIQ_STATUS_INVALID_ARGUMENT, "tokenize: status ", query);
    return;
  }
  std::vector<int32_t> ids(n + 1, -7);
  if (n > 0) {
    size_t short_n = 999;
    CORTIQ_FUZZ_CHECK(cortiq_tokenize(g_model, text, size, add_special, ids.data(), n - 1,
                                      &short_n) == CORTIQ_STATUS_INVALID_ARGUMENT,
                      "a short id buffer was accepted");
    for (int32_t id : ids) CORTIQ_FUZZ_CHECK(id == -7, "a refused id buffer was written");
  }
  size_t filled = 0;
  CORTIQ_FUZZ_CHECK(cortiq_tokenize(g_model, text, size, add_special, ids.data(), n, &filled) ==
                        CORTIQ_STATUS_OK,
                    "tokenize failed after its size query");
  CORTIQ_FUZZ_CHECK(filled == n, "tokenize wrote ", filled, " ids, the query said ", n);
  CORTIQ_FUZZ_CHECK(ids[n] == -7, "tokenize wrote past its count");
  ids.resize(n);
  for (int32_t id : ids) CORTIQ_FUZZ_CHECK(id >= 0 && id < g_vocab, "tokenize gave id ", id);
  std::string decoded;
  CORTIQ_FUZZ_CHECK(Detokenize(ids, skip_special, &decoded) == CORTIQ_STATUS_OK,
                    "detokenize refused tokenize's ids");
  CheckDecoder(ids, skip_special);
}

void FuzzIds(const uint8_t* data, size_t size, int skip_special) {
  std::vector<int32_t> ids(size / 4);
  // (An empty vector's data() may be NULL, which memcpy must not get even for 0 bytes.)
  if (!ids.empty()) std::memcpy(ids.data(), data, ids.size() * 4);
  // Mostly ids in range (so that text comes out), a few as they are.
  for (int32_t& id : ids) {
    if ((id & 0x100000) == 0) id = static_cast<int32_t>(static_cast<uint32_t>(id) % g_vocab);
  }
  bool all_valid = true;
  for (const int32_t id : ids) {
    const bool in_range = id >= 0 && id < g_vocab;
    all_valid &= in_range;
    size_t length = 0;
    const cortiq_status s = cortiq_token_piece(g_model, id, nullptr, 0, &length);
    CORTIQ_FUZZ_CHECK((s == CORTIQ_STATUS_OK) == in_range, "token_piece(", id, "): ", s);
    if (in_range) {
      std::vector<char> piece(length + 1, '\x7f');
      size_t filled = 0;
      CORTIQ_FUZZ_CHECK(cortiq_token_piece(g_model, id, piece.data(), piece.size(), &filled) ==
                                CORTIQ_STATUS_OK &&
                            filled == length && piece[length] == '\0',
                        "token_piece(", id, ") differs from its size query");
    }
    for (const auto check : {cortiq_token_is_end_of_generation, cortiq_token_is_end_of_turn}) {
      int result = -1;
      const cortiq_status e = check(g_model, id, &result);
      CORTIQ_FUZZ_CHECK((e == CORTIQ_STATUS_OK) == in_range, "end check(", id, "): ", e);
      CORTIQ_FUZZ_CHECK(in_range ? (result == 0 || result == 1) : result == -1,
                        "end check(", id, ") stored ", result);
    }
  }
  std::string text;
  const cortiq_status s = Detokenize(ids, skip_special, &text);
  CORTIQ_FUZZ_CHECK((s == CORTIQ_STATUS_OK) == all_valid, "detokenize: status ", s);
  CheckDecoder(ids, skip_special);
}

void FuzzChat(const char* data, size_t size, int generation_prompt, int thinking) {
  // NUL-separated strings: role, content, role, content, ... (a missing last content is "").
  std::vector<std::string> strings;
  size_t start = 0;
  for (size_t i = 0; i <= size; ++i) {
    if (i == size || data[i] == '\0') {
      strings.emplace_back(data + start, i - start);
      start = i + 1;
    }
  }
  if (strings.size() % 2 == 1) strings.emplace_back();
  std::vector<cortiq_chat_message> messages(strings.size() / 2);
  for (size_t i = 0; i < messages.size(); ++i) {
    messages[i].role = strings[2 * i].c_str();
    messages[i].content = strings[2 * i + 1].c_str();
  }
  size_t length = 0;
  const cortiq_status s = cortiq_model_chat_format(g_model, messages.data(), messages.size(),
                                                   generation_prompt, thinking, nullptr, 0,
                                                   &length);
  if (s != CORTIQ_STATUS_OK) {
    CORTIQ_FUZZ_CHECK(s == CORTIQ_STATUS_INVALID_ARGUMENT, "chat_format: status ", s);
    return;
  }
  std::vector<char> text(length + 1, '\x7f');
  size_t short_length = 0;
  CORTIQ_FUZZ_CHECK(cortiq_model_chat_format(g_model, messages.data(), messages.size(),
                                             generation_prompt, thinking, text.data(), length,
                                             &short_length) == CORTIQ_STATUS_INVALID_ARGUMENT,
                    "a short chat buffer was accepted");
  for (char c : text) CORTIQ_FUZZ_CHECK(c == '\x7f', "a refused chat buffer was written");
  size_t filled = 0;
  CORTIQ_FUZZ_CHECK(cortiq_model_chat_format(g_model, messages.data(), messages.size(),
                                             generation_prompt, thinking, text.data(),
                                             text.size(), &filled) == CORTIQ_STATUS_OK &&
                        filled == length && text[length] == '\0',
                    "chat_format differs from its size query");
  // The prompt tokenizes whenever its contents are valid UTF-8.
  bool valid = true;
  for (const std::string& str : strings) valid &= IsUtf8(str.data(), str.size());
  if (valid) {
    CORTIQ_FUZZ_CHECK(IsUtf8(text.data(), length), "chat_format gave invalid UTF-8");
    FuzzText(text.data(), length, 1, 0);
  }
}

// Opens the model once (here rather than in LLVMFuzzerInitialize, so that the seed driver of the
// normal build, tests/text/fuzz_seed_driver.cc, runs the target too).
void OpenModel() {
  const char* path = std::getenv("CORTIQ_FUZZ_MODEL");
  if (cortiq_model_open(path != nullptr ? path : CORTIQ_FUZZ_TEXT_MODEL, &g_model) !=
      CORTIQ_STATUS_OK) {
    std::fprintf(stderr, "text_api_fuzz: %s\n", cortiq_last_error());
    std::abort();
  }
  cortiq_model_info info;
  info.struct_size = sizeof(info);
  if (cortiq_model_get_info(g_model, &info) != CORTIQ_STATUS_OK) std::abort();
  g_vocab = info.vocab_size;
  int32_t bos = -1;
  if (cortiq_model_special_token(g_model, CORTIQ_TOKEN_BOS, &bos) != CORTIQ_STATUS_OK) {
    std::fprintf(stderr, "text_api_fuzz: the model has no tokenizer: %s\n", cortiq_last_error());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool opened = (OpenModel(), true);
  (void)opened;
  if (size == 0) return 0;
  const uint8_t options = data[0];
  const char* rest = reinterpret_cast<const char*>(data + 1);
  const size_t n = size - 1;
  switch (options & 3) {
    case 0:
    case 1:
      FuzzText(rest, n, (options >> 2) & 1, (options >> 3) & 1);
      break;
    case 2:
      FuzzIds(data + 1, n, (options >> 3) & 1);
      break;
    default:
      FuzzChat(rest, n, (options >> 2) & 1, (options >> 4) & 1);
      break;
  }
  return 0;
}
