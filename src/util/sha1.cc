// SHA-1 as FIPS 180-4 section 6.1 defines it: the message padded with one 1 bit, zeros, and its
// length in bits as a 64-bit big-endian number to a multiple of 64 bytes, each block compressed
// into five 32-bit words by 80 rounds. Two block functions: a portable one, and one using x86's
// SHA extensions (sha1rnds4 does four rounds, sha1msg1/sha1msg2 the message schedule), chosen
// once at run time by CPUID.
#include "util/sha1.h"

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace cg_inject {
namespace {

inline uint32_t LoadBigEndian32(const unsigned char* p) {
  uint32_t word;
  std::memcpy(&word, p, sizeof word);
  if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap32(word);
  return word;
}

inline void StoreBigEndian32(uint32_t word, unsigned char* p) {
  if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap32(word);
  std::memcpy(p, &word, sizeof word);
}

// The round functions of FIPS 180-4 4.1.1, in forms with one operation fewer.
inline uint32_t Choose(uint32_t x, uint32_t y, uint32_t z) { return z ^ (x & (y ^ z)); }
inline uint32_t Parity(uint32_t x, uint32_t y, uint32_t z) { return x ^ y ^ z; }
inline uint32_t Majority(uint32_t x, uint32_t y, uint32_t z) { return (x & y) | (z & (x | y)); }

constexpr uint32_t kK0 = 0x5a827999, kK1 = 0x6ed9eba1, kK2 = 0x8f1bbcdc, kK3 = 0xca62c1d6;

// One round, without moving the five words: the new `a` lands in `e`, and `b` becomes rotl(b,
// 30). The caller names the words in turn (a b c d e, then e a b c d, ...), so five calls bring
// the names back where they started and no word is copied.
[[gnu::always_inline]] inline void Round(uint32_t a, uint32_t& b, uint32_t& e, uint32_t f,
                                         uint32_t k, uint32_t w) {
  e += std::rotl(a, 5) + f + k + w;
  b = std::rotl(b, 30);
}

}  // namespace

void Sha1BlocksPortable(uint32_t* state, const unsigned char* data, size_t block_count) {
  for (; block_count > 0; --block_count, data += 64) {
    // The schedule's last 16 words: W[t] for t >= 16 needs only W[t-3], W[t-8], W[t-14], W[t-16].
    uint32_t w[16];
    for (int t = 0; t < 16; ++t) w[t] = LoadBigEndian32(data + 4 * t);
    auto schedule = [&w](int t) {
      if (t < 16) return w[t];
      uint32_t& slot = w[t & 15];
      slot = std::rotl(w[(t + 13) & 15] ^ w[(t + 8) & 15] ^ w[(t + 2) & 15] ^ slot, 1);
      return slot;
    };
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
#pragma GCC unroll 4
    for (int t = 0; t < 20; t += 5) {
      Round(a, b, e, Choose(b, c, d), kK0, schedule(t));
      Round(e, a, d, Choose(a, b, c), kK0, schedule(t + 1));
      Round(d, e, c, Choose(e, a, b), kK0, schedule(t + 2));
      Round(c, d, b, Choose(d, e, a), kK0, schedule(t + 3));
      Round(b, c, a, Choose(c, d, e), kK0, schedule(t + 4));
    }
#pragma GCC unroll 4
    for (int t = 20; t < 40; t += 5) {
      Round(a, b, e, Parity(b, c, d), kK1, schedule(t));
      Round(e, a, d, Parity(a, b, c), kK1, schedule(t + 1));
      Round(d, e, c, Parity(e, a, b), kK1, schedule(t + 2));
      Round(c, d, b, Parity(d, e, a), kK1, schedule(t + 3));
      Round(b, c, a, Parity(c, d, e), kK1, schedule(t + 4));
    }
#pragma GCC unroll 4
    for (int t = 40; t < 60; t += 5) {
      Round(a, b, e, Majority(b, c, d), kK2, schedule(t));
      Round(e, a, d, Majority(a, b, c), kK2, schedule(t + 1));
      Round(d, e, c, Majority(e, a, b), kK2, schedule(t + 2));
      Round(c, d, b, Majority(d, e, a), kK2, schedule(t + 3));
      Round(b, c, a, Majority(c, d, e), kK2, schedule(t + 4));
    }
#pragma GCC unroll 4
    for (int t = 60; t < 80; t += 5) {
      Round(a, b, e, Parity(b, c, d), kK3, schedule(t));
      Round(e, a, d, Parity(a, b, c), kK3, schedule(t + 1));
      Round(d, e, c, Parity(e, a, b), kK3, schedule(t + 2));
      Round(c, d, b, Parity(d, e, a), kK3, schedule(t + 3));
      Round(b, c, a, Parity(c, d, e), kK3, schedule(t + 4));
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
  }
}

#if defined(__x86_64__)
namespace {

// The SHA extensions keep a, b, c, d in one register (a in the top lane) and e apart (its top
// lane); the message words go in big-endian, first word in the top lane.
#define CG_INJECT_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// Four rounds of group `group` (0-19): its round function and constant are fixed per 20 rounds,
// and sha1rnds4 takes that choice as an immediate.
CG_INJECT_SHA_TARGET inline __m128i FourRounds(__m128i abcd, __m128i e_plus_w, int group) {
  switch (group / 5) {
    case 0:
      return _mm_sha1rnds4_epu32(abcd, e_plus_w, 0);
    case 1:
      return _mm_sha1rnds4_epu32(abcd, e_plus_w, 1);
    case 2:
      return _mm_sha1rnds4_epu32(abcd, e_plus_w, 2);
    default:
      return _mm_sha1rnds4_epu32(abcd, e_plus_w, 3);
  }
}

CG_INJECT_SHA_TARGET void Sha1BlocksShaNi(uint32_t* state, const unsigned char* data,
                                          size_t block_count) {
  // Reverses the 16 bytes: each word becomes big-endian and the first word goes to the top lane.
  const __m128i kReverseBytes = _mm_set_epi64x(0x0001020304050607, 0x08090a0b0c0d0e0f);
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0x1b);
  __m128i e = _mm_set_epi32(static_cast<int>(state[4]), 0, 0, 0);
  for (; block_count > 0; --block_count, data += 64) {
    const __m128i abcd_before = abcd;
    const __m128i e_before = e;
    // w[g & 3] holds the schedule's words 4g..4g+3, the last 16 words kept as in the portable code.
    __m128i w[4];
    for (int i = 0; i < 4; ++i) {
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                              kReverseBytes);
    }
    __m128i abcd_earlier = abcd;  // before the previous four rounds: their e is rotl(its a, 30)
    abcd = FourRounds(abcd, _mm_add_epi32(e, w[0]), 0);
#pragma GCC unroll 19
    for (int g = 1; g < 20; ++g) {
      if (g >= 4) {
        // W[t] = rotl(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16], 1) for four t at once: msg1 xors the
        // t-16 and t-14 words, msg2 adds the t-3 words (three of them computed here) and rotates.
        const __m128i partial =
            _mm_xor_si128(_mm_sha1msg1_epu32(w[g & 3], w[(g + 1) & 3]), w[(g + 2) & 3]);
        w[g & 3] = _mm_sha1msg2_epu32(partial, w[(g + 3) & 3]);
      }
      const __m128i e_plus_w = _mm_sha1nexte_epu32(abcd_earlier, w[g & 3]);
      abcd_earlier = abcd;
      abcd = FourRounds(abcd, e_plus_w, g);
    }
    e = _mm_sha1nexte_epu32(abcd_earlier, e_before);
    abcd = _mm_add_epi32(abcd, abcd_before);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_shuffle_epi32(abcd, 0x1b));
  state[4] = static_cast<uint32_t>(_mm_extract_epi32(e, 3));
}

#undef CG_INJECT_SHA_TARGET

}  // namespace

