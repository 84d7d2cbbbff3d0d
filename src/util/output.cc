// Output side of io.h: atomic output files, the signal-time cleanup registry, zstd sinks.
//
// A target is never written in place: bytes go to a mkstemp() file in the target's directory
// (same file system, so rename() is atomic) and Commit() renames it over the target. Until
// then the temporary path sits in a small fixed registry that the SIGINT/SIGTERM handler can
// walk without allocating, so an interrupted run leaves no partial file behind. SIGKILL (or a
// power cut) cannot be caught: the temporary is then named `.TARGET.cg-inject-tmp.XXXXXX` so it
// can be recognized, and FindStaleTemporaries() reports such leftovers beside a target.
//
// Replacing keeps what the user set up: an existing target's permission bits are copied to the
// new file, and a symlink target is written through (its final target is replaced, the link
// stays). A directory as the target is refused before any work is done.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

// Flush threshold for AtomicOutputFile; large writes keep syscalls rare.
constexpr size_t kOutputBlock = 1 << 20;

// Pending temporary outputs. A slot is 0 (free), 1 (being filled) or 2 (ready); the signal
// handler only reads ready slots, so it never sees a half-copied path.
constexpr int kPendingSlots = 8;
char g_pending_paths[kPendingSlots][PATH_MAX];
std::atomic<int> g_pending_state[kPendingSlots];

int RegisterPending(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kPendingSlots; ++i) {
    int expected = 0;
    if (g_pending_state[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(g_pending_paths[i], path.c_str(), path.size() + 1);
      g_pending_state[i].store(2);
      return i;
    }
  }
  return -1;
}

void UnregisterPending(int slot) {
  if (slot >= 0) g_pending_state[slot].store(0);
}

void WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      ThrowSystemError("write", path, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

class ZstdSink : public ByteSink {
 public:
  static constexpr int kJobSize = 2 << 20;

  ZstdSink(ByteSink* inner, int level)
      : inner_(inner), cctx_(ZSTD_createCCtx()), out_buf_(ZSTD_CStreamOutSize()) {
    if (cctx_ == nullptr) ThrowForFile("zstd", "cannot allocate compression context");
    Check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level));
    // Compression on worker threads: ZSTD_compressStream2 then only hands blocks over, and the
    // pipeline keeps its own core. Measured on the 100 MB bench profile (2 cores): level 3 alone
    // took ~0.4 s of the run's critical path. A libzstd built without threads refuses the
    // parameter; it then compresses inline as before.
    // One worker less than the cores (the pipeline keeps one), at least one. 2 MiB jobs instead
    // of the default (4x the window) keep the buffers small: on the 100 MB bench profile peak
    // RSS went 45 MB plain -> 98 MB with default jobs -> 63 MB, at the same compressed size.
    unsigned cores = std::thread::hardware_concurrency();
    int workers = int(std::clamp(cores > 1 ? cores - 1 : 1u, 1u, 4u));
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_nbWorkers, workers);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_jobSize, kJobSize);
  }
  ~ZstdSink() override { ZSTD_freeCCtx(cctx_); }
  ZstdSink(const ZstdSink&) = delete;
  ZstdSink& operator=(const ZstdSink&) = delete;

  void Write(std::string_view bytes) override {
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out{out_buf_.data(), out_buf_.size(), 0};
      Check(ZSTD_compressStream2(cctx_, &out, &in, ZSTD_e_continue));
      if (out.pos > 0) inner_->Write(std::string_view(out_buf_.data(), out.pos));
    }
  }

  void Finish() override {
    if (finished_) return;
    ZSTD_inBuffer in{nullptr, 0, 0};
    size_t remaining;
    do {
      ZSTD_outBuffer out{out_buf_.data(), out_buf_.size(), 0};
      remaining = Check(ZSTD_compressStream2(cctx_, &out, &in, ZSTD_e_end));
      if (out.pos > 0) inner_->Write(std::string_view(out_buf_.data(), out.pos));
    } while (remaining != 0);
    finished_ = true;
    inner_->Finish();
  }

 private:
  static size_t Check(size_t ret) {
    if (ZSTD_isError(ret))
      ThrowForFile("zstd", std::string("compression failed: ") + ZSTD_getErrorName(ret));
    return ret;
  }

  ByteSink* inner_;
  ZSTD_CCtx* cctx_;
  std::vector<char> out_buf_;
  bool finished_ = false;
};

}  // namespace

