// RunCgInject: the whole pipeline for one command line.
//   inputs --(pid: header)--> discovery --> symbol sources --> SymbolIndex
//   each input: ReadCallgrind -> Injector -> [summary tee] -> CallgrindWriter -> atomic output
// All errors travel as InputError to the one catch at the bottom, which prints the message and
// picks the exit code; outputs not yet committed remove their temporary files on the way out.
#include "cli/run.h"

#include <malloc.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "callgrind/background_sink.h"
#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/profile_summary.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/inject.h"
#include "cg_inject/io.h"
#include "cg_inject/object_catalog.h"
#include "cg_inject/profile.h"
#include "cg_inject/symbols.h"
#include "cli/jit_image_output.h"
#include "cli/options.h"
#include "cli/output_plan.h"
#include "cli/tee_sink.h"
#include "elf/object_image_stubs.h"
#include "elf/valgrind_name.h"
#include "sources/moar_jit_code.h"
#include "sources/symbol_sources.h"

namespace cg_inject {
namespace {

/// Counts bytes and redraws one status line on stderr a few times a second.
class ProgressSource : public ByteSource {
 public:
  ProgressSource(std::unique_ptr<ByteSource> inner, std::FILE* err)
      : inner_(std::move(inner)), err_(err) {}
  ~ProgressSource() override {
    if (drawn_) std::fprintf(err_, "\r\033[K");
  }
  size_t Read(char* buf, size_t size) override {
    size_t n = inner_->Read(buf, size);
    bytes_ += n;
    auto now = std::chrono::steady_clock::now();
    // 4 updates a second: fast enough to look alive, rare enough to cost nothing.
    if (now - last_draw_ > std::chrono::milliseconds(250)) {
      last_draw_ = now;
      drawn_ = true;
      std::fprintf(err_, "\r\033[Kcg-inject: %s: %.1f MB", display_name().c_str(),
                   double(bytes_) / 1e6);
      std::fflush(err_);
    }
    return n;
  }
  const std::string& display_name() const override { return inner_->display_name(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::FILE* err_;
  uint64_t bytes_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_ = std::chrono::steady_clock::now();
};

/// The output side of one input: the file (atomic, or written through for a device or FIFO),
/// optionally zstd on top.
class OutputChain {
 public:
  OutputChain(const std::string& path, bool zstd, OutputGroup* group) : file_(path, group) {
    if (zstd) zstd_ = MakeZstdSink(&file_);
  }
  ByteSink* sink() { return zstd_ ? zstd_.get() : static_cast<ByteSink*>(&file_); }
  void Commit() {
    if (zstd_) zstd_->Finish();
    file_.Commit();
  }

 private:
  AtomicOutputFile file_;
  std::unique_ptr<ByteSink> zstd_;
};

/// Gives the free pages inside glibc's heap back to the system (free() returns only its top).
/// Not under AddressSanitizer, whose allocator stands in for glibc's: clang's runtime passes the
/// call through to a glibc arena that never served an allocation, and it faults there.
void ReleaseFreedMemory() {
#if defined(__SANITIZE_ADDRESS__)  // GCC's -fsanitize=address
  constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
  constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);  // clang's
#else
  constexpr bool kAddressSanitizer = false;
#endif
  if (!kAddressSanitizer) malloc_trim(0);
}

/// Tells an object's own code from JIT addresses using the ELF files the profile names. The
/// catalog opens files on first use, so inputs on several threads take turns (a lock per call:
/// the injector asks only for objects whose code a source also lists).
class CatalogExtents : public ObjectExtents {
 public:
  explicit CatalogExtents(ObjectCatalog* catalog) : catalog_(catalog) {}
  std::optional<bool> Contains(std::string_view object, uint64_t addr) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const ObjectImage* image = catalog_->Lookup(object);
    if (image == nullptr) return std::nullopt;
    return image->InExtent(addr);
  }
  Extent ExtentOf(std::string_view object) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const ObjectImage* image = catalog_->Lookup(object);
    if (image == nullptr) return {Extent::kUnknown};
    return {Extent::kRange, image->extent_begin(), image->extent_end()};  // as InExtent
  }
  bool AddressesAreAbsolute(std::string_view object) const override {
    std::lock_guard<std::mutex> lock(mu_);
    // Shared libraries and PIEs are told by their header alone, without reading them whole.
    if (!catalog_->MayHaveFixedAddresses(object)) return false;
    const ObjectImage* image = catalog_->Lookup(object);
    return image != nullptr && !image->is_pie();
  }
  std::optional<std::string> FunctionAt(std::string_view object, uint64_t addr) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (catalog_->Changed(object)) return std::nullopt;  // its symbols are another build's
    const ObjectImage* image = catalog_->Lookup(object);
    const ElfSymbol* symbol = image != nullptr ? image->LookupSymbol(addr) : nullptr;
    if (symbol == nullptr) return std::nullopt;
    return ValgrindFunctionName(symbol->name);
  }
  std::optional<uint64_t> KnownLoadBias(std::string_view object) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const ObjectStubs* stubs = catalog_->Stubs(object);
    if (stubs == nullptr) return std::nullopt;
    if (stubs->fixed_addresses) return 0;
    if (stubs->pie_executable) return kValgrindPieBase;
    return std::nullopt;
  }
  std::optional<uint64_t> SlotLoadBias(std::string_view object, uint64_t addr,
                                       std::string_view target) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const ObjectStubs* stubs = catalog_->Stubs(object);
    // An executable's base is known (KnownLoadBias); a stub of it says nothing new.
    if (stubs == nullptr || stubs->fixed_addresses || stubs->pie_executable) return std::nullopt;
    return stubs->SlotBias(addr, target);
  }
  bool StubCallFits(std::string_view object, uint64_t addr, std::string_view target_object,
                    std::string_view target) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const ObjectStubs* stubs = catalog_->Stubs(object);
    const PltSlot* slot = stubs != nullptr ? stubs->PltSlotAt(addr) : nullptr;
    if (slot == nullptr) return true;
    // Names compared without their version ("memcpy@@GLIBC_2.14" is memcpy).
    auto base = [](std::string_view name) { return name.substr(0, name.find('@')); };
    if (base(slot->symbol) == base(target)) return true;
    const ObjectImage* image = catalog_->Lookup(target_object);
    if (image == nullptr) return true;
    const std::vector<const ElfSymbol*> reached = image->FindSymbols(target);
    if (reached.empty()) return true;  // a name the target object does not hold (demangled C++)
    for (const ElfSymbol* symbol : reached) {
      if (base(symbol->name) == base(slot->symbol)) return true;
      for (std::string_view alias : image->AliasesOf(*symbol)) {
        if (base(alias) == base(slot->symbol)) return true;  // free's slot reaching cfree
      }
    }
    // strcpy's slot reaches __strcpy_avx2, as its resolver chose: no proof of anything.
    if (image->IsIndirect(slot->symbol)) return true;
    char at[32];
    std::snprintf(at, sizeof at, "0x%" PRIx64, slot->addr);
    catalog_->MarkChanged(object, "its PLT slot at " + std::string(at) + " names " +
                                      std::string(slot->symbol) +
                                      ", but the profile shows its stub calling " +
                                      std::string(target) + " in " + std::string(target_object));
    return false;
  }
  std::optional<std::string> CodeNameAt(std::string_view object, uint64_t addr) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const ObjectStubs* stubs = catalog_->Stubs(object);
    if (stubs == nullptr || !stubs->IsCode(addr)) return std::nullopt;
    if (const PltSlot* slot = stubs->PltSlotAt(addr)) return slot->Name();
    const ObjectImage* image = catalog_->Lookup(object);
    const ElfSymbol* symbol = image != nullptr ? image->LookupSymbol(addr) : nullptr;
    return symbol != nullptr ? ValgrindFunctionName(symbol->name) : std::string();
  }
  bool IsCodeAt(std::string_view object, uint64_t addr) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const ObjectStubs* stubs = catalog_->Stubs(object);
    return stubs != nullptr && stubs->IsCode(addr);
  }
  /// Reads `objects` ahead of the injector's questions (ObjectCatalog::Preload) on a thread of
  /// its own that holds the lock until it is done: a question asked meanwhile waits for it. An
  /// empty thread for no objects; the catalog must outlive the thread (join it first).
  std::jthread Preload(std::vector<std::string> objects) {
    if (objects.empty()) return {};
    std::latch locked(1);
    std::jthread thread([this, &locked, objects = std::move(objects)] {
      {
        std::lock_guard<std::mutex> lock(mu_);
        locked.count_down();
        try {
          for (const std::string& object : objects) catalog_->Preload(object);
        } catch (...) {  // what could not be read ahead is read when asked, and fails there
        }
      }
      // What reading freed stays in this thread's malloc arena, resident, unless given back
      // (4 MB for Node's binary, for the rest of the run).
      ReleaseFreedMemory();
    });
    pthread_setname_np(thread.native_handle(), "cgi-preload");
    locked.wait();  // questions asked from here on wait for the thread
    return thread;
  }
  std::string ProgramObject(std::string_view program) const override {
    std::string found;
    if (program.find('/') != std::string_view::npos) {
      found = std::string(program);
    } else if (const char* path = std::getenv("PATH")) {
      std::string_view dirs(path);
      while (found.empty()) {
        size_t colon = dirs.find(':');
        std::string dir(dirs.substr(0, colon));
        std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + std::string(program);
        if (access(candidate.c_str(), X_OK) == 0) found = candidate;
        if (colon == std::string_view::npos) break;
        dirs.remove_prefix(colon + 1);
      }
    }
    if (found.empty()) return "";
    char* real = realpath(found.c_str(), nullptr);
    if (real == nullptr) return "";
    std::string object(real);
    std::free(real);
    return object;
  }

 private:
  ObjectCatalog* catalog_;
  mutable std::mutex mu_;
};

