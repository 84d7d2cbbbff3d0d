// Each SHA-1 implementation (portable, and the SHA extensions' when this CPU has them) against
// the standard's test vectors and against `sha1sum` on random messages fed in random pieces.
#include "util/sha1.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "util/test_shell.h"

namespace cg_inject {
namespace {

std::string Hex(const Sha1::Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

std::string RandomBytes(std::mt19937_64& random, size_t size) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

/// The test runs once per implementation; one the CPU lacks is skipped.
class Sha1Test : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (std::string_view(GetParam()) == "sha_ni") {
      blocks_ = Sha1BlocksShaNiIfSupported();
      if (!blocks_) GTEST_SKIP() << "this CPU has no SHA extensions";
    } else {
      blocks_ = Sha1BlocksPortable;
    }
  }

  std::string HexOf(std::string_view message) {
    Sha1 sha(blocks_);
    sha.Update(message);
    return Hex(sha.Final());
  }

  Sha1BlockFunction blocks_ = nullptr;
};

// FIPS 180-2 appendix A (and RFC 3174's test cases): one block, two blocks (the 448-bit message
// leaves no room for the length in its first block), and a million bytes.
TEST_P(Sha1Test, StandardTestVectors) {
  EXPECT_EQ(HexOf("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(HexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(HexOf(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST_P(Sha1Test, EmptyMessage) {
  EXPECT_EQ(HexOf(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  Sha1 sha(blocks_);
  sha.Update("");
  sha.Update(std::string_view());
  EXPECT_EQ(Hex(sha.Final()), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

// Final starts a new message: a second message hashes as if alone.
TEST_P(Sha1Test, FinalStartsANewMessage) {
  Sha1 sha(blocks_);
  sha.Update(std::string(100, 'x'));
  sha.Final();
  sha.Update("abc");
  EXPECT_EQ(Hex(sha.Final()), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

// Every length from 0 to 300 (each place the padding and the length can fall in a block, over
// five blocks), random bytes at odd addresses, fed in random pieces (empty ones too), against
// sha1sum of the same bytes.
TEST_P(Sha1Test, RandomMessagesInRandomPiecesMatchSha1sum) {
  char dir_template[] = "/tmp/cg-inject-sha1-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() { std::filesystem::remove_all(dir); }
  } remove_dir{dir};

  std::mt19937_64 random(35);
  std::vector<std::string> ours;
  std::string command = "cd " + dir + " && sha1sum";
  for (size_t size = 0; size <= 300; ++size) {
    const size_t offset = random() % 8;
    const std::string buffer = RandomBytes(random, offset + size);
    const std::string_view message = std::string_view(buffer).substr(offset);
    const std::string name = std::to_string(size);
    std::ofstream(dir + "/" + name, std::ios::binary) << message;
    command += " " + name;

    Sha1 sha(blocks_);
    for (size_t at = 0; at < message.size();) {
      const size_t piece = std::min<size_t>(random() % 150, message.size() - at);
      sha.Update(message.substr(at, piece));
      at += piece;
    }
    ours.push_back(Hex(sha.Final()) + "  " + name + "\n");
  }
  std::string expected;
  for (const std::string& line : ours) expected += line;
  EXPECT_EQ(ShellOutput(command), expected);
}

INSTANTIATE_TEST_SUITE_P(Implementations, Sha1Test, ::testing::Values("portable", "sha_ni"),
                         [](const auto& info) { return std::string(info.param); });

// The two block functions agree on random states and runs of up to 40 blocks (the SHA
// extensions' path is where the build id goes on this machine, the portable one elsewhere).
TEST(Sha1BlocksTest, ShaExtensionsAgreeWithPortable) {
  const Sha1BlockFunction sha_ni = Sha1BlocksShaNiIfSupported();
  if (!sha_ni) GTEST_SKIP() << "this CPU has no SHA extensions";
  std::mt19937_64 random(180);
  for (int trial = 0; trial < 500; ++trial) {
    const size_t block_count = random() % 41;
    const std::string data = RandomBytes(random, block_count * 64 + 1);  // hashed from its 2nd byte
    uint32_t portable_state[5], sha_ni_state[5];
    for (int i = 0; i < 5; ++i)
      portable_state[i] = sha_ni_state[i] = static_cast<uint32_t>(random());
    const auto* bytes = reinterpret_cast<const unsigned char*>(data.data()) + 1;
    Sha1BlocksPortable(portable_state, bytes, block_count);
    sha_ni(sha_ni_state, bytes, block_count);
    for (int i = 0; i < 5; ++i)
      ASSERT_EQ(portable_state[i], sha_ni_state[i]) << "trial " << trial << ", word " << i;
  }
}

}  // namespace
}  // namespace cg_inject
