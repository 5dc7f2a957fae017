// TextCursor: a position in a text being parsed, with the scanning steps the feed JSON
// parser and the .npy header parser share.
#ifndef DFLOW_TOOLS_TEXT_CURSOR_H_
#define DFLOW_TOOLS_TEXT_CURSOR_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace dflow {

class TextCursor {
 protected:
  // `text` must outlive the cursor.
  explicit TextCursor(absl::string_view text) : text_(text) {}

  // Skips JSON whitespace (space, tab, newline, carriage return).
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  // Consumes `c` if it is next.
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // Consumes `word` if it comes next.
  bool ConsumeWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace dflow

#endif  // DFLOW_TOOLS_TEXT_CURSOR_H_
