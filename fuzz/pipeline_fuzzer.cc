// libFuzzer target for the whole pipeline: one input holds a symbol source (perf map or jitdump,
// told apart by content) and a profile (plain or zstd), split at kSeparator; no separator means
// a profile with no symbol source. The profile runs through the reader, the injector over the
// index and the writer, and the output is read back. Crashes, a failed invariant (a bug by
// definition: exit 3 in the CLI), an output that does not read back, and an output whose
// summary:/totals: disagree with its costs all stop the fuzzer.
//
// The output side (issue 22): the same bytes then go through the command line's whole run in a
// scratch directory, with -o, --callgraph and --elf-dir aimed (chosen by a hash of the input) at
// the run's own input, its symbol source, symlinks to them, a FIFO, a character device, a
// directory, a dangling symlink or a fresh name. Whatever the run does, the input and the source
// keep their bytes, no symlink, FIFO, device or directory is replaced, and no temporary remains;
// anything else stops the fuzzer.
//
// The objects a profile names (issue 36): an input may end with kObjectSeparator and the bytes of
// an ELF file. They are read by both ELF readers directly, and written to the scratch directory
// as obj.so, which every `@OBJECT@` in the profile then names (`ob=@OBJECT@`), so the command
// line's run reads it as a profile's object: its extents, symbols and PLT stubs. Each case runs
// within libFuzzer's -timeout and -rss_limit_mb (fuzz/run-all.sh): reading an object costs time
// and memory linear in its size, so a hostile file that breaks that stops the fuzzer.
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/profile_summary.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/inject.h"
#include "cg_inject/io.h"
#include "cg_inject/symbols.h"
#include "cli/options.h"
#include "cli/run.h"
#include "elf/elf_reader.h"
#include "elf/object_image_stubs.h"
#include "sources/symbol_sources.h"

namespace {
using namespace cg_inject;

constexpr std::string_view kSeparator = "\n--cg-inject-fuzz-profile--\n";
constexpr std::string_view kObjectSeparator = "\n--cg-inject-fuzz-object--\n";
constexpr std::string_view kObjectPlaceholder = "@OBJECT@";

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Put(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

/// Keeps a FIFO open for reading and empties it, so a run that writes into it neither blocks in
/// open() nor on a full pipe.
class FifoDrain {
 public:
  explicit FifoDrain(const std::string& path) : fd_(open(path.c_str(), O_RDWR | O_NONBLOCK)) {
    if (fd_ >= 0) thread_ = std::thread([this] { Run(); });
  }
  ~FifoDrain() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }
  FifoDrain(const FifoDrain&) = delete;
  FifoDrain& operator=(const FifoDrain&) = delete;

 private:
  void Run() {
    char buf[65536];
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) > 0) {
        while (read(fd_, buf, sizeof buf) > 0) {
        }
      }
    }
  }
  int fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// A scratch directory per process, refilled for every input and removed at exit (the string
/// is never destroyed: the exit handler still needs it).
const std::string& ScratchDir() {
  static const std::string* dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "cg-inject-fuzz-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) __builtin_trap();
    auto* kept = new std::string(tmpl);
    std::atexit([] { fs::remove_all(ScratchDir()); });
    return kept;
  }();
  return *dir;
}

/// Checks after a run: what must not have changed.
struct Expected {
  std::string input, source;
  bool input_may_change = false;  // --in-place with -o onto the input
  bool have_device = false;
};

