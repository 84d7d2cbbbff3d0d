// Output side of io.h: atomic output files, output groups, the signal-time cleanup registry,
// zstd sinks.
//
// A target is never written in place: bytes go to a temporary file in the target's directory
// (same file system, so rename() is atomic) and Commit() renames it over the target, or hands
// it to an OutputGroup that renames all of a run's outputs once the run has succeeded. Until
// then the temporary (its directory's handle and its name) sits in a registry that the handler of
// every signal that ends the process can walk without allocating, so an interrupted run leaves
// no partial file behind. The path is registered
// *before* the file is created (open with O_EXCL): a signal between the two finds a name that
// does not exist yet, never a file nobody will remove. SIGKILL (or a power cut) cannot be
// caught: the temporary is then named `.TARGET.cg-inject-tmp.PID.XXXXXX` so it can be
// recognized, and FindStaleTemporaries() reports such leftovers beside a target once process
// PID is gone (a live PID is a run still writing). The pid in the name also makes the name
// this process's own: no other live process creates it, so the handler may unlink it even
// before open() succeeded.
//
// Replacing keeps what the user set up: an existing target's permission bits are copied to the
// new file, a symlink target is written through (its final target is replaced, the link stays),
// and a device or FIFO is written directly (renaming over it would replace the node). A
// directory as the target is refused before any work is done.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

// Flush threshold for AtomicOutputFile; large writes keep syscalls rare.
constexpr size_t kOutputBlock = 1 << 20;

// Pending temporary outputs, in chunks that are never freed (the handler may be walking one
// while another thread adds a chunk). A slot is 0 (free), 1 (being filled) or 2 (ready); the
// handler only reads ready slots, so it never sees a half-copied name. A temporary is known by
// its directory's handle and its name there, so it is removed even from a directory renamed
// during the run (unlink of the path it was made under would miss it: issue 36 item 5). A run
// with a group keeps every output pending until the end, so the registry grows with the outputs
// (inputs x images).
constexpr int kSlotsPerChunk = 64;
struct PendingChunk {
  std::atomic<int> state[kSlotsPerChunk];
  int dir_fds[kSlotsPerChunk];
  char names[kSlotsPerChunk][NAME_MAX + 1];
  std::atomic<PendingChunk*> next{nullptr};
};
PendingChunk g_first_chunk;

PendingChunk* ChunkOf(int slot) {
  PendingChunk* chunk = &g_first_chunk;
  for (int i = slot / kSlotsPerChunk; i > 0; --i) chunk = chunk->next.load();
  return chunk;
}

int RegisterPending(int dir_fd, const std::string& name) {
  if (name.size() > NAME_MAX) return -1;
  PendingChunk* chunk = &g_first_chunk;
  for (int base = 0;; base += kSlotsPerChunk) {
    for (int i = 0; i < kSlotsPerChunk; ++i) {
      int expected = 0;
      if (chunk->state[i].compare_exchange_strong(expected, 1)) {
        chunk->dir_fds[i] = dir_fd;
        std::memcpy(chunk->names[i], name.c_str(), name.size() + 1);
        chunk->state[i].store(2);
        return base + i;
      }
    }
    PendingChunk* next = chunk->next.load();
    if (next == nullptr) {
      // Reachable from g_first_chunk for the rest of the process: not a leak.
      auto* fresh = new PendingChunk();
      if (chunk->next.compare_exchange_strong(next, fresh)) {
        next = fresh;
      } else {
        delete fresh;  // another thread added one first; `next` is now that one
      }
    }
    chunk = next;
  }
}

void UnregisterPending(int slot) {
  if (slot >= 0) ChunkOf(slot)->state[slot % kSlotsPerChunk].store(0);
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

/// The directory part of `path` for openat: "." for a bare name, "/" for "/name".
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseNameOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

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
  // "." + base + marker + up to 10 pid digits + "." + 6 random characters <= NAME_MAX.
  constexpr size_t kRoom = NAME_MAX - 1 - kTempMarker.size() - 10 - 1 - 6;
  if (base.size() > kRoom) {
    base.resize(kRoom);
    // Cut before a UTF-8 sequence, not inside one: the name stays readable.
    size_t cut = base.size();
    while (cut > 0 && (static_cast<unsigned char>(base[cut - 1]) & 0xc0) == 0x80) --cut;
    if (cut > 0 && static_cast<unsigned char>(base[cut - 1]) >= 0xc0) --cut;
    if (cut > 0) base.resize(cut);
  }
  return dir + "." + base + std::string(kTempMarker);
}

