// A token's piece as a person reads it on a terminal: the UTF-8 text itself ("▁quick", "日本"),
// with only what would break the line or the terminal escaped.
#ifndef CORTIQ_TOOLS_COMMON_PRINTABLE_PIECE_H_
#define CORTIQ_TOOLS_COMMON_PRINTABLE_PIECE_H_

#include <string>
#include <string_view>

namespace cortiq {

// `piece` with well-formed UTF-8 sequences kept as they are; '\n', '\t', '\r' and '\\' written
// as those two-character escapes; other C0 controls, DEL and every byte that does not belong
// to a well-formed UTF-8 sequence (a piece may hold part of a character) as "\xNN".
std::string PrintablePiece(std::string_view piece);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_PRINTABLE_PIECE_H_