/// The value of the header line `key` (with its colon) in the first 64 KiB of the profile, or
/// nothing: the header ends where the body begins, and a cut line is not trusted.
std::optional<std::string_view> PeekHeader(std::string_view head, std::string_view key) {
  size_t pos = 0;
  while (pos < head.size()) {
    size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) break;
    std::string_view line = head.substr(pos, end - pos);
    pos = end + 1;
    if (line.starts_with(key)) return line.substr(key.size());
    if (line.starts_with("fn=") || line.starts_with("ob=") || line.starts_with("fl=")) break;
  }
  return std::nullopt;
}

/// The profile's pid, or 0. A malformed value names no process: the reader warns about it,
/// nothing is discovered.
uint64_t PeekPid(std::string_view head) {
  const std::optional<std::string_view> value = PeekHeader(head, "pid:");
  return value ? ParsePidValue(*value).value_or(0) : 0;
}

/// The profile's program, as the injector reads its `cmd:` line, or "".
std::string PeekProgram(std::string_view head) {
  const std::optional<std::string_view> value = PeekHeader(head, "cmd:");
  return value ? std::string(CommandProgram(*value)) : std::string();
}

std::string ReadHead(ByteSource* source, size_t limit) {
  std::string head(limit, '\0');
  size_t filled = 0;
  while (filled < limit) {
    size_t n = source->Read(head.data() + filled, limit - filled);
    if (n == 0) break;
    filled += n;
  }
  head.resize(filled);
  return head;
}

