// Split and Metaspace pre-tokenization with the semantics of tokenizers'
// NormalizedString::split (normalizer.rs) and Pattern::find_matches (pattern.rs).
#include "runtime/text/pre_tokenizer.h"

#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

void Flatten(const PreTokenizerSpec& spec, std::vector<const PreTokenizerSpec*>* out) {
  if (spec.type == PreTokenizerType::kSequence) {
    for (const PreTokenizerSpec& child : spec.children) Flatten(child, out);
  } else {
    out->push_back(&spec);
  }
}

struct Span {
  size_t start;
  size_t end;
  bool flag;  // find_matches: is a match; after the behavior: to be removed.
};

// tokenizers SplitDelimiterBehavior applied to find_matches' output (normalizer.rs `split`).
std::vector<Span> ApplyBehavior(std::vector<Span> matches, SplitBehavior behavior) {
  std::vector<Span> out;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (Span& m : matches) m.flag = false;
      return matches;
    case SplitBehavior::kRemoved:
      return matches;
    case SplitBehavior::kContiguous: {
      bool previous = false;
      for (const Span& m : matches) {
        if (m.flag == previous && !out.empty()) {
          out.back().end = m.end;
        } else {
          out.push_back({m.start, m.end, false});
        }
        previous = m.flag;
      }
      return out;
    }
    case SplitBehavior::kMergedWithPrevious: {
      bool previous = false;
      for (const Span& m : matches) {
        if (m.flag && !previous && !out.empty()) {
          out.back().end = m.end;
        } else {
          out.push_back({m.start, m.end, false});
        }
        previous = m.flag;
      }
      return out;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous = false;
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        if (it->flag && !previous && !out.empty()) {
          out.back().start = it->start;
        } else {
          out.push_back({it->start, it->end, false});
        }
        previous = it->flag;
      }
      return std::vector<Span>(out.rbegin(), out.rend());
    }
  }
  return matches;
}

}  // namespace

absl::StatusOr<PreTokenizer> PreTokenizer::Create(const PreTokenizerSpec& spec) {
  std::vector<const PreTokenizerSpec*> flat;
  Flatten(spec, &flat);
  PreTokenizer p;
  for (const PreTokenizerSpec* s : flat) {
    Step step;
    step.type = s->type;
    step.behavior = s->behavior;
    step.invert = s->invert;
    step.replacement = s->replacement;
    step.prepend_scheme = s->prepend_scheme;
    step.split = s->split;
    if (s->type == PreTokenizerType::kSplit) {
      if (s->pattern.kind == TextPattern::Kind::kRegex) {
        CORTIQ_ASSIGN_OR_RETURN(Regex regex, Regex::Compile(s->pattern.text));
        step.regex.emplace(std::move(regex));
      } else {
        step.literal = s->pattern.text;
      }
    } else if (s->type == PreTokenizerType::kMetaspace) {
      size_t i = 0;
      if (s->replacement.empty() || FindInvalidUtf8(s->replacement) != std::string::npos ||
          (DecodeUtf8(s->replacement, &i), i != s->replacement.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Metaspace replacement \"", s->replacement, "\" must be exactly one character"));
      }
    }
    p.steps_.push_back(std::move(step));
  }
  return p;
}

absl::Status PreTokenizer::ApplyStep(const Step& step, const PreToken& in,
                                     std::vector<PreToken>* out) const {
  const std::string& s = in.text;
  if (step.type == PreTokenizerType::kMetaspace) {
    PreToken t;
    t.at_start = in.at_start;
    t.text.reserve(s.size() + 3);
    for (const char c : s) {
      if (c == ' ') {
        t.text += step.replacement;
      } else {
        t.text.push_back(c);
      }
    }
    const bool starts = t.text.compare(0, step.replacement.size(), step.replacement) == 0;
    if (!starts && (step.prepend_scheme == PrependScheme::kAlways ||
                    (step.prepend_scheme == PrependScheme::kFirst && in.at_start))) {
      t.text.insert(0, step.replacement);
    }
    if (!step.split) {
      if (!t.text.empty()) out->push_back(std::move(t));
      return absl::OkStatus();
    }
    // Split on the replacement, MergedWithNext.
    std::vector<Span> matches;
    size_t last = 0;
    size_t at;
    while ((at = t.text.find(step.replacement, last)) != std::string::npos) {
      if (at != last) matches.push_back({last, at, false});
      matches.push_back({at, at + step.replacement.size(), true});
      last = at + step.replacement.size();
    }
    if (last != t.text.size()) matches.push_back({last, t.text.size(), false});
    for (const Span& span : ApplyBehavior(std::move(matches), SplitBehavior::kMergedWithNext)) {
      if (span.end > span.start) {
        out->push_back({t.text.substr(span.start, span.end - span.start),
                        t.at_start && span.start == 0});
      }
    }
    return absl::OkStatus();
  }

  // Split: find_matches covers the whole text with (span, is_match).
  std::vector<Span> matches;
  size_t last = 0;
  const auto add_match = [&](size_t start, size_t end) {
    if (last != start) matches.push_back({last, start, false});
    matches.push_back({start, end, true});
    last = end;
  };
  if (step.regex) {
    CORTIQ_RETURN_IF_ERROR(step.regex->ForEachMatch(s, add_match));
  } else if (!step.literal.empty()) {
    size_t at;
    size_t from = 0;
    while ((at = s.find(step.literal, from)) != std::string::npos) {
      add_match(at, at + step.literal.size());
      from = at + step.literal.size();
    }
  }
  if (last != s.size()) matches.push_back({last, s.size(), false});
  if (step.invert) {
    for (Span& m : matches) m.flag = !m.flag;
  }
  for (const Span& span : ApplyBehavior(std::move(matches), step.behavior)) {
    if (!span.flag && span.end > span.start) {
      out->push_back({s.substr(span.start, span.end - span.start), in.at_start && span.start == 0});
    }
  }
  return absl::OkStatus();
}

absl::Status PreTokenizer::Apply(std::vector<PreToken>* pieces) const {
  for (const Step& step : steps_) {
    std::vector<PreToken> next;
    next.reserve(pieces->size());
    for (const PreToken& piece : *pieces) CORTIQ_RETURN_IF_ERROR(ApplyStep(step, piece, &next));
    *pieces = std::move(next);
  }
  return absl::OkStatus();
}

}  // namespace cortiq::text