// CPUID directly: Clang 14's __builtin_cpu_supports knows no "sha". The SHA extensions use the
// SSE registers, which every x86-64 system saves, so no check of the OS is needed.
Sha1BlockFunction Sha1BlocksShaNiIfSupported() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return nullptr;
  const bool ssse3 = ecx & bit_SSSE3, sse4_1 = ecx & bit_SSE4_1;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return nullptr;
  const bool sha = ebx & bit_SHA;
  return ssse3 && sse4_1 && sha ? Sha1BlocksShaNi : nullptr;
}
#else
Sha1BlockFunction Sha1BlocksShaNiIfSupported() { return nullptr; }
#endif

Sha1::Sha1() {
  static const Sha1BlockFunction kFastest = [] {
    Sha1BlockFunction sha_ni = Sha1BlocksShaNiIfSupported();
    return sha_ni ? sha_ni : Sha1BlocksPortable;
  }();
  blocks_ = kFastest;
}

void Sha1::Update(std::string_view bytes) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t size = bytes.size();
  message_size_ += size;
  if (pending_size_ > 0) {
    const size_t taken = std::min(kBlockSize - pending_size_, size);
    std::memcpy(pending_.data() + pending_size_, data, taken);
    pending_size_ += taken;
    data += taken;
    size -= taken;
    if (pending_size_ < kBlockSize) return;
    blocks_(state_.data(), pending_.data(), 1);
    pending_size_ = 0;
  }
  const size_t whole_blocks = size / kBlockSize;
  if (whole_blocks > 0) {
    blocks_(state_.data(), data, whole_blocks);
    data += whole_blocks * kBlockSize;
    size -= whole_blocks * kBlockSize;
  }
  if (size > 0) std::memcpy(pending_.data(), data, size);
  pending_size_ = size;
}

Sha1::Digest Sha1::Final() {
  // The padding: 0x80, zeros, and the size in bits in the last 8 bytes of the last block; a
  // second block when fewer than 9 bytes are left in this one.
  unsigned char tail[2 * kBlockSize] = {};
  if (pending_size_ > 0) std::memcpy(tail, pending_.data(), pending_size_);
  tail[pending_size_] = 0x80;
  const size_t tail_size = pending_size_ + 1 + 8 <= kBlockSize ? kBlockSize : 2 * kBlockSize;
  const uint64_t bit_size = message_size_ * 8;
  StoreBigEndian32(static_cast<uint32_t>(bit_size >> 32), tail + tail_size - 8);
  StoreBigEndian32(static_cast<uint32_t>(bit_size), tail + tail_size - 4);
  blocks_(state_.data(), tail, tail_size / kBlockSize);

  Digest digest;
  for (size_t i = 0; i < state_.size(); ++i) StoreBigEndian32(state_[i], digest.data() + 4 * i);
  state_ = kInitialState;
  message_size_ = 0;
  pending_size_ = 0;
  return digest;
}

}  // namespace cg_inject