void Say(const RunEnvironment& env, const CliOptions& options, int level, const std::string& text) {
  if (options.verbosity >= level) std::fprintf(env.err, "cg-inject: %s\n", text.c_str());
}

/// Say, into a buffer: inputs processed on threads print their messages in input order.
void SayTo(std::string* out, const CliOptions& options, int level, const std::string& text) {
  if (options.verbosity >= level) *out += "cg-inject: " + text + "\n";
}

/// Opened inputs, peeked once for their pid and replayed afterwards.
struct OpenedInput {
  std::unique_ptr<ByteSource> source;
  uint64_t pid = 0;
  std::string program;  // PeekProgram's
};

OpenedInput OpenAndPeek(const std::string& path) {
  OpenedInput opened;
  std::unique_ptr<ByteSource> raw = OpenInput(path);
  std::string head = ReadHead(raw.get(), 64 * 1024);
  opened.pid = PeekPid(head);
  opened.program = PeekProgram(head);
  opened.source = PrependBytes(std::move(head), std::move(raw));
  return opened;
}

/// Discovered sources first, explicit ones last: the index prefers the latest-loaded version of an
/// address, so a file named on the command line wins over one found by pid.
std::vector<SourceSpec> CollectSources(const CliOptions& options, const RunEnvironment& env,
                                       const std::set<uint64_t>& pids) {
  std::vector<SourceSpec> explicit_specs;
  for (const std::string& p : options.jitdumps)
    explicit_specs.push_back({p, SourceKind::kJitdump, true});
  for (const std::string& p : options.perf_maps)
    explicit_specs.push_back({p, SourceKind::kPerfMap, true});
  std::set<std::string> seen;
  for (const SourceSpec& s : explicit_specs) seen.insert(s.path);

  std::vector<SourceSpec> specs;
  if (options.discover) {
    DiscoveryRoots roots = env.roots;
    roots.jit_dirs.insert(roots.jit_dirs.end(), options.jit_dirs.begin(), options.jit_dirs.end());
    for (uint64_t pid : pids) {
      for (SourceSpec& found : DiscoverSources(pid, roots)) {
        if (seen.insert(found.path).second) specs.push_back(std::move(found));
      }
    }
  }
  specs.insert(specs.end(), explicit_specs.begin(), explicit_specs.end());
  return specs;
}

