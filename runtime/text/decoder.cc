// Decoder steps (see decoder.h).
#include "runtime/text/decoder.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

void Flatten(const DecoderSpec& spec, std::vector<const DecoderSpec*>* out) {
  if (spec.type == DecoderType::kSequence) {
    for (const DecoderSpec& child : spec.children) Flatten(child, out);
  } else {
    out->push_back(&spec);
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool ParseByteToken(std::string_view token, uint8_t* byte) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return false;
  const int lo = HexValue(token[4]);
  if (lo < 0) return false;
  if (token[3] == '+') {
    *byte = static_cast<uint8_t>(lo);
    return true;
  }
  const int hi = HexValue(token[3]);
  if (hi < 0) return false;
  *byte = static_cast<uint8_t>(hi * 16 + lo);
  return true;
}

absl::StatusOr<Decoder> Decoder::Create(const DecoderSpec& spec) {
  std::vector<const DecoderSpec*> flat;
  Flatten(spec, &flat);
  Decoder d;
  for (const DecoderSpec* s : flat) {
    Step step;
    step.type = s->type;
    step.content = s->content;
    step.start = s->start;
    step.stop = s->stop;
    if (s->type == DecoderType::kReplace) {
      if (s->pattern.kind == TextPattern::Kind::kRegex) {
        CORTIQ_ASSIGN_OR_RETURN(Regex regex, Regex::Compile(s->pattern.text));
        step.regex.emplace(std::move(regex));
      } else {
        step.literal = s->pattern.text;
      }
    } else if (s->type == DecoderType::kStrip) {
      size_t i = 0;
      if (s->content.empty() || FindInvalidUtf8(s->content) != std::string::npos ||
          (step.strip_char = DecodeUtf8(s->content, &i), i != s->content.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Strip content \"", s->content, "\" must be exactly one character"));
      }
    }
    d.steps_.push_back(std::move(step));
  }
  return d;
}

absl::Status Decoder::ApplyToken(const Step& step, std::string* token) const {
  switch (step.type) {
    case DecoderType::kReplace: {
      std::string out;
      size_t last = 0;
      if (step.regex) {
        CORTIQ_RETURN_IF_ERROR(step.regex->ForEachMatch(*token, [&](size_t start, size_t end) {
          out.append(*token, last, start - last);
          out += step.content;
          last = end;
        }));
      } else {
        if (step.literal.empty()) return absl::OkStatus();
        size_t at;
        while ((at = token->find(step.literal, last)) != std::string::npos) {
          out.append(*token, last, at - last);
          out += step.content;
          last = at + step.literal.size();
        }
      }
      out.append(*token, last, std::string::npos);
      *token = std::move(out);
      return absl::OkStatus();
    }
    case DecoderType::kStrip: {
      std::vector<size_t> starts;  // byte offset of each character
      std::vector<char32_t> chars;
      for (size_t i = 0; i < token->size();) {
        starts.push_back(i);
        chars.push_back(DecodeUtf8(*token, &i));
      }
      size_t start_cut = 0;
      for (size_t i = 0; i < chars.size() && i < step.start; ++i) {
        if (chars[i] != step.strip_char) break;
        start_cut = i + 1;
      }
      size_t stop_cut = chars.size();
      for (size_t i = 0; i < step.stop && i < chars.size(); ++i) {
        const size_t index = chars.size() - i - 1;
        if (chars[index] != step.strip_char) break;
        stop_cut = index;
      }
      if (stop_cut <= start_cut) {
        token->clear();
      } else {
        const size_t begin = starts[start_cut];
        const size_t end = stop_cut == chars.size() ? token->size() : starts[stop_cut];
        *token = token->substr(begin, end - begin);
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

absl::StatusOr<std::vector<std::string>> Decoder::DecodeChain(
    std::vector<std::string> tokens) const {
  for (const Step& step : steps_) {
    if (step.type == DecoderType::kFuse) {
      std::string all;
      for (const std::string& t : tokens) all += t;
      tokens.clear();
      tokens.push_back(std::move(all));
      continue;
    }
    if (step.type == DecoderType::kByteFallback) {
      std::vector<std::string> out;
      std::string run;
      size_t run_bytes = 0;
      const auto flush = [&] {
        if (run_bytes == 0) return;
        if (FindInvalidUtf8(run) == std::string::npos) {
          out.push_back(run);
        } else {
          for (size_t k = 0; k < run_bytes; ++k) out.push_back("\xEF\xBF\xBD");
        }
        run.clear();
        run_bytes = 0;
      };
      for (std::string& t : tokens) {
        uint8_t byte;
        if (ParseByteToken(t, &byte)) {
          run.push_back(static_cast<char>(byte));
          ++run_bytes;
        } else {
          flush();
          out.push_back(std::move(t));
        }
      }
      flush();
      tokens = std::move(out);
      continue;
    }
    for (std::string& t : tokens) CORTIQ_RETURN_IF_ERROR(ApplyToken(step, &t));
  }
  return tokens;
}

bool Decoder::IsHeldBack(std::string_view piece, uint8_t* byte) const {
  std::string token(piece);
  for (const Step& step : steps_) {
    if (step.type == DecoderType::kByteFallback) {
      uint8_t parsed;
      if (!ParseByteToken(token, &parsed)) return false;
      if (byte != nullptr) *byte = parsed;
      return true;
    }
    // A step that joins tokens: no later ByteFallback sees this token on its own.
    if (step.type == DecoderType::kFuse) return false;
    if (!ApplyToken(step, &token).ok()) return false;
  }
  return false;
}

bool Decoder::IsLocal() const {
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].type == DecoderType::kFuse) return i + 1 == steps_.size();
  }
  return true;
}

}  // namespace cortiq::text
