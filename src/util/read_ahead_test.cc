#include "util/read_ahead.h"

#include <string>

#include <gtest/gtest.h>

#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

/// Yields `data` in reads of at most `chunk` bytes, then throws if `fail` is set.
class ChunkedSource : public ByteSource {
 public:
  ChunkedSource(std::string data, size_t chunk, bool fail)
      : data_(std::move(data)), chunk_(chunk), fail_(fail) {}
  size_t Read(char* buf, size_t size) override {
    size_t n = std::min({size, chunk_, data_.size() - pos_});
    if (n == 0 && fail_) ThrowForFile(name_, "expected more zstd data, got end of file");
    data_.copy(buf, n, pos_);
    pos_ += n;
    return n;
  }
  const std::string& display_name() const override { return name_; }

 private:
  std::string data_;
  size_t chunk_, pos_ = 0;
  bool fail_;
  std::string name_ = "in.zst";
};

std::string Pattern(size_t size) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = char('a' + (i * 7919) % 26);
  return s;
}

TEST(ReadAheadTest, SameBytesInTheSameOrder) {
  std::string data = Pattern((size_t{9} << 20) + 12345);  // more blocks than the ring holds
  auto source = ReadAhead(std::make_unique<ChunkedSource>(data, 300000, false));
  EXPECT_EQ(source->display_name(), "in.zst");
  EXPECT_EQ(ReadAll(*source), data);
  char c;
  EXPECT_EQ(source->Read(&c, 1), 0u);
}

TEST(ReadAheadTest, ErrorArrivesAfterTheBytesBeforeIt) {
  std::string data = Pattern(5000000);
  auto source = ReadAhead(std::make_unique<ChunkedSource>(data, 1 << 20, true));
  std::string got(data.size(), '\0');
  size_t have = 0;
  while (have < data.size()) have += source->Read(got.data() + have, data.size() - have);
  EXPECT_EQ(got, data);
  char c;
  try {
    source->Read(&c, 1);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "in.zst: expected more zstd data, got end of file");
  }
}

TEST(ReadAheadTest, StoppingEarlyDoesNotHang) {
  auto source = ReadAhead(std::make_unique<ChunkedSource>(Pattern(20 << 20), 1 << 20, false));
  char buf[10];
  EXPECT_EQ(source->Read(buf, sizeof buf), sizeof buf);
  source.reset();  // the producer waits for room; destruction must wake and join it
}

TEST(ReadAheadTest, ZstdInputIsReadAhead) {
  // Through OpenMemoryInput: compressed data decodes the same whatever the thread does.
  std::string plain = Pattern(3 << 20);
  StringSink compressed;
  auto zstd = MakeZstdSink(&compressed);
  zstd->Write(plain);
  zstd->Finish();
  auto in = OpenMemoryInput(compressed.data(), "mem.zst");
  EXPECT_EQ(ReadAll(*in), plain);
}

}  // namespace
}  // namespace cg_inject