void CheckTerminals(const CliOptions& options, const RunEnvironment& env,
                    const std::vector<PlannedOutput>& plan) {
  if (options.force) return;
  for (const PlannedOutput& p : plan) {
    if (p.input == "-" && env.stdin_is_terminal)
      ThrowForFile("<stdin>", "is a terminal; pipe a Callgrind file in or use -f");
    if (p.output == "-" && p.zstd && env.stdout_is_terminal)
      ThrowForFile("<stdout>", "is a terminal; refusing to write zstd data to it (use -f)");
  }
}

/// Writes "cg-inject: MESSAGE\n" with control bytes escaped: messages quote input, and a NUL
/// must not cut one short nor an ESC reach the terminal.
void PrintMessage(std::FILE* err, std::string_view message) {
  std::string out = "cg-inject: " + EscapeControlBytes(message) + "\n";
  std::fwrite(out.data(), 1, out.size(), err);
}

/// What processing one input produced, printed in input order once every input is done.
struct InputResult {
  std::string messages;  // for env.err, in the order they were said
  std::string reports;   // --stats
  bool check_failed = false;
  bool started = false;
  std::exception_ptr error;
  // A first pass found pieces of JIT functions to keep apart (issue 33 item 7): the input is to
  // be read again with these, and nothing of this pass is kept but its plan of the ELF images,
  // which depends on the sources and the output's name only.
  std::optional<KeptApart> again;
  std::optional<JitImagePlan> images_planned;
};

