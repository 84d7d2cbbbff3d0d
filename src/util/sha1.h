// SHA-1 (FIPS 180-4), for the JIT images' build ids (what `ld --build-id=sha1` and `sha1sum`
// compute). Our own rather than libcrypto's: loading libcrypto.so.3 alone kept about 3.4 MB
// resident in every run, for this one digest. Not for security: only an id that tools compare.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cg_inject {

/// Compresses `block_count` 64-byte blocks starting at `data` into the five-word `state`.
using Sha1BlockFunction = void (*)(uint32_t* state, const unsigned char* data, size_t block_count);

/// The portable block function (plain C++; any CPU).
void Sha1BlocksPortable(uint32_t* state, const unsigned char* data, size_t block_count);

/// The block function using x86's SHA extensions, or null when this CPU (or build) lacks them.
Sha1BlockFunction Sha1BlocksShaNiIfSupported();

/// A streaming SHA-1: Update with the message's pieces in order, then Final.
class Sha1 {
 public:
  static constexpr size_t kDigestSize = 20;
  using Digest = std::array<uint8_t, kDigestSize>;

  /// Uses the fastest block function this CPU supports.
  Sha1();
  /// Uses `blocks` (tests run each implementation on the same inputs).
  explicit Sha1(Sha1BlockFunction blocks) : blocks_(blocks) {}

  /// Appends `bytes` to the message. Whole blocks are hashed straight from `bytes`; only a
  /// partial block is copied.
  void Update(std::string_view bytes);
  /// The digest of the message so far, in the byte order `sha1sum` prints. Starts a new message.
  Digest Final();

 private:
  static constexpr size_t kBlockSize = 64;
  static constexpr std::array<uint32_t, 5> kInitialState = {0x67452301, 0xefcdab89, 0x98badcfe,
                                                            0x10325476, 0xc3d2e1f0};

  Sha1BlockFunction blocks_;
  std::array<uint32_t, 5> state_ = kInitialState;
  uint64_t message_size_ = 0;                      // bytes
  std::array<unsigned char, kBlockSize> pending_;  // the partial block not hashed yet
  size_t pending_size_ = 0;
};

}  // namespace cg_inject
