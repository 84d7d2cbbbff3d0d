// The injector's own name space. Every name it forwards (the reader's and the ones it makes) is
// interned here by text, so ids stay unique per text downstream even though new names appear.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cg_inject/profile.h"
#include "util/arena.h"
#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"
#include "util/text_hash.h"

namespace cg_inject {

/// Interns names by text. Ids start at 1 (0 = no name) and are dense.
class NameTable {
 public:
  NameTable() { Push({}); }
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;
  /// The name for `text`; copies the text on first sight. The returned view lives as long as the
  /// table.
  Name Intern(std::string_view text);
  /// Maps a name of the upstream reader to this table. Upstream ids are cached, so only the first
  /// sight of each upstream name hashes its text. Id 0 maps to id 0. The text is not copied:
  /// `upstream.text` must live as long as this table (the reader's names do).
  Name Map(Name upstream);
  /// Text of an id from this table.
  std::string_view Text(uint32_t id) const { return {text_data_[id], text_sizes_[id]}; }
  size_t size() const { return text_data_.size(); }

 private:
  Name Add(std::string_view stored);
  uint32_t InternUpstream(std::string_view text);

  // Never moves what it holds, so views into it stay valid; no heap block per name.
  Arena storage_;
  // Id -> text as a pointer and a 32-bit size (12 bytes, not a 16-byte view), and text -> id
  // through the ids (a 4-byte slot): a profile may name millions of functions. In chunks:
  // growing never holds two copies. [0]: the empty name (NameTable()).
  void Push(std::string_view text);
  static std::string_view TextAt(const NameTable& t, uint32_t id) { return t.Text(id); }
  ChunkedVector<const char*> text_data_;
  ChunkedVector<uint32_t> text_sizes_;
  KeyIndex<std::string_view, TextHash, NameTable, TextAt> ids_{this};
  ChunkedVector<uint32_t> upstream_;                 // upstream id -> our id (0 = not seen yet)
  FlatHashMap<uint32_t, uint32_t> upstream_sparse_;  // for very large upstream ids
};

}  // namespace cg_inject