/// Whether an input can be read a second time and its output replaced after a first pass
/// wrote it: a regular file in, and an output that is replaced atomically (not stdout, a
/// device or a FIFO, which are written as the run goes).
bool CanReadAgain(const PlannedOutput& p) {
  struct stat st;
  if (p.input == "-" || ::stat(p.input.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (p.output == "-") return false;
  return ::stat(p.output.c_str(), &st) != 0 || S_ISREG(st.st_mode);
}

/// The one warning about pieces of JIT functions whose merging makes call cycles the input did
/// not have (issue 33 item 7): what was kept apart, and what was written merged and why.
void WarnMergedCycles(const PlannedOutput& p, const InjectStats& stats, bool could_read_again,
                      Diagnostics* diagnostics) {
  const int64_t kept = stats.blocks_kept_apart + stats.ran_code_kept_in_block;
  // Found by this pass but written merged: only another reading could keep them apart.
  const int64_t unread = stats.new_cycles_left;
  const int64_t merged = stats.new_cycles_merged + unread;
  if (kept == 0 && merged == 0) return;
  std::string text = p.input +
                     ": merging pieces of JIT functions would make call cycles the input did not "
                     "have (Callgrind's call tracking took returns or jumps for calls)";
  if (kept > 0) {
    text += ": kept apart, " + std::to_string(stats.blocks_kept_apart) +
            " blocks given a function of their own";
    if (!stats.kept_apart_example.empty()) text += " (" + stats.kept_apart_example + ")";
    text += ", the code of " + std::to_string(stats.ran_code_kept_in_block) +
            " functions left with the JIT block that ran it";
  }
  if (merged > 0) {
    text += kept > 0 ? "; " : ": ";
    text += std::to_string(merged) + " pieces written merged";
    if (stats.new_cycles_merged > 0)
      text += " (" + std::to_string(stats.new_cycles_merged) +
              " a function's entry block or a real object's code, which stay with their function)";
    if (unread > 0)
      text += could_read_again ? " (still found after a second reading)"
              : p.input == "-"
                  ? " (keeping them apart takes a second reading of the input, which stdin does "
                    "not allow)"
                  : " (keeping them apart takes a second reading, and this output is written as "
                    "the run goes)";
  }
  diagnostics->Warn("inject: merged pieces make cycles", text);
}

/// Reads, rewrites and writes one input (see Run); its outputs join `group`. Throws InputError.
void ProcessInput(const CliOptions& options, const RunEnvironment& env, const PlannedOutput& p,
                  std::unique_ptr<ByteSource> source, bool progress, const SymbolIndex& index,
                  bool no_sources, ObjectExtents* extents, InjectOptions inject_options,
                  const std::vector<MoarCodeStats>& moar_code, bool background_writer,
                  const ReadFiles& read, OutputGroup* group, Diagnostics* diagnostics,
                  InputResult* result, int pass = 1) {
  std::string* said = &result->messages;
  if (progress) source = std::make_unique<ProgressSource>(std::move(source), env.err);
  // Looked for before this run creates its own temporary there.
  if (options.verbosity >= 2 || options.stats != StatsFormat::kNone) {
    for (const std::string& stale : FindStaleTemporaries(p.output)) {
      SayTo(said, options, 0,
            stale + ": a temporary output left by a killed cg-inject run (safe to remove)");
    }
  }
  // Every output file is created before the work, so a place that cannot be written fails
  // first; all are renamed into place together when the whole run has succeeded.
  OutputChain output(p.output, p.zstd, group);
  std::optional<AtomicOutputFile> callgraph_file;
  if (!p.callgraph.empty()) callgraph_file.emplace(p.callgraph, group);
  CallgrindWriterOptions writer_options;
  writer_options.compress_names = options.compress_names;
  CallgrindWriter writer(output.sink(), writer_options);
  ProfileSummary callgraph;
  TeeSink tee(&writer, &callgraph);
  ProfileSink* tail = p.callgraph.empty() ? static_cast<ProfileSink*>(&writer) : &tee;
  // With a core to spare, formatting and writing run beside reading and rewriting: on a thread
  // of their own without sources, on the reader's with them (the injector has its own, below).
  std::optional<BackgroundSink> background;
  if (background_writer && no_sources) tail = &background.emplace(tail, "cgi-write");
  if (background_writer && !no_sources)
    tail = &background.emplace(tail, BackgroundSink::DrainedByCaller{});

  // ELF images of the JIT code: their names go into ob=, the files are written with the output.
  JitImagePlan images = result->images_planned ? std::move(*result->images_planned)
                                               : PlanImagesForOutput(options, p.output, index);
  result->images_planned.reset();
  for (const PlannedJitImage& image : images.images)
    read.CheckOutput(image.path, "ELF image output", false);
  inject_options.version_objects = images.object_by_version;
  inject_options.input_name = source->display_name();  // as the reader's errors name it
  std::unique_ptr<Injector> injector;
  if (!no_sources) {
    injector = std::make_unique<Injector>(index, extents, std::move(inject_options), tail);
  }
  // The reader warns into a Diagnostics of its own, added to `diagnostics` when it is done: the
  // object catalog warns into `diagnostics` (under CatalogExtents' lock) from the injector's
  // thread. The same order on one core: the catalog's warnings, then the reader's.
  Diagnostics reader_diagnostics;
  CallgrindReaderOptions reader_options;
  reader_options.diagnostics = &reader_diagnostics;  // tolerates ids old Callgrinds never defined
  reader_options.force = options.force;              // a cut-off profile is written, with a warning
  // With a core to spare, the injector runs beside the reader too: with sources it does about
  // half of a run's work, which the reader's thread did besides its own.
  std::optional<BackgroundSink> background_injector;
  ProfileSink* head = injector ? static_cast<ProfileSink*>(injector.get()) : tail;
  if (injector && background_writer) {
    head = &background_injector.emplace(head, "cgi-rewrite");
    background_injector->DrainWhileWaiting(&*background);
  }
  try {
    ReadCallgrind(*source, *head, reader_options);
    if (background_injector) background_injector->Finish();
    if (background) background->Finish();
  } catch (...) {
    diagnostics->Absorb(reader_diagnostics);
    throw;
  }
  source.reset();  // ends the progress line before anything else is printed
  // Merged, some pieces of JIT functions made call cycles the input did not have: only another
  // reading can keep them apart (their names appear in calls before their blocks, anywhere in
  // the part), as this pass's output has merged them. Its warnings come again; what it wrote is
  // removed (no Commit). The first pass decides every piece, so one more reading is enough.
  const bool can_read_again = CanReadAgain(p);
  if (injector && pass == 1 && injector->stats().new_cycles_left > 0 && can_read_again) {
    result->again = injector->must_keep_apart();
    result->images_planned = std::move(images);  // untouched: KeepTouched comes later
    return;
  }
  diagnostics->Absorb(reader_diagnostics);
  writer.Flush();

  InjectStats stats;
  if (injector) {
    stats = injector->stats();
    WarnMergedCycles(p, stats, can_read_again, diagnostics);
    if (stats.overflowing_call_edges > 0) {
      diagnostics->Warn("callgrind: call tracking broke",
                        p.input + ": " + std::to_string(stats.overflowing_call_edges) +
                            " call edges cost more than their whole part: Callgrind's call "
                            "tracking most likely missed returns (code jumping into another "
                            "function, a runtime switching stacks; deep recursion through other "
                            "functions can also do it), so self costs are exact but inclusive "
                            "costs and the call graph may not be");
    }
    if (stats.ambiguous_functions > 0) {
      // Once per input: which of several functions ran at a reused address, a perf map cannot
      // say (issue 33); the output says it does not know rather than invent call counts.
      const int64_t n = stats.ambiguous_functions;
      diagnostics->Warn(
          "perf map: reused addresses",
          p.input + ": " + std::to_string(n) + (n == 1 ? " function" : " functions") +
              " ran where the perf map lists several functions in turn, and nothing tells which "
              "of them ran: named `0x... (ambiguous: f | g)`, with the calls and costs Callgrind "
              "counted (" +
              std::to_string(stats.ambiguous_cost) + " " + stats.first_event +
              " self); a jitdump's code bytes tell versions apart (with --dump-instr=yes)");
    }
    for (const std::string& v : stats.invariant_violations) {
      *said += "cg-inject: " + p.input + ": consistency check failed: " + v + "\n";
      result->check_failed = true;
    }
  }
  if (result->check_failed && !options.force) {
    *said += "cg-inject: not writing " + p.output + " (use --force to write it anyway)\n";
    return;
  }
  JitImageWriteStats images_written;
  if (injector) {
    // Only the images the output names, with only the versions it names: a jitdump that loaded
    // one address 10,000 times wrote 10,000 images for a profile that ran one (issue 36 item 6).
    KeepTouched(&images, injector->touched_versions());
    // The injector's tables are done with: given back before the images bring the dump's code
    // pages in (erlc + jitdump peaked there, its 7 MB of code on top of the whole injector).
    background_injector.reset();
    injector.reset();
    ReleaseFreedMemory();  // what they freed in the middle of the heap, too
    if (images.versions_untouched > 0) {
      SayTo(said, options, 2,
            p.input + ": " + std::to_string(images.versions_untouched) +
                " code versions the profile never ran get no ELF image (" +
                std::to_string(images.images_untouched) + " images not written)");
    }
    // Images first: once the profile is in place, every ob= it names exists.
    images_written = WriteJitImages(images, index, group);
    if (options.stats == StatsFormat::kText) {
      AppendStatsText(stats, &result->reports);
      AppendImageStatsText(images, images_written, moar_code, &result->reports);
    }
    if (options.stats == StatsFormat::kJson) {
      std::string json;
      AppendStatsJson(stats, &json);
      AddImageStatsJson(images, images_written, moar_code, &json);
      result->reports += json;
    }
  } else if (options.stats != StatsFormat::kNone) {
    SayTo(said, options, 0, p.input + ": no symbol sources, nothing resolved");
  }
  output.Commit();
  if (callgraph_file) {
    callgraph_file->Write(callgraph.ToJson());
    callgraph_file->Commit();
  }
  SayTo(said, options, 2, "wrote " + p.output);
  for (const PlannedJitImage& image : images.images) SayTo(said, options, 2, "wrote " + image.path);
}

/// When the oldest input was last modified (ns since the epoch; stdin's file too), or 0 when no
/// input is a file: the objects a profile names were mapped before it was written.
int64_t OldestModification(const std::vector<PlannedOutput>& plan) {
  int64_t oldest = 0;
  for (const PlannedOutput& p : plan) {
    struct stat st;
    const bool known = p.input == "-" ? fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)
                                      : stat(p.input.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    if (!known) continue;
    const int64_t modified = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (oldest == 0 || modified < oldest) oldest = modified;
  }
  return oldest;
}

/// "not read: A, B" for the inputs that never started, or "".
std::string NotRead(const std::vector<PlannedOutput>& plan,
                    const std::vector<InputResult>& results) {
  std::string list;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!results[i].started) list += (list.empty() ? "; not read: " : ", ") + plan[i].input;
  }
  return list;
}

