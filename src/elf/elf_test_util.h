// Test helpers that turn a valid ELF file into a hostile one the way issue 36's files were made:
// section headers describing one table again and again.
#pragma once

#include <cstdint>
#include <string>

namespace cg_inject {

/// Little-endian field of `size` bytes at `at`.
inline uint64_t GetLittle(const std::string& bytes, uint64_t at, uint64_t size) {
  uint64_t v = 0;
  for (uint64_t i = 0; i < size; ++i) v |= uint64_t(uint8_t(bytes[at + i])) << (8 * i);
  return v;
}
inline void PutLittle(std::string* bytes, uint64_t at, uint64_t size, uint64_t v) {
  for (uint64_t i = 0; i < size; ++i) (*bytes)[at + i] = char(v >> (8 * i));
}

/// `bytes` (an ELF file of class 64 when `is_64`, else 32) with `copies` more section headers
/// describing section `index`'s bytes again, in a new header table at the end of the file.
inline std::string RepeatSection(std::string bytes, bool is_64, int index, int copies) {
  const uint64_t w = is_64 ? 8 : 4, entry = is_64 ? 64 : 40;
  const uint64_t shoff = GetLittle(bytes, 24 + 2 * w, w);
  const uint64_t shnum = GetLittle(bytes, 24 + 3 * w + 12, 2);
  const std::string table = bytes.substr(shoff, shnum * entry);
  const std::string repeated = table.substr(uint64_t(index) * entry, entry);
  PutLittle(&bytes, 24 + 2 * w, w, bytes.size());
  PutLittle(&bytes, 24 + 3 * w + 12, 2, shnum + uint64_t(copies));
  bytes += table;
  for (int i = 0; i < copies; ++i) bytes += repeated;
  return bytes;
}

/// The index of the first section of `type` in an ELF64 file, or -1.
inline int FindSection64(const std::string& bytes, uint32_t type) {
  const uint64_t shoff = GetLittle(bytes, 40, 8), shnum = GetLittle(bytes, 60, 2);
  for (uint64_t i = 0; i < shnum; ++i) {
    if (GetLittle(bytes, shoff + i * 64 + 4, 4) == type) return int(i);
  }
  return -1;
}

}  // namespace cg_inject