void CheckUnharmed(const std::string& d, const Expected& e) {
  struct stat st;
  auto kind = [&](const std::string& name) -> mode_t {
    return lstat((d + "/" + name).c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
  };
  if (kind("in.cg") != S_IFREG || kind("src") != S_IFREG) __builtin_trap();
  if (!e.input_may_change && Slurp(d + "/in.cg") != e.input) __builtin_trap();
  // Without source bytes "src" is a file like any other: the run does not read it.
  if (!e.source.empty() && Slurp(d + "/src") != e.source) __builtin_trap();
  for (const char* link : {"in-link", "src-link", "dangling"}) {
    if (kind(link) != S_IFLNK) __builtin_trap();
  }
  if (fs::read_symlink(d + "/in-link") != "in.cg") __builtin_trap();
  if (kind("fifo") != S_IFIFO || kind("dir") != S_IFDIR) __builtin_trap();
  if (e.have_device && kind("null") != S_IFCHR) __builtin_trap();
  for (const auto& entry : fs::recursive_directory_iterator(d)) {
    if (entry.path().filename().string().find(".cg-inject-tmp.") != std::string::npos)
      __builtin_trap();
  }
}

/// `profile` with every kObjectPlaceholder replaced by `object`.
std::string NameObject(std::string_view profile, const std::string& object) {
  std::string out;
  for (size_t at = 0;;) {
    size_t next = profile.find(kObjectPlaceholder, at);
    if (next == std::string_view::npos) {
      out.append(profile.substr(at));
      return out;
    }
    out.append(profile.substr(at, next - at));
    out += object;
    at = next + kObjectPlaceholder.size();
  }
}

void RunOutputSide(std::string_view source_bytes, std::string_view raw_profile,
                   std::string_view object) {
  const std::string& d = ScratchDir();
  for (const auto& entry : fs::directory_iterator(d)) fs::remove_all(entry.path());
  const std::string profile = NameObject(raw_profile, d + "/obj.so");
  if (!object.empty()) Put(d + "/obj.so", object);
  Expected e;
  e.input = std::string(profile);
  e.source = std::string(source_bytes);
  Put(d + "/in.cg", profile);
  Put(d + "/in2.cg", profile);
  Put(d + "/src", source_bytes);
  fs::create_symlink("in.cg", d + "/in-link");
  fs::create_symlink("src", d + "/src-link");
  fs::create_symlink("gone.out", d + "/dangling");
  fs::create_directory(d + "/dir");
  if (mkfifo((d + "/fifo").c_str(), 0600) != 0) __builtin_trap();
  e.have_device = mknod((d + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  FifoDrain drain(d + "/fifo");

  static const char* const kTargets[] = {"in.cg",       "src",      "in-link", "src-link",
                                         "fifo",        "null",     "dir",     "new.out",
                                         "dir/new.out", "dangling", "in.cg/x", "new.out.zst"};
  constexpr size_t kCount = std::size(kTargets);
  uint64_t h =
      std::hash<std::string_view>{}(profile) ^ (std::hash<std::string_view>{}(source_bytes) << 1);
  auto pick = [&](size_t n) {
    size_t v = size_t(h % n);
    h = h / n ^ (h << 29);
    return v;
  };
  auto target = [&] {
    const char* t = kTargets[pick(kCount)];
    if (!e.have_device && std::string_view(t) == "null") t = "new.out";
    return d + "/" + t;
  };

  CliOptions o;
  o.discover = false;
  o.verbosity = 0;
  o.progress = false;
  o.inputs.push_back(d + "/in.cg");
  switch (pick(4)) {
    case 1:
      o.inputs.push_back(d + "/in2.cg");
      break;
    case 2:
      o.inputs.push_back(d + "/in-link");
      break;
    default:
      break;
  }
  if (!source_bytes.empty()) {
    bool jitdump = source_bytes.starts_with("JiTD") || source_bytes.starts_with("DTiJ");
    (jitdump ? o.jitdumps : o.perf_maps).push_back(d + (pick(2) ? "/src" : "/src-link"));
  }
  if (pick(4) != 0) o.output = target();
  if (pick(2)) o.callgraph_path = target();
  if (pick(3) == 0) o.elf_dir = target();
  o.in_place = pick(4) == 0;
  if (o.in_place) {
    // The one thing --in-place allows: the profile replacing its own input.
    struct stat out, in;
    e.input_may_change = stat(o.output.c_str(), &out) == 0 &&
                         stat((d + "/in.cg").c_str(), &in) == 0 && out.st_ino == in.st_ino &&
                         out.st_dev == in.st_dev;
  }
  // No output to stdout: the fuzzer's own output stays readable.
  if (o.output.empty() && o.inputs.size() == 1) o.output = d + "/new.out";
  if (o.output.empty()) o.suffix = ".jit";
  if (o.inputs.size() > 1 && o.output.empty()) e.input_may_change = false;

  RunEnvironment env;
  env.roots = DiscoveryRoots{};
  static std::FILE* devnull = std::fopen("/dev/null", "w");
  env.err = devnull;
  RunCgInject(o, env);
  CheckUnharmed(d, e);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cg_inject;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string_view source_bytes, profile = bytes, object;
  if (size_t at = bytes.find(kSeparator); at != std::string_view::npos) {
    source_bytes = bytes.substr(0, at);
    profile = bytes.substr(at + kSeparator.size());
  }
  if (size_t at = profile.find(kObjectSeparator); at != std::string_view::npos) {
    object = profile.substr(at + kObjectSeparator.size());
    profile = profile.substr(0, at);
    // Both readers over an exactly-sized copy, so AddressSanitizer sees any read past its end.
    std::vector<char> copy(object.begin(), object.end());
    std::string_view exact(copy.data(), copy.size());
    std::string why;
    std::unique_ptr<ObjectImage> image = ReadElfObject("/fuzz/obj.so", exact, &why);
    if (image == nullptr && why.empty()) __builtin_trap();
    if (image != nullptr) {
      for (const ElfSymbol& s : image->symbols()) {
        if (s.name.empty() || image->LookupSymbol(s.addr) == nullptr) __builtin_trap();
      }
    }
    ObjectStubs stubs = ReadObjectStubs(exact);
    for (const PltSlot& slot : stubs.plt) {
      if (slot.symbol.empty() || slot.symbol.data() < copy.data() ||
          slot.symbol.data() + slot.symbol.size() > copy.data() + copy.size())
        __builtin_trap();
    }
  }
  SymbolIndex index;
  Diagnostics diagnostics;
  try {
    if (!source_bytes.empty()) {
      // The name carries the pid the profile's pid: line usually names; any works.
      LoadSymbolSourceBytes(source_bytes, "/tmp/perf-1.map", SourceKind::kDetect, &index,
                            &diagnostics);
    }
  } catch (const InputError&) {
    RunOutputSide(source_bytes, profile, object);  // a bad source: the run fails, leaves nothing
    return 0;
  }
  index.Finish();

  StringSink written;
  InjectStats stats;
  try {
    CallgrindWriter writer(&written);
    Injector injector(index, nullptr, InjectOptions{}, &writer);
    auto in = OpenMemoryInput(profile, "fuzz");
    ReadCallgrind(*in, injector, {.diagnostics = &diagnostics});
    writer.Flush();
    stats = injector.stats();
  } catch (const InvariantError&) {
    __builtin_trap();
  } catch (const InputError&) {
    RunOutputSide(source_bytes, profile, object);
    return 0;
  }
  if (!stats.invariant_violations.empty()) __builtin_trap();

  ProfileSummary reread;
  Diagnostics reread_diagnostics;
  auto in = OpenMemoryInput(written.data(), "output");
  ReadCallgrind(*in, reread, {.diagnostics = &reread_diagnostics});  // must not throw
  // The output's totals: is always the true sum, but a wrong summary: is kept as the input has
  // it (issue 23 item 6: the output reads in callgrind_annotate as its input did), so the reread
  // may disagree with summary: only where the input did.
  constexpr std::string_view kDisagree = "callgrind: costs disagree with summary:/totals:";
  bool input_disagreed = false;
  for (const Diagnostics::Kind& kind : diagnostics.kinds()) {
    if (kind.kind == kDisagree) input_disagreed = true;
  }
  for (const Diagnostics::Kind& kind : reread_diagnostics.kinds()) {
    if (kind.kind == kDisagree && !input_disagreed) __builtin_trap();
  }
  RunOutputSide(source_bytes, profile, object);
  return 0;
}
