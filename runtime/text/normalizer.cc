// Normalizer steps (see normalizer.h).
#include "runtime/text/normalizer.h"

#include <utility>

#include "base/status_macros.h"
#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

void Flatten(const NormalizerSpec& spec, std::vector<const NormalizerSpec*>* out) {
  if (spec.type == NormalizerType::kSequence) {
    for (const NormalizerSpec& child : spec.children) Flatten(child, out);
  } else {
    out->push_back(&spec);
  }
}

}  // namespace

absl::StatusOr<Normalizer> Normalizer::Create(const NormalizerSpec& spec) {
  std::vector<const NormalizerSpec*> flat;
  Flatten(spec, &flat);
  Normalizer n;
  for (const NormalizerSpec* s : flat) {
    Step step;
    step.type = s->type;
    step.content = s->content;
    if (s->type == NormalizerType::kReplace) {
      if (s->pattern.kind == TextPattern::Kind::kRegex) {
        CORTIQ_ASSIGN_OR_RETURN(Regex regex, Regex::Compile(s->pattern.text));
        step.regex.emplace(std::move(regex));
      } else {
        step.pattern = s->pattern.text;
      }
    }
    n.steps_.push_back(std::move(step));
  }
  return n;
}

absl::StatusOr<std::string> Normalizer::Apply(std::string_view text) const {
  std::string s(text);
  for (const Step& step : steps_) {
    switch (step.type) {
      case NormalizerType::kSequence:
        break;
      case NormalizerType::kReplace: {
        std::string out;
        if (step.regex) {
          size_t last = 0;
          CORTIQ_RETURN_IF_ERROR(step.regex->ForEachMatch(s, [&](size_t start, size_t end) {
            out.append(s, last, start - last);
            out += step.content;
            last = end;
          }));
          out.append(s, last, std::string::npos);
        } else {
          // An empty literal matches nothing (tokenizers' find_matches of "").
          if (step.pattern.empty()) break;
          out.reserve(s.size() + s.size() / 4);
          size_t last = 0;
          while (true) {
            const size_t at = s.find(step.pattern, last);
            if (at == std::string::npos) break;
            out.append(s, last, at - last);
            out += step.content;
            last = at + step.pattern.size();
          }
          out.append(s, last, std::string::npos);
        }
        s = std::move(out);
        break;
      }
      case NormalizerType::kPrepend:
        if (!s.empty()) s.insert(0, step.content);
        break;
      case NormalizerType::kNFC:
        s = Normalize(s, NormalForm::kNFC);
        break;
      case NormalizerType::kNFKC:
        s = Normalize(s, NormalForm::kNFKC);
        break;
      case NormalizerType::kNFD:
        s = Normalize(s, NormalForm::kNFD);
        break;
      case NormalizerType::kNFKD:
        s = Normalize(s, NormalForm::kNFKD);
        break;
    }
  }
  return s;
}

}  // namespace cortiq::text