/// `state` says what the run is doing, for messages that carry no location (out of memory);
/// `note` is printed after the error message, if any.
ExitCode Run(const CliOptions& options, const RunEnvironment& env, std::string* state,
             std::string* note) {
  std::vector<PlannedOutput> plan = PlanOutputs(options);
  CheckTerminals(options, env, plan);

  for (const PlannedOutput& p : plan) {
    std::vector<std::string> siblings = FindPerThreadSiblings(p.input);
    if (!siblings.empty()) {
      std::string list;
      for (const std::string& s : siblings) list += " " + s;
      ThrowForFile(p.input,
                   "is empty: Callgrind ran with --separate-threads=yes and wrote one file per "
                   "thread; run cg-inject on those instead:" +
                       list);
    }
  }

  std::vector<OpenedInput> inputs;
  std::set<uint64_t> pids;
  for (const PlannedOutput& p : plan) {
    inputs.push_back(OpenAndPeek(p.input));
    if (inputs.back().pid != 0) pids.insert(inputs.back().pid);
  }

  Diagnostics diagnostics;
  SymbolIndex index;
  *state = "while loading the symbol sources";
  std::vector<SourceSpec> specs = CollectSources(options, env, pids);
  // Discovered sources are read too: no output may replace one.
  std::vector<std::string> source_paths;
  for (const SourceSpec& s : specs) source_paths.push_back(s.path);
  CheckPlannedOutputs(options, plan, source_paths);
  const ReadFiles read = CollectReadFiles(options, source_paths);
  ObjectCatalogOptions catalog_options;
  catalog_options.profile_mtime_ns = OldestModification(plan);
  ObjectCatalog catalog(catalog_options, &diagnostics);
  CatalogExtents extents(&catalog);
  // The injector reads each program's object first (its `cmd:` line: Node's 100 MB ET_EXEC
  // binary took 75 ms before tsc's first block could be rewritten, the reader waiting): it is
  // read beside the sources and the first blocks, on the other core.
  std::vector<std::string> programs;
  if (!specs.empty()) {
    for (const OpenedInput& input : inputs)
      if (!input.program.empty()) {
        std::string object = extents.ProgramObject(input.program);
        if (!object.empty()) programs.push_back(std::move(object));  // found on this machine
      }
  }
  std::jthread preload = extents.Preload(std::move(programs));  // joined before `extents` goes
  std::vector<LoadedSource> loaded = LoadSymbolSources(specs, &index, &diagnostics);
  for (const LoadedSource& s : loaded) {
    Say(env, options, 1,
        std::string("using ") + SourceKindName(s.kind) + " " + s.path + " (" + s.details + ")");
  }
  // MoarVM's raw code files beside its perf map give the map's lines their code bytes.
  std::vector<MoarCodeStats> moar_code;
  for (const LoadedSource& s : loaded) {
    if (s.kind != SourceKind::kPerfMap) continue;
    std::string dir = FindMoarCodeDir(s.path);
    if (dir.empty()) continue;
    MoarCodeStats stats = AttachMoarCode(ReadMoarCodeDir(dir), s.source, &index);
    stats.dir = dir;
    Say(env, options, 1,
        "using MoarVM code files " + dir + " (" + std::to_string(stats.paired) + " of " +
            std::to_string(stats.files) + " paired with perf-map lines)");
    moar_code.push_back(std::move(stats));
  }
  if (loaded.empty()) {
    std::string why = pids.empty() ? "the profile has no pid: line"
                                   : "none found for pid " + std::to_string(*pids.begin());
    Say(env, options, 1,
        "no symbol source (" + why +
            "; give --perf-map or --jitdump): JIT code keeps its addresses");
  }

  InjectOptions inject_options;
  inject_options.force = options.force;

  // Several inputs run on up to one thread per core, each with its own reader, injector, writer
  // and Diagnostics; messages, stats and errors are printed in input order afterwards. One
  // input, a progress line to draw, stdout or two inputs with one output stay on this thread.
  bool progress = options.progress.value_or(env.stderr_is_terminal) && options.verbosity > 0;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::set<std::string> distinct_outputs;
  bool shared_output = false;
  for (const PlannedOutput& p : plan)
    shared_output |= p.output == "-" || !distinct_outputs.insert(p.output).second;
  size_t threads = progress || shared_output ? 1 : std::min<size_t>(plan.size(), cores);
  // Each input's writer gets a thread of its own when the inputs leave a core unused.
  bool background_writer = threads * 2 <= cores;
  std::vector<InputResult> results(plan.size());
  // Outputs appear together once every input succeeded, or not at all: a run that fails leaves
  // nothing it wrote, and never half of several inputs' results.
  OutputGroup group;
  std::vector<Diagnostics> input_diagnostics(threads > 1 ? plan.size() : 0);
  auto process = [&](size_t i) {
    InputResult& result = results[i];
    Diagnostics* diag = threads > 1 ? &input_diagnostics[i] : &diagnostics;
    try {
      result.started = true;
      ProcessInput(options, env, plan[i], std::move(inputs[i].source), progress, index,
                   loaded.empty(), &extents, inject_options, moar_code, background_writer, read,
                   &group, diag, &result);
      if (result.again) {
        // Another reading keeps apart what the first found (issue 33 item 7).
        InjectOptions again = inject_options;
        again.kept_apart = std::move(*result.again);
        result.again.reset();
        result.messages.clear();
        result.reports.clear();
        ProcessInput(options, env, plan[i], OpenInput(plan[i].input), progress, index,
                     loaded.empty(), &extents, again, moar_code, background_writer, read, &group,
                     diag, &result, /*pass=*/2);
      }
    } catch (...) {
      result.error = std::current_exception();
    }
  };
  if (threads <= 1) {
    for (size_t i = 0; i < plan.size(); ++i) {
      *state = "while processing " + plan[i].input;
      process(i);
      if (results[i].error || (results[i].check_failed && !options.force)) break;
    }
  } else {
    *state = "while processing " + plan[0].input + " and the other inputs";
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};  // the first failure ends the run, as without threads
    std::vector<std::thread> workers;
    for (size_t t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (size_t i; !stop && (i = next++) < plan.size();) {
          process(i);
          if (results[i].error || (results[i].check_failed && !options.force)) stop = true;
        }
      });
    }
    for (std::thread& w : workers) w.join();
    for (Diagnostics& d : input_diagnostics) diagnostics.Absorb(d);
  }

  bool check_failed = false;
  // Stats are printed last, after the warnings, so `--stats=json` ends stderr with pure JSON.
  std::string reports;
  const std::string none_written = "no output written: outputs are written only when all " +
                                   std::to_string(plan.size()) + " inputs succeed" +
                                   NotRead(plan, results);
  for (size_t i = 0; i < plan.size(); ++i) {
    InputResult& result = results[i];
    std::fputs(result.messages.c_str(), env.err);
    if (result.error) {
      if (plan.size() > 1) *note = none_written;
      std::rethrow_exception(result.error);
    }
    reports += result.reports;
    if (result.check_failed) {
      check_failed = true;
      if (!options.force) {
        if (plan.size() > 1) PrintMessage(env.err, none_written);
        return ExitCode::kCheckFailed;
      }
    }
  }
  *state = "while renaming the outputs into place";
  group.CommitAll();

  if (diagnostics.total() > 0 && options.verbosity > 0) {
    std::string summary;
    diagnostics.AppendSummary(&summary);
    std::fputs(summary.c_str(), env.err);
  }
  std::fputs(reports.c_str(), env.err);
  return check_failed ? ExitCode::kCheckFailed : ExitCode::kOk;
}

}  // namespace

RunEnvironment RunEnvironment::FromProcess() {
  RunEnvironment env;
  const char* term = std::getenv("TERM");
  bool dumb = term == nullptr || std::strcmp(term, "dumb") == 0;
  env.stdin_is_terminal = isatty(STDIN_FILENO);
  env.stdout_is_terminal = isatty(STDOUT_FILENO);
  env.stderr_is_terminal = isatty(STDERR_FILENO) && !dumb;
  return env;
}

ExitCode RunCgInject(const CliOptions& options, const RunEnvironment& env) {
  std::string state = "while reading the inputs";
  std::string note;
  ExitCode code = ExitCode::kOk;
  try {
    return Run(options, env, &state, &note);
  } catch (const InvariantError& e) {
    PrintMessage(env.err, std::string("consistency check failed: ") + e.what());
    code = ExitCode::kCheckFailed;
  } catch (const InputError& e) {
    PrintMessage(env.err, e.what());
    code = ExitCode::kInputError;
  } catch (const std::bad_alloc&) {
    PrintMessage(env.err, "out of memory " + state);
    code = ExitCode::kInputError;
  }
  if (!note.empty()) PrintMessage(env.err, note);
  return code;
}

}  // namespace cg_inject