namespace {

std::string DisplayPath(const std::string& path) { return path == "-" ? "<stdout>" : path; }

constexpr std::string_view kTempMarker = ".cg-inject-tmp.";

/// Follows symlinks at `path` (up to 40, like the kernel) to the path that will really be
/// replaced; a dangling link resolves to the file it names. Other paths are returned as is.
std::string ResolveSymlinks(const std::string& path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    std::string target(PATH_MAX, '\0');
    ssize_t n = readlink(current.c_str(), target.data(), target.size());
    if (n < 0) ThrowSystemError("read the symlink", current, errno);
    target.resize(static_cast<size_t>(n));
    size_t slash = current.rfind('/');
    if (target.front() != '/' && slash != std::string::npos)
      target = current.substr(0, slash + 1) + target;
    current = target;
  }
  ThrowSystemError("follow the symlink", path, ELOOP);
}

}  // namespace

std::string TempPrefixFor(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + std::string(kTempMarker);
}

std::vector<std::string> FindStaleTemporaries(const std::string& path) {
  std::vector<std::string> stale;
  if (path == "-") return stale;
  std::string prefix = TempPrefixFor(ResolveSymlinks(path));
  size_t slash = prefix.rfind('/');
  std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash + 1);
  std::string name_prefix = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return stale;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    // mkstemp's six characters follow the prefix.
    if (name.size() == name_prefix.size() + 6 && name.starts_with(name_prefix))
      stale.push_back(prefix.substr(0, slash + 1) + std::string(name));
  }
  closedir(d);
  std::sort(stale.begin(), stale.end());
  return stale;
}

AtomicOutputFile::AtomicOutputFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  // Refuse a directory now, not after all the work when rename() fails with a confusing errno.
  if (path_.back() == '/')
    ThrowForFile(path_, "expected an output file name, got a directory name (ends in '/')");
  target_ = ResolveSymlinks(path_);
  struct stat st;
  if (stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      ThrowForFile(path_,
                   "is a directory; give an output file name (a directory is for "
                   "several inputs)");
    if (S_ISREG(st.st_mode)) keep_mode_ = st.st_mode & 07777;
  }
  temp_path_ = TempPrefixFor(target_) + "XXXXXX";
  fd_ = mkstemp(temp_path_.data());
  if (fd_ < 0) ThrowSystemError("create", path_, errno);
  pending_slot_ = RegisterPending(temp_path_);
  buffer_.reserve(kOutputBlock);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (temp_path_.empty() || committed_) return;
  if (fd_ >= 0) close(fd_);
  unlink(temp_path_.c_str());
  UnregisterPending(pending_slot_);
}

void AtomicOutputFile::Write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kOutputBlock) {
    WriteAll(fd_, buffer_, DisplayPath(path_));
    buffer_.clear();
    if (bytes.size() >= kOutputBlock) {
      WriteAll(fd_, bytes, DisplayPath(path_));
      return;
    }
  }
  buffer_.append(bytes);
}

void AtomicOutputFile::Finish() {
  if (!buffer_.empty()) {
    WriteAll(fd_, buffer_, DisplayPath(path_));
    buffer_.clear();
  }
}

void AtomicOutputFile::Commit() {
  if (committed_) return;
  Finish();
  if (temp_path_.empty()) {
    committed_ = true;  // stdout: nothing to rename, and never closed here
    return;
  }
  // mkstemp creates mode 0600; a replaced file keeps its mode, a new one gets 0666 & ~umask.
  mode_t mode = keep_mode_;
  if (mode == kNoMode) {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  if (fchmod(fd_, mode) != 0) ThrowSystemError("set the mode of", path_, errno);
  int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) ThrowSystemError("close", path_, errno);
  if (rename(temp_path_.c_str(), target_.c_str()) != 0)
    ThrowSystemError("replace", target_ == path_ ? path_ : path_ + " (-> " + target_ + ")", errno);
  committed_ = true;
  UnregisterPending(pending_slot_);
}

std::unique_ptr<ByteSink> MakeZstdSink(ByteSink* inner, int level) {
  return std::make_unique<ZstdSink>(inner, level);
}

void RemovePendingOutputsFromSignalHandler() {
  for (int i = 0; i < kPendingSlots; ++i) {
    if (g_pending_state[i].load() == 2) unlink(g_pending_paths[i]);
  }
}

}  // namespace cg_inject
