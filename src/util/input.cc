// Input side of io.h: plain files, stdin, memory, and transparent zstd decompression.
//
// OpenInput/OpenMemoryInput read the first four bytes and replay them, so detection works on
// pipes too. zstd input is recognized by the frame magic 28 B5 2F FD or a skippable frame's
// 5? 2A 4D 18 (pzstd writes one first), never by the file name; several concatenated frames
// (what `zstd a b > c` or pzstd write) decode as one stream.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "util/read_ahead.h"

namespace cg_inject {
namespace {

constexpr unsigned char kZstdMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};

/// Reads a file descriptor; owns it unless it is stdin.
class FdSource : public ByteSource {
 public:
  FdSource(int fd, bool owned, std::string display_name)
      : fd_(fd), owned_(owned), display_name_(std::move(display_name)) {}
  ~FdSource() override {
    if (owned_) close(fd_);
  }
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;

  size_t Read(char* buf, size_t size) override {
    for (;;) {
      ssize_t n = read(fd_, buf, size);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) ThrowSystemError("read", display_name_, errno);
    }
  }
  const std::string& display_name() const override { return display_name_; }

 private:
  int fd_;
  bool owned_;
  std::string display_name_;
};

/// Bytes owned by the caller.
class MemorySource : public ByteSource {
 public:
  MemorySource(std::string_view bytes, std::string display_name)
      : bytes_(bytes), display_name_(std::move(display_name)) {}
  size_t Read(char* buf, size_t size) override {
    size_t n = std::min(size, bytes_.size());
    std::memcpy(buf, bytes_.data(), n);
    bytes_.remove_prefix(n);
    return n;
  }
  const std::string& display_name() const override { return display_name_; }

 private:
  std::string_view bytes_;
  std::string display_name_;
};

/// Replays a few already-read bytes, then continues with the inner source.
class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(std::unique_ptr<ByteSource> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix)) {}
  size_t Read(char* buf, size_t size) override {
    if (pos_ < prefix_.size()) {
      size_t n = std::min(size, prefix_.size() - pos_);
      std::memcpy(buf, prefix_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return inner_->Read(buf, size);
  }
  const std::string& display_name() const override { return inner_->display_name(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string prefix_;
  size_t pos_ = 0;
};

/// Decompresses a zstd stream of one or more frames.
class ZstdSource : public ByteSource {
 public:
  explicit ZstdSource(std::unique_ptr<ByteSource> inner)
      : inner_(std::move(inner)), dctx_(ZSTD_createDCtx()), in_buf_(1 << 20) {
    if (dctx_ == nullptr) ThrowForFile(inner_->display_name(), "cannot allocate zstd context");
  }
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }
  ZstdSource(const ZstdSource&) = delete;
  ZstdSource& operator=(const ZstdSource&) = delete;

  size_t Read(char* buf, size_t size) override {
    ZSTD_outBuffer out{buf, size, 0};
    while (out.pos == 0) {
      if (in_.pos == in_.size) {
        if (eof_) {
          // ZSTD_decompressStream returns 0 exactly at a frame boundary.
          if (last_ret_ != 0)
            ThrowForFile(inner_->display_name(), "expected more zstd data, got end of file");
          return 0;
        }
        size_t n = inner_->Read(in_buf_.data(), in_buf_.size());
        if (n == 0) {
          eof_ = true;
          continue;
        }
        in_ = ZSTD_inBuffer{in_buf_.data(), n, 0};
      }
      size_t ret = ZSTD_decompressStream(dctx_, &out, &in_);
      if (ZSTD_isError(ret)) {
        ThrowForFile(inner_->display_name(),
                     std::string("zstd decompression failed: ") + ZSTD_getErrorName(ret));
      }
      last_ret_ = ret;
    }
    return out.pos;
  }
  const std::string& display_name() const override { return inner_->display_name(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  ZSTD_DCtx* dctx_;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  bool eof_ = false;
  size_t last_ret_ = 0;
};

/// Peeks at the first bytes of `raw` and wraps it in a decompressor when they are zstd magic.
std::unique_ptr<ByteSource> DetectCompression(std::unique_ptr<ByteSource> raw) {
  std::string prefix(4, '\0');
  size_t have = 0;
  while (have < prefix.size()) {
    size_t n = raw->Read(prefix.data() + have, prefix.size() - have);
    if (n == 0) break;
    have += n;
  }
  prefix.resize(have);
  bool zstd = StartsWithZstdFrame(prefix);
  auto replay = std::make_unique<PrefixedSource>(std::move(raw), std::move(prefix));
  if (zstd) return ReadAhead(std::make_unique<ZstdSource>(std::move(replay)));
  return replay;
}

}  // namespace

bool StartsWithZstdFrame(std::string_view bytes) {
  if (bytes.size() < 4) return false;
  if (std::memcmp(bytes.data(), kZstdMagic, 4) == 0) return true;
  // A skippable frame (magic 0x184D2A50..5F, little-endian) holds no data; pzstd starts its
  // output with one, and libzstd's stream decoder steps over it.
  return (static_cast<unsigned char>(bytes[0]) & 0xF0) == 0x50 &&
         bytes.substr(1, 3) == "\x2A\x4D\x18";
}

std::unique_ptr<ByteSource> PrependBytes(std::string prefix, std::unique_ptr<ByteSource> rest) {
  return std::make_unique<PrefixedSource>(std::move(rest), std::move(prefix));
}

std::unique_ptr<ByteSource> OpenInput(const std::string& path) {
  if (path == "-") return DetectCompression(std::make_unique<FdSource>(0, false, "<stdin>"));
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) ThrowSystemError("open", path, errno);
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    ThrowSystemError("read", path, EISDIR);
  }
#ifdef POSIX_FADV_SEQUENTIAL
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  return DetectCompression(std::make_unique<FdSource>(fd, true, path));
}

std::unique_ptr<ByteSource> OpenMemoryInput(std::string_view bytes, std::string display_name) {
  return DetectCompression(std::make_unique<MemorySource>(bytes, std::move(display_name)));
}

std::string ReadWholeFile(const std::string& path) {
  // Raw bytes: binary formats (jitdump) are never decompressed.
  std::unique_ptr<ByteSource> source;
  if (path == "-") {
    source = std::make_unique<FdSource>(0, false, "<stdin>");
  } else {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) ThrowSystemError("open", path, errno);
    source = std::make_unique<FdSource>(fd, true, path);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) ThrowSystemError("read", path, EISDIR);
  }
  return ReadAll(*source);
}

std::string ReadAll(ByteSource& source) {
  std::string data;
  size_t chunk = 1 << 16;
  for (;;) {
    size_t old = data.size();
    data.resize(old + chunk);
    size_t n = source.Read(data.data() + old, chunk);
    data.resize(old + n);
    if (n == 0) break;
    if (chunk < (1 << 24)) chunk *= 2;
  }
  return data;
}

}  // namespace cg_inject
