// Byte streams between the pipeline and the file system. Readers take a ByteSource, never a
// path, so tests and fuzzers feed memory; writers push into a ByteSink.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace cg_inject {

/// A forward-only stream of bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Reads up to `size` bytes into `buf`; returns 0 only at end of input. Throws InputError on
  /// I/O or decompression errors.
  virtual size_t Read(char* buf, size_t size) = 0;
  /// The name used in messages ("-" is shown as "<stdin>").
  virtual const std::string& display_name() const = 0;
};

/// A sink of bytes. Write may buffer; Finish flushes and reports any deferred error.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void Write(std::string_view bytes) = 0;
  virtual void Finish() = 0;
};

/// Opens `path` ("-" = stdin) for reading; transparently decompresses zstd, recognized by its
/// magic bytes, not by the file name.
std::unique_ptr<ByteSource> OpenInput(const std::string& path);

/// True when `bytes` start a zstd stream: a zstd frame, or a skippable frame (pzstd's output
/// starts with one). Neither magic can start a Callgrind file, a perf map or a jitdump.
bool StartsWithZstdFrame(std::string_view bytes);
/// A source that yields `prefix` (bytes already read from `rest`, e.g. to peek at a header) and
/// then the rest of `rest`.
std::unique_ptr<ByteSource> PrependBytes(std::string prefix, std::unique_ptr<ByteSource> rest);

/// A source over bytes owned by the caller (tests, fuzzers). Detects zstd like OpenInput.
std::unique_ptr<ByteSource> OpenMemoryInput(std::string_view bytes, std::string display_name);

/// Reads everything `source` has left (small inputs only: symbol sources, tests).
std::string ReadAll(ByteSource& source);

/// Reads a whole (small, binary) file into memory, e.g. a jitdump. Throws InputError.
std::string ReadWholeFile(const std::string& path);

class OutputGroup;
class DirectoryHandle;

/// Output written atomically: bytes go to a temporary file `.NAME.cg-inject-tmp.PID.XXXXXX`
/// beside `path` (NAME shortened so the whole name stays within NAME_MAX), which is renamed over
/// `path` by Commit(). The temporary is created, renamed and removed through a handle on its
/// directory (openat, renameat, unlinkat): a directory renamed during the run gets the output
/// under its new name, and a failure or signal removes the temporary from it. Destroying an
/// uncommitted file removes the temporary. The temporary is registered for the signal handler
/// before it is created, so no signal can leave it behind. A replaced file keeps its permission
/// bits; a symlink is written through (its final target is replaced). An existing file that is
/// neither regular nor a directory (a device, a FIFO) is written directly, never replaced. A
/// directory (or a name ending in '/') is refused by the constructor, before any work. "-" writes
/// stdout directly (never removed). Not copyable.
class AtomicOutputFile : public ByteSink {
 public:
  /// With a `group`, Commit() only completes the temporary; the group renames it into place.
  explicit AtomicOutputFile(std::string path, OutputGroup* group = nullptr);
  ~AtomicOutputFile() override;
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  void Write(std::string_view bytes) override;
  /// Whether WriteAt can overwrite what was written: the output is a temporary (not stdout, a
  /// device or a FIFO, which are written through).
  bool CanWriteAt() const { return !temp_name_.empty(); }
  /// Overwrites bytes already written at `offset` (a header filled in last). CanWriteAt only.
  void WriteAt(uint64_t offset, std::string_view bytes);
  void Finish() override;
  /// Finish() + fsync-free rename into place (or hand-over to the group). Throws InputError
  /// naming the path on failure.
  void Commit();

 private:
  static constexpr mode_t kNoMode = mode_t(-1);
  std::string path_;
  std::string target_;                    // path_ with symlinks followed: what rename() replaces
  std::shared_ptr<DirectoryHandle> dir_;  // target_'s directory, opened once
  std::string target_name_;               // target_'s name in dir_
  std::string temp_name_;                 // the temporary's name in dir_; "" for none
  OutputGroup* group_ = nullptr;
  mode_t keep_mode_ = kNoMode;  // the replaced file's permission bits
  int fd_ = -1;
  int pending_slot_ = -1;  // slot in the signal-time cleanup registry, -1 for none
  bool committed_ = false;
  std::string buffer_;
};

/// Outputs that appear together or not at all: a member's Commit() completes its temporary,
/// CommitAll() renames every completed temporary into place (in the order they were completed),
/// and destroying the group before that removes them, so a failed run leaves nothing. A target
/// completed twice is refused (two outputs of one run would overwrite each other). Thread-safe.
class OutputGroup {
 public:
  OutputGroup() = default;
  ~OutputGroup();
  OutputGroup(const OutputGroup&) = delete;
  OutputGroup& operator=(const OutputGroup&) = delete;

  /// Renames every completed member into place. Throws InputError naming the path on failure;
  /// the members not yet renamed are then removed.
  void CommitAll();
  /// Members completed and not yet renamed.
  size_t size() const;

 private:
  friend class AtomicOutputFile;
  struct Member {
    std::shared_ptr<DirectoryHandle> dir;  // where the temporary and the target are
    std::string temp_name;
    std::string target_name;
    std::string target;   // the whole path, to tell two outputs of one name apart
    std::string display;  // what messages call it
    int pending_slot = -1;
  };
  void Add(Member member);

  mutable std::mutex mu_;
  std::vector<Member> members_;
};

/// The temporary-name prefix for outputs to `path` (".NAME.cg-inject-tmp.", NAME shortened to
/// leave room for the pid and the random part within NAME_MAX).
std::string TempPrefixFor(const std::string& path);

/// Temporary files that a killed run (SIGKILL cannot be caught) left beside `path`, sorted. A
/// temporary whose pid (in its name) is a live process belongs to a running cg-inject and is not
/// listed.
std::vector<std::string> FindStaleTemporaries(const std::string& path);

/// A sink that keeps everything in memory (tests, fuzzers, in-memory round trips).
class StringSink : public ByteSink {
 public:
  void Write(std::string_view bytes) override { data_.append(bytes); }
  void Finish() override {}
  const std::string& data() const { return data_; }

 private:
  std::string data_;
};

/// Wraps `inner` so that everything written is zstd-compressed (level `level`). Finish() ends
/// the frame and then finishes `inner`; `inner` must outlive the returned sink.
std::unique_ptr<ByteSink> MakeZstdSink(ByteSink* inner, int level = 3);

/// Removes every temporary output still registered; called from the handler of every signal that
/// ends the process, so no partial output file remains. Async-signal-safe.
void RemovePendingOutputsFromSignalHandler();

}  // namespace cg_inject
