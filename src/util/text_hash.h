// The hash of name texts for the name tables of the reader, the injector and the writer. Each
// new name is hashed once on sight and again each time its table doubles; std::hash (libstdc++'s
// out-of-line Murmur, 8 bytes per step) was 6% of a run's instructions (callgrind, 10 MB profile
// with a perf map), for names of 40-120 bytes. This one is inlined, reads 16 bytes per step and
// folds each pair of words with one 64x64->128-bit multiply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace cg_inject {

namespace text_hash_internal {

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
__extension__ typedef unsigned __int128 Uint128;  // GCC and Clang, on 64-bit targets
// The high and low halves of the full product, xored: every input bit moves many output bits.
inline uint64_t Fold(uint64_t a, uint64_t b) {
  Uint128 product = static_cast<Uint128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}
// Odd constants with mixed bits, so that no word is multiplied by a value with few bits set.
inline constexpr uint64_t kK0 = 0xa0761d6478bd642full;
inline constexpr uint64_t kK1 = 0xe7037ed1a0b428dbull;
inline constexpr uint64_t kK2 = 0x8ebc6af09c88c6e3ull;

}  // namespace text_hash_internal

/// A 64-bit hash of `text`, for hash tables: not stable across versions (not for storage), and,
/// like std::hash, not built to resist texts crafted to collide.
inline uint64_t HashText(std::string_view text) {
  using namespace text_hash_internal;
  const char* p = text.data();
  size_t n = text.size();
  uint64_t h = kK0 ^ Fold(n ^ kK1, kK2);
  for (; n > 16; n -= 16, p += 16) h = Fold(Load64(p) ^ kK1, Load64(p + 8) ^ h);
  // The last 1-16 bytes, read as two possibly overlapping words (the length is in h).
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = Load64(p);
    b = Load64(p + n - 8);
  } else if (n >= 4) {
    a = Load32(p);
    b = Load32(p + n - 4);
  } else if (n > 0) {
    a = (uint64_t{static_cast<uint8_t>(p[0])} << 16) |
        (uint64_t{static_cast<uint8_t>(p[n / 2])} << 8) | static_cast<uint8_t>(p[n - 1]);
  }
  return Fold(a ^ kK1 ^ h, b ^ kK2) ^ h;
}

/// HashText as a hash functor.
struct TextHash {
  size_t operator()(std::string_view text) const { return static_cast<size_t>(HashText(text)); }
};

}  // namespace cg_inject