namespace {

/// The pid in a temporary's name after its prefix ("PID.XXXXXX"), 0 for a name of the form
/// "XXXXXX" (written before the pid was part of the name), -1 for anything else.
int64_t TemporaryOwner(std::string_view rest) {
  if (rest.size() == 6) return 0;
  if (rest.size() < 8 || rest[rest.size() - 7] != '.') return -1;
  std::string_view digits = rest.substr(0, rest.size() - 7);
  if (digits.empty() || digits.size() > 10) return -1;
  int64_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

bool ProcessIsAlive(int64_t pid) {
  if (pid <= 0 || pid > INT32_MAX) return false;
  return kill(pid_t(pid), 0) == 0 || errno == EPERM;
}

/// Six random name characters; mkstemp's alphabet.
std::string RandomSuffix() {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng(std::random_device{}());
  std::string out(6, '\0');
  for (char& c : out) c = kAlphabet[rng() % (sizeof kAlphabet - 1)];
  return out;
}

/// "PATH: cannot create: File name too long" says nothing about which name: this names it.
/// Throws for a component of `path` longer than NAME_MAX (messages call the file `shown`).
void CheckNameLengths(const std::string& shown, const std::string& path) {
  size_t begin = 0;
  while (begin < path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    if (end - begin > NAME_MAX) {
      ThrowForFile(shown, "cannot create: the name '" + path.substr(begin, end - begin) + "' is " +
                              std::to_string(end - begin) + " bytes, more than the " +
                              std::to_string(NAME_MAX) + " a file name may have");
    }
    begin = end + 1;
  }
}

}  // namespace

/// A handle on the directory that outputs are written in (O_PATH). Outputs of one directory
/// share it (a run may write thousands of ELF images there, and each would otherwise hold a
/// descriptor until the end); a directory replaced under its name since gets a handle of its own.
class DirectoryHandle {
 public:
  /// Opens `dir`; throws "SHOWN: cannot create: REASON" (the output's name) when it cannot.
  static std::shared_ptr<DirectoryHandle> Open(const std::string& dir, const std::string& shown) {
    static std::mutex mu;
    static std::map<std::string, std::weak_ptr<DirectoryHandle>> handles;
    std::lock_guard<std::mutex> lock(mu);
    struct stat now;
    const bool exists = stat(dir.c_str(), &now) == 0;
    auto it = handles.find(dir);
    if (it != handles.end()) {
      if (std::shared_ptr<DirectoryHandle> handle = it->second.lock()) {
        struct stat then;
        if (exists && fstat(handle->fd_, &then) == 0 && then.st_dev == now.st_dev &&
            then.st_ino == now.st_ino)
          return handle;
      }
    }
    const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) ThrowSystemError("create", shown, errno);
    auto handle = std::shared_ptr<DirectoryHandle>(new DirectoryHandle(fd));
    handles[dir] = handle;
    return handle;
  }
  ~DirectoryHandle() { close(fd_); }
  DirectoryHandle(const DirectoryHandle&) = delete;
  DirectoryHandle& operator=(const DirectoryHandle&) = delete;
  int fd() const { return fd_; }

 private:
  explicit DirectoryHandle(int fd) : fd_(fd) {}
  int fd_;
};

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
    if (!name.starts_with(name_prefix)) continue;
    int64_t owner = TemporaryOwner(name.substr(name_prefix.size()));
    // A live owner is a run still writing (this one, or another at the same time).
    if (owner < 0 || ProcessIsAlive(owner)) continue;
    stale.push_back(prefix.substr(0, slash + 1) + std::string(name));
  }
  closedir(d);
  std::sort(stale.begin(), stale.end());
  return stale;
}

