// Loading symbol sources: opens each file, recognizes its format and runs the matching reader,
// so the CLI only deals with a list of SourceSpecs and one SymbolIndex.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/discovery.h"

namespace cg_inject {

class Diagnostics;
class SymbolIndex;

/// What one file contributed, for the "using ..." lines on stderr.
struct LoadedSource {
  std::string path;
  SourceKind kind = SourceKind::kDetect;  // what the content turned out to be
  uint32_t source = 0;                    // index in SymbolIndex::sources()
  int64_t versions = 0;                   // code versions added
  std::string details;                    // e.g. "1740 loads, 16 line tables, 3 bad lines"
  std::vector<std::string> copies;        // other specs with the same content, not loaded
};

/// The file name without directories and without a .zst suffix: what `ob=` names code from `path`
/// ("jit-1234.dump").
std::string_view SourceObjectName(std::string_view path);

/// Loads `bytes` (the content of `path`) as `kind` into `index`. kDetect picks jitdump by its
/// magic and perf map otherwise. Throws InputError for unreadable content.
/// `done_with(n)`, when given, is called as the reader goes: it will not read bytes before
/// offset n again (a mapped file can drop them from memory, see MappedFile::Release).
LoadedSource LoadSymbolSourceBytes(std::string_view bytes, const std::string& path, SourceKind kind,
                                   SymbolIndex* index, Diagnostics* diagnostics,
                                   const std::function<void(size_t)>& done_with = {});

/// Maps every file (or reads it with a bound: pipes, stdin, zstd), in order, loads it, then calls
/// index->Finish(). Files with the same content (same file, or equal bytes) are loaded once, as the
/// last of them; the others are listed in its `copies` and `details`. Throws InputError for the
/// first file that cannot be read or parsed.
std::vector<LoadedSource> LoadSymbolSources(const std::vector<SourceSpec>& specs,
                                            SymbolIndex* index, Diagnostics* diagnostics);

}  // namespace cg_inject
