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
  std::string_view Text(uint32_t id) const {
    const StoredText& stored = texts_[id];
    return {stored.data, stored.size};
  }
  size_t size() const { return texts_.size(); }

 private:
  Name Add(std::string_view stored);
  uint32_t InternUpstream(std::string_view text);

  // Never moves what it holds, so views into it stay valid; no heap block per name.
  Arena storage_;
  // Id -> text as a pointer and a 32-bit size in one entry packed to 12 bytes (a 16-byte view
  // would be 4 MB more at a million names; two arrays made each Text two cache misses, and the
  // injector asks for the text of every function it writes), and text -> id through the ids (a
  // 4-byte slot): a profile may name millions of functions. In chunks: growing never holds two
  // copies. [0]: the empty name (NameTable()).
  struct [[gnu::packed, gnu::aligned(4)]] StoredText {
    const char* data;
    uint32_t size;
  };
  static_assert(sizeof(StoredText) == 12);
  void Push(std::string_view text);
  static std::string_view TextAt(const NameTable& t, uint32_t id) { return t.Text(id); }
  ChunkedVector<StoredText> texts_;
  KeyIndex<std::string_view, TextHash, NameTable, TextAt> ids_{this};
  ChunkedVector<uint32_t> upstream_;                 // upstream id -> our id (0 = not seen yet)
  FlatHashMap<uint32_t, uint32_t> upstream_sparse_;  // for very large upstream ids
};

}  // namespace cg_inject