AtomicOutputFile::AtomicOutputFile(std::string path, OutputGroup* group)
    : path_(std::move(path)), group_(group) {
  if (path_ == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  // Refuse a directory now, not after all the work when rename() fails with a confusing errno.
  if (path_.empty() || path_.back() == '/')
    ThrowForFile(path_, "expected an output file name, got a directory name (ends in '/')");
  target_ = ResolveSymlinks(path_);
  struct stat st;
  if (stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      ThrowForFile(path_,
                   "is a directory; give an output file name (a directory is for "
                   "several inputs)");
    if (S_ISREG(st.st_mode)) {
      keep_mode_ = st.st_mode & 07777;
    } else {
      // A device or FIFO: written through, as `>` would; renaming over it would replace the
      // node (as root, /dev/null itself).
      fd_ = open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) ThrowSystemError("open", path_, errno);
      buffer_.reserve(kOutputBlock);
      return;
    }
  }
  CheckNameLengths(path_, target_);  // else rename() would fail after all the work
  // The temporary is made, renamed and removed through a handle on its directory: a directory
  // renamed during the run still gets the output, or loses the temporary on failure or a signal.
  dir_ = DirectoryHandle::Open(DirectoryOf(target_), path_);
  target_name_ = BaseNameOf(target_);
  const std::string prefix = TempPrefixFor(target_name_) + std::to_string(getpid()) + ".";
  for (int attempt = 0;; ++attempt) {
    temp_name_ = prefix + RandomSuffix();
    // Registered first: a signal from here on removes the file if it exists, and the pid in
    // the name means nobody else's file can have it.
    pending_slot_ = RegisterPending(dir_->fd(), temp_name_);
    fd_ = openat(dir_->fd(), temp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ >= 0) break;
    int err = errno;
    UnregisterPending(pending_slot_);
    pending_slot_ = -1;
    temp_name_.clear();
    if (err == EEXIST && attempt < 100) continue;  // left by a dead run with this pid
    ThrowSystemError("create", path_, err);
  }
  buffer_.reserve(kOutputBlock);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_) return;
  if (temp_name_.empty()) {
    if (fd_ >= 0 && fd_ != STDOUT_FILENO) close(fd_);  // a device or FIFO written through
    return;
  }
  if (fd_ >= 0) close(fd_);
  unlinkat(dir_->fd(), temp_name_.c_str(), 0);
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

void AtomicOutputFile::WriteAt(uint64_t offset, std::string_view bytes) {
  if (!CanWriteAt())
    ThrowForFile(DisplayPath(path_), "is written through, and cannot be written back into");
  Finish();
  while (!bytes.empty()) {
    const ssize_t n = pwrite(fd_, bytes.data(), bytes.size(), off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ThrowSystemError("write", DisplayPath(path_), n < 0 ? errno : EIO);
    bytes.remove_prefix(size_t(n));
    offset += uint64_t(n);
  }
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
  if (temp_name_.empty()) {
    committed_ = true;
    if (fd_ == STDOUT_FILENO) return;  // stdout: nothing to rename, and never closed here
    int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) ThrowSystemError("close", path_, errno);
    return;
  }
  // The temporary is created 0600; a replaced file keeps its mode, a new one gets
  // 0666 & ~umask.
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
  std::string display = target_ == path_ ? path_ : path_ + " (-> " + target_ + ")";
  if (group_ != nullptr) {
    group_->Add({dir_, temp_name_, target_name_, target_, display, pending_slot_});
    committed_ = true;  // the group owns the temporary now
    return;
  }
  if (renameat(dir_->fd(), temp_name_.c_str(), dir_->fd(), target_name_.c_str()) != 0)
    ThrowSystemError("replace", display, errno);
  committed_ = true;
  UnregisterPending(pending_slot_);
}

void OutputGroup::Add(Member member) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Member& m : members_) {
    if (m.target == member.target) {
      // Refused before anything is renamed; the caller still owns (and removes) its temporary.
      ThrowForFile(m.display, "this run would write it twice (two of its outputs have this name)");
    }
  }
  members_.push_back(std::move(member));
}

size_t OutputGroup::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return members_.size();
}

void OutputGroup::CommitAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t done = 0; done < members_.size(); ++done) {
    const Member& m = members_[done];
    if (renameat(m.dir->fd(), m.temp_name.c_str(), m.dir->fd(), m.target_name.c_str()) != 0) {
      int err = errno;
      std::string display = m.display;
      // The ones renamed are in place; the rest are removed by the destructor.
      members_.erase(members_.begin(), members_.begin() + std::ptrdiff_t(done));
      ThrowSystemError("replace", display, err);
    }
    UnregisterPending(m.pending_slot);
  }
  members_.clear();
}

OutputGroup::~OutputGroup() {
  for (const Member& m : members_) {
    unlinkat(m.dir->fd(), m.temp_name.c_str(), 0);
    UnregisterPending(m.pending_slot);
  }
}

std::unique_ptr<ByteSink> MakeZstdSink(ByteSink* inner, int level) {
  return std::make_unique<ZstdSink>(inner, level);
}

void RemovePendingOutputsFromSignalHandler() {
  for (PendingChunk* chunk = &g_first_chunk; chunk != nullptr; chunk = chunk->next.load()) {
    for (int i = 0; i < kSlotsPerChunk; ++i) {
      if (chunk->state[i].load() == 2) unlinkat(chunk->dir_fds[i], chunk->names[i], 0);
    }
  }
}

}  // namespace cg_inject
