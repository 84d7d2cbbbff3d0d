// cg-inject record:
//   run valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=DIR/callgrind.out.%p
//         [VALGRIND OPTIONS] PROGRAM ARGS, with the runtime switches in its environment
//   wait (RunChild runs it in a process group of its own that gets the terminal, passes on the
//         signals sent to cg-inject, kills it if cg-inject dies, and waits for what it left
//         running in its group); Callgrind writes into a directory of this run's own in DIR
//   move the profiles into DIR
//   per pid: move its perf map / jitdump into DIR, inject its files with RunCgInject (in
//         parallel, one task per pid), print each task's messages in pid order
// Callgrind writes its profile when the client dies of a signal: Valgrind runs the tool's exit
// handler before it re-raises the signal (measured with 3.19: `kill -INT` gives a complete
// callgrind.out.PID and exit status 130), so an interrupted run is still injected.
// Launcher scripts (`erl`, any `#!` script or shell that ends in `exec RUNTIME`): Valgrind does
// not follow an exec without --trace-children=yes; the program then runs outside it, and the
// shell's profile stays empty (Callgrind creates it at start and writes it at exit, which never
// comes). With --trace-children=yes the exec'd program keeps the pid, so its profile replaces
// the shell's under the same name: record turns it on for scripts and shells.
#include "cli/record.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "callgrind/callgrind_reader.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "cg_inject/profile.h"
#include "cli/child_process.h"
#include "cli/options.h"
#include "cli/record_options.h"
#include "cli/recorded_files.h"
#include "cli/run.h"
#include "cli/runtime_env.h"
#include "cli/valgrind_choice.h"
#include "cli/valgrind_log.h"
#include "resolve/jit_name.h"
#include "sources/jitdump.h"
#include "sources/mapped_file.h"
#include "sources/perf_map.h"

extern char** environ;

namespace cg_inject {
namespace {

/// First-event cost in unnamed JIT code (fn=0x... in ob=???) and in total: enough to tell "the
/// runtime wrote no map" from "this was not a JIT runtime".
class UnnamedCostScan : public ProfileSink {
 public:
  void OnPartBegin(int) override {}
  void OnHeader(std::string_view, std::string_view) override {}
  void OnLayout(const PartLayout&) override {}
  void OnFunction(const FunctionContext& f) override {
    JitName jit;
    unnamed_ = IsUnknownObject(f.object.text) && ParseJitFunctionName(f.function.text, &jit);
  }
  void OnCost(const CostRecord& cost) override {
    if (cost.costs.empty()) return;
    total_ += cost.costs[0];
    if (unnamed_) unnamed_cost_ += cost.costs[0];
  }
  void OnCall(const CallRecord&) override {}
  void OnJump(const JumpRecord&) override {}
  void OnPartEnd() override {}

  uint64_t total() const { return total_; }
  uint64_t unnamed_cost() const { return unnamed_cost_; }

 private:
  bool unnamed_ = false;
  uint64_t total_ = 0, unnamed_cost_ = 0;
};

/// Below this share of unnamed code (fn=0x... in ob=???) a process without symbol sources is
/// taken for one that ran no JIT code: a C program's PLT stubs land there too (/bin/true 0.02%,
/// sh 0.01% with Valgrind 3.19), while a JIT runtime's interpreter and stubs alone are more
/// (the test JIT 1.7%, Java and Node much more).
constexpr double kJitShareThreshold = 0.01;

/// One recorded process and what happens to it.
struct ProcessTask {
  RecordedProcess process;
  std::vector<SourceSpec> sources;  // moved into DIR, used for injecting
  std::vector<std::string> files;   // everything moved into DIR (removed by --clean)
  std::string program;              // argv[0] of the process, for messages
  CliOptions inject;
  std::string messages;  // RunCgInject's stderr
  ExitCode code = ExitCode::kOk;
};

/// Helpers that launcher scripts run to find their own directory (and Erlang's runtime helpers):
/// with --trace-children=yes they run outside Valgrind instead of leaving a profile each (erl
/// runs basename, dirname and dyn_erl before it execs erlexec, which execs beam.smp; beam.smp
/// starts erl_child_setup).
constexpr const char* kUntracedHelpers =
    "--trace-children-skip=*/basename,*/dirname,*/readlink,*/realpath,*/uname,*/sed,*/expr,"
    "*/dyn_erl,*/erl_child_setup,*/inet_gethost";

/// Shells and `env`: programs that run the next one, usually by exec; and Erlang's erlc and
/// escript, ELF programs that exec `erl` (a launcher script).
bool IsLauncherProgram(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name == "sh" || name == "bash" || name == "dash" || name == "env" || name == "erlc" ||
         name == "escript";
}

/// The value of `name` in `environ` ("NAME=VALUE"); `fallback` when it is not set.
std::string LookupEnv(const std::vector<std::string>& environ, const std::string& name,
                      const std::string& fallback) {
  for (const std::string& e : environ) {
    if (e.size() > name.size() && e.starts_with(name) && e[name.size()] == '=')
      return e.substr(name.size() + 1);
  }
  return fallback;
}

/// A directory of record's own, removed when the run is over: the files runtimes read at startup
/// (PHP's ini file, Bun's preload script) and the jitdumps Bun writes there (claimed by their
/// processes, moved beside their profiles, before it is removed).
class RecordDirectory {
 public:
  /// Creates DIR/cg-inject-run.XXXXXX with `files` (name, text) in it when `wanted`; path() is
  /// empty otherwise or on failure (a message went to `err`).
  RecordDirectory(const std::string& tmp_dir, bool wanted,
                  const std::vector<std::pair<std::string, std::string>>& files, std::FILE* err)
      : err_(err) {
    if (!wanted) return;
    std::string pattern = Join(tmp_dir, "cg-inject-run.XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::fprintf(err,
                   "cg-inject: cannot create a directory in %s: %s; PHP and Bun get no switch\n",
                   tmp_dir.c_str(), std::strerror(errno));
      return;
    }
    path_ = pattern;
    for (const auto& [name, text] : files) {
      std::string file = Join(path_, name);
      std::FILE* f = std::fopen(file.c_str(), "w");
      bool ok = f != nullptr && std::fputs(text.c_str(), f) >= 0;
      if (f != nullptr && std::fclose(f) != 0) ok = false;
      written_.push_back(file);
      if (!ok) {
        std::fprintf(err, "cg-inject: cannot write %s: %s; PHP and Bun get no switch\n",
                     file.c_str(), std::strerror(errno));
        Remove();
        return;
      }
    }
  }
  ~RecordDirectory() { Remove(); }
  RecordDirectory(const RecordDirectory&) = delete;
  RecordDirectory& operator=(const RecordDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  static std::string Join(const std::string& dir, const std::string& name) {
    return (std::filesystem::path(dir) / name).string();
  }
  void Remove() {
    if (path_.empty()) return;
    for (const std::string& file : written_) ::unlink(file.c_str());
    // What is left is a process's that left no profile (a jitdump of a Bun that exec'd outside
    // Valgrind): kept, and said.
    if (::rmdir(path_.c_str()) != 0 && errno == ENOTEMPTY) {
      std::fprintf(err_,
                   "cg-inject: note: %s holds files of processes that left no profile; left "
                   "there\n",
                   path_.c_str());
    }
    path_.clear();
  }
  std::FILE* err_;
  std::string path_;
  std::vector<std::string> written_;
};

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return (std::filesystem::path(dir) / name).string();
}

std::string Basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

/// Moves `from` to `to`: a rename, or across file systems a copy into a temporary beside `to`
/// that is renamed into place once whole, then the unlink of `from`. So `to` is either the whole
/// file or untouched: a copy cut short by a full disk left an empty map at the target (issue 36
/// item 9). Returns "" or why it failed.
std::string MoveFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return "";
  if (errno != EXDEV) return std::strerror(errno);
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return std::strerror(errno);
  std::string why;
  try {
    AtomicOutputFile out(to);
    std::vector<char> buffer(1 << 20);
    for (;;) {
      const ssize_t n = ::read(in, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) ThrowSystemError("read", from, errno);
      if (n == 0) break;
      out.Write(std::string_view(buffer.data(), size_t(n)));
    }
    out.Commit();
  } catch (const InputError& e) {
    why = e.what();
  }
  ::close(in);
  if (why.empty()) ::unlink(from.c_str());
  return why;
}

/// Moves `path` into `dir` unless it is there already; returns where it is now.
std::string MoveInto(const std::string& path, const std::string& dir, std::FILE* err) {
  std::string target = Join(dir, Basename(path));
  struct stat a, b;
  if (::stat(path.c_str(), &a) == 0 && ::stat(target.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return target;
  const std::string why = MoveFile(path, target);
  if (why.empty()) return target;
  std::fprintf(err, "cg-inject: cannot move %s to %s (%s); using it where it is\n", path.c_str(),
               target.c_str(), why.c_str());
  return path;
}

/// The file system's clock, which stamps modification times (the kernel's coarse clock).
int64_t FileClockNowNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

/// The process's perf maps and jitdumps, moved beside its profile. A file last written before
/// the recording started is another process's that had the same pid (pids are reused: pid_max is
/// 32768 on many systems, and runtimes leave /tmp/perf-PID.map behind): its names would be
/// wrong, and it is not ours to move. 2 s of slack for file systems with coarse times.
/// `dump_dirs` are the directories Bun was told to write its jitdumps into (record's own, or the
/// user's BUN_JSC_jitDumpDirectory): a dump there is the process's whose pid its header has.
std::vector<SourceSpec> CollectAndMoveSources(uint64_t pid, const DiscoveryRoots& roots,
                                              const std::vector<std::string>& dump_dirs,
                                              const std::string& dir, int64_t started_ns,
                                              std::FILE* err) {
  constexpr int64_t kSlackNs = 2'000'000'000;
  std::vector<SourceSpec> candidates = DiscoverSources(pid, roots);
  for (const std::string& dump_dir : dump_dirs) {
    for (std::string& path : FindJitdumpsOfProcess(dump_dir, pid)) {
      bool known = std::any_of(candidates.begin(), candidates.end(),
                               [&](const SourceSpec& s) { return s.path == path; });
      if (!known) candidates.push_back({std::move(path), SourceKind::kJitdump, false});
    }
  }
  std::vector<SourceSpec> moved;
  for (SourceSpec& found : candidates) {
    struct stat st;
    if (::stat(found.path.c_str(), &st) == 0 &&
        int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec < started_ns - kSlackNs) {
      std::fprintf(err,
                   "cg-inject: pid %llu: not using %s: it was last written before the recording "
                   "started, by another process with the same pid; left where it is\n",
                   static_cast<unsigned long long>(pid), found.path.c_str());
      continue;
    }
    moved.push_back({MoveInto(found.path, dir, err), found.kind, true});
  }
  return moved;
}

/// V8's isolate-0xADDR-PID-v8.log, which --perf-prof and --perf-basic-prof make it write into
/// the working directory (Node 20): a by-product of the switch, moved beside the profile too.
std::vector<std::string> MoveByproducts(uint64_t pid, const DiscoveryRoots& roots,
                                        const std::string& dir, std::FILE* err) {
  std::vector<std::string> moved;
  const std::string suffix = "-" + std::to_string(pid) + "-v8.log";
  for (const DirEntry& e : ListDirectory(roots.cwd)) {
    if (e.name.starts_with("isolate-") && e.name.ends_with(suffix))
      moved.push_back(MoveInto(Join(roots.cwd, e.name), dir, err));
  }
  return moved;
}

/// How much code a symbol source describes: its code versions (a perf map's entries, a
/// jitdump's loads and moves) and whether it ends inside a record (a jitdump whose writer's buffer
/// was cut off by a signal, or whose writer thread had not caught up).
struct SourceCoverage {
  int64_t versions = 0;
  bool cut = false;
  bool readable = false;
};

SourceCoverage MeasureSource(const SourceSpec& spec) {
  class Counter : public JitdumpVisitor {
   public:
    void OnCodeLoad(const JitdumpCodeLoad&) override { ++versions; }
    void OnCodeMove(const JitdumpCodeMove&) override { ++versions; }
    int64_t versions = 0;
  };
  SourceCoverage coverage;
  try {
    std::unique_ptr<MappedFile> mapped = MappedFile::TryOpen(spec.path);
    if (mapped == nullptr) return coverage;
    std::string_view bytes = mapped->bytes();
    Diagnostics quiet;  // the injection that follows warns about the same file
    if (spec.kind == SourceKind::kJitdump) {
      Counter counter;
      coverage.cut = ScanJitdump(bytes, spec.path, &counter, &quiet).truncated;
      coverage.versions = counter.versions;
    } else {
      for (size_t pos = 0; pos < bytes.size();) {
        size_t end = bytes.find('\n', pos);
        if (end == std::string_view::npos) end = bytes.size();
        PerfMapLine line;
        std::string error;
        if (ParsePerfMapLine(bytes.substr(pos, end - pos), &line, &error)) ++coverage.versions;
        pos = end + 1;
      }
    }
    coverage.readable = true;
  } catch (const InputError&) {
    // Unreadable or malformed: the injection reports it; it is not preferred here.
  }
  return coverage;
}

/// The sources to inject with. A jitdump describes the same code as the map plus code bytes and
/// lines, so it is preferred (Node with both switches writes both; given both, the injector would
/// see every function twice as reused code) when it is complete. Runtimes buffer their jitdumps:
/// after a signal ended the program the dump may end inside a record (Node 20 on Ctrl-C lost its
/// last 3 KiB, with fib's optimized code: 18% of the cost stayed unnamed) while the map, written
/// line by line, is complete. A cut dump is still preferred when it describes at least as much
/// code as the map (BEAM, interrupted: 23,185 loads, 23,185 map entries; the map was used until
/// issue 33, without the dump's lines). `*why`, when there was a choice, says what decided it.
std::vector<SourceSpec> PickSources(const std::vector<SourceSpec>& found, std::string* why) {
  const SourceSpec* dump = nullptr;
  const SourceSpec* map = nullptr;
  for (const SourceSpec& s : found) {
    if (s.kind == SourceKind::kJitdump && dump == nullptr) dump = &s;
    if (s.kind != SourceKind::kJitdump && map == nullptr) map = &s;
  }
  SourceKind preferred = dump != nullptr ? SourceKind::kJitdump : SourceKind::kPerfMap;
  if (dump != nullptr && map != nullptr) {
    SourceCoverage d = MeasureSource(*dump);
    SourceCoverage m = MeasureSource(*map);
    const bool use_dump = d.readable && (!m.readable || !d.cut || d.versions >= m.versions);
    preferred = use_dump ? SourceKind::kJitdump : SourceKind::kPerfMap;
    if (d.readable && m.readable) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "the jitdump %s (%lld code records; the perf map %lld entries)",
                    !d.cut     ? "is complete"
                    : use_dump ? "ends inside a record but describes as much"
                               : "ends inside a record and describes less",
                    static_cast<long long>(d.versions), static_cast<long long>(m.versions));
      *why = text;
    }
  }
  std::vector<SourceSpec> picked;
  for (const SourceSpec& s : found) {
    if (s.kind == preferred) picked.push_back(s);
  }
  return picked;
}

std::string ExpectedPlaces(uint64_t pid, const DiscoveryRoots& roots) {
  const std::string id = std::to_string(pid);
  std::string cwd = roots.cwd == "." ? std::filesystem::current_path().string() : roots.cwd;
  std::string text = Join(roots.tmp_dir, "perf-" + id + ".map") + ", " +
                     Join(cwd, "jit-" + id + ".dump") + ", " +
                     Join(roots.tmp_dir, "jit-" + id + ".dump");
  if (!roots.home.empty()) text += ", " + Join(roots.home, ".debug/jit/*/jit-" + id + ".dump");
  return text;
}

/// The first word of the profile's `cmd:` line (in its first 64 KiB), or "?".
std::string ReadProgramName(const std::string& profile) {
  try {
    std::unique_ptr<ByteSource> source = OpenInput(profile);
    std::string head(64 * 1024, '\0');
    size_t filled = 0;
    while (filled < head.size()) {
      size_t n = source->Read(head.data() + filled, head.size() - filled);
      if (n == 0) break;
      filled += n;
    }
    head.resize(filled);
    size_t at = head.starts_with("cmd:") ? 0 : head.find("\ncmd:");
    if (at == std::string::npos) return "?";
    at = head.find_first_not_of(' ', at + (at == 0 ? 4 : 5));
    size_t end = head.find_first_of(" \n", at);
    return at == std::string::npos ? "?" : head.substr(at, end - at);
  } catch (const InputError&) {
    return "?";
  }
}

/// Explains a process that ran unnamed JIT code without leaving a symbol source. Returns the
/// text (several lines).
std::string ExplainMissingSources(const ProcessTask& task, const RecordOptions& options,
                                  const RecordEnvironment& env, const std::string& record_dir,
                                  double share) {
  char head[256];
  std::snprintf(head, sizeof head,
                "cg-inject: pid %llu (%s): %.2f%% of the cost ran in unnamed JIT code, but the "
                "process left no perf map or jitdump\n",
                static_cast<unsigned long long>(task.process.pid), task.program.c_str(),
                share * 100.0);
  std::string text = head;
  const RuntimeSwitch* runtime = LookupRuntimeForProgram(task.program);
  if (runtime == nullptr) {
    text += "cg-inject:   " + Basename(task.program) +
            " is not a runtime record knows; make it write /tmp/perf-PID.map or jit-PID.dump "
            "(see RUNTIMES in cg-inject(1))\n";
  } else if (!options.runtimes.Enabled(runtime->runtime)) {
    text += "cg-inject:   the " + std::string(runtime->runtime) +
            " switch was turned off by --no-runtime-env\n";
  } else {
    std::string what;
    std::vector<std::string> assignments;  // VAR=VALUE of each variable entry
    for (const RuntimeSwitch* entry : SwitchesOf(runtime->runtime)) {
      if (entry->variable.empty()) {
        what = std::string(entry->program_flag) + " was added to its arguments";
      } else if (!entry->ini_text.empty()) {
        std::string settings(entry->ini_text);
        std::replace(settings.begin(), settings.end(), '\n', ' ');
        while (settings.ends_with(' ')) settings.pop_back();
        what = std::string(entry->variable) + " listed an ini file with " + settings;
      } else {
        std::string value(entry->value);
        if (size_t at = value.find(kDirPlaceholder); at != std::string::npos)
          value.replace(at, kDirPlaceholder.size(), record_dir);
        assignments.push_back(std::string(entry->variable) + "=" + value);
      }
    }
    for (size_t i = 0; i < assignments.size(); ++i) {
      if (i > 0) what += i + 1 == assignments.size() ? " and " : ", ";
      what += assignments[i];
    }
    if (!assignments.empty()) what += assignments.size() == 1 ? " was set" : " were set";
    text += "cg-inject:   " + what + "; " + std::string(runtime->runtime) + " writes " +
            std::string(runtime->writes) + "\n";
  }
  text += "cg-inject:   looked for " + ExpectedPlaces(task.process.pid, env.roots) + "\n";
  return text;
}

/// Says why valgrind did not start; returns the exit status (127 not found, 126 otherwise).
int ReportSpawnError(const std::string& valgrind, int error, const std::string& path_list,
                     std::FILE* err) {
  // A script whose #! interpreter is missing fails with ENOENT as if it were missing itself
  // (issue 36 item 11: "SCRIPT: valgrind not found" for a SCRIPT that was there).
  if (error == ENOENT) {
    const ProgramLookup found = FindProgram(valgrind, path_list);
    if (const std::string why = found.error == 0 ? MissingInterpreter(found.path) : "";
        !why.empty()) {
      std::fprintf(err, "cg-inject: cannot run %s: %s\n", found.path.c_str(), why.c_str());
      return int(ExitCode::kNotFound);
    }
  }
  if (error == ENOENT) {
    std::fprintf(err,
                 "cg-inject: %s: valgrind not found%s; install it (Debian: apt-get install "
                 "valgrind) or give --valgrind PATH\n",
                 valgrind.c_str(), valgrind.find('/') == std::string::npos ? " in PATH" : "");
    return int(ExitCode::kNotFound);
  }
  std::fprintf(err, "cg-inject: cannot run %s: %s\n", valgrind.c_str(), std::strerror(error));
  return int(ExitCode::kCannotRun);
}

/// Prepares the RunCgInject options of one process.
void PlanInjection(const RecordOptions& options, ProcessTask* task) {
  CliOptions& o = task->inject;
  o.inputs = task->process.profiles;
  if (o.inputs.size() == 1) o.output = o.inputs[0] + o.suffix;  // else INPUT.jit each
  for (const SourceSpec& s : task->sources) {
    (s.kind == SourceKind::kJitdump ? o.jitdumps : o.perf_maps).push_back(s.path);
  }
  o.discover = false;  // exactly the files found for this pid, already moved
  o.progress = false;  // several tasks at once: no \r lines
  o.verbosity = task->sources.empty() ? 0 : options.verbosity;
  o.stats = task->sources.empty() ? StatsFormat::kNone : options.stats;
}

void RunTasks(std::vector<ProcessTask>* tasks, int jobs) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < tasks->size(); i = next++) {
      ProcessTask& task = (*tasks)[i];
      char* buf = nullptr;
      size_t size = 0;
      RunEnvironment renv;
      renv.err = ::open_memstream(&buf, &size);
      if (renv.err == nullptr) renv.err = stderr;
      task.code = RunCgInject(task.inject, renv);
      if (renv.err != stderr) {
        std::fclose(renv.err);
        task.messages.assign(buf, size);
        std::free(buf);
      }
    }
  };
  size_t n = std::min<size_t>(tasks->size(), size_t(std::max(jobs, 1)));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
}

/// What the call graph of a runtime's profile cannot show, said where the user reads the result:
/// the runtimes whose JIT code calls the next function of the program without a machine call, so
/// that no call stack (Callgrind's or another) holds the program's caller (docs/call-tracking.md).
/// PHP 8.2: in function mode the code of a call ends with a jump to the callee's first opline
/// handler (zend_jit_do_fcall in ext/opcache/jit/zend_jit_x86.dasc: JMP_IP), a trace continues
/// into the callee's opcodes or exits to the VM; the PHP call stack is zend_execute_data frames
/// on the VM stack. MoarVM: MVM_jit_emit_invoke sets up the callee's frame and leaves the JIT
/// code for the interpreter, which enters the callee's (MVM_jit_code_enter). Measured: in the
/// jitdumps of PHP 8.2.36 (both modes) no call instruction targets JIT code; in a Rakudo
/// 2022.12 profile every routine's only caller is MVM_jit_code_enter.
const char* CallGraphNote(const std::string& program) {
  const RuntimeSwitch* runtime = LookupRuntimeForProgram(program);
  if (runtime == nullptr) return nullptr;
  if (runtime->runtime == "php") {
    return "cg-inject: note: PHP's JIT runs a call from one PHP function to another without a "
           "machine call\n"
           "cg-inject:   (it continues in the same execute_ex or trace), so the call graph cannot "
           "show which PHP\n"
           "cg-inject:   function called which: PHP functions are called by execute_ex, or by "
           "the C function that\n"
           "cg-inject:   called back into PHP (array_map, usort)\n";
  }
  if (runtime->runtime == "moarvm") {
    return "cg-inject: note: MoarVM's JIT leaves a routine's code for the interpreter at every "
           "call, which enters\n"
           "cg-inject:   the callee's code, so the call graph cannot show which routine called "
           "which: routines are\n"
           "cg-inject:   called by MVM_jit_code_enter\n";
  }
  return nullptr;
}

/// The share of the first event's cost that the written profiles of `task` keep in unnamed JIT
/// code. Reads the written copies: the same records, and the inputs may be gone with --clean.
double UnnamedShare(const ProcessTask& task, std::FILE* err) {
  UnnamedCostScan scan;
  try {
    for (const std::string& in : task.process.profiles) {
      std::unique_ptr<ByteSource> source = OpenInput(in + task.inject.suffix);
      ReadCallgrind(*source, scan);
    }
  } catch (const InputError& e) {
    std::fprintf(err, "cg-inject: %s\n", e.what());
  }
  return double(scan.unnamed_cost()) / double(std::max<uint64_t>(scan.total(), 1));
}

/// Counts a jitdump's CODE_LOAD records.
class LoadCounter : public JitdumpVisitor {
 public:
  void OnCodeLoad(const JitdumpCodeLoad&) override { ++loads; }
  int64_t loads = 0;
};

/// Above this share of unnamed JIT code left with a jitdump, Bun's dump missed code: with the
/// exit wait every capture kept under 0.01% (docs/runtimes.md), without it 5-67% stayed unnamed.
constexpr double kBunIncompleteThreshold = 0.001;

/// Bun whose jitdump lacks code that ran (its writer thread had not caught up when the process
/// ended): says how much stayed unnamed, what the dump holds, and what to do.
void ReportIncompleteBunDump(const ProcessTask& task, const RecordOptions& options,
                             std::FILE* err) {
  const double share = UnnamedShare(task, err);
  if (share < kBunIncompleteThreshold) return;
  std::string held;
  for (const SourceSpec& s : task.sources) {
    if (s.kind != SourceKind::kJitdump) continue;
    LoadCounter counter;
    Diagnostics quiet;
    JitdumpScanStats stats;
    try {
      std::unique_ptr<ByteSource> source = OpenInput(s.path);
      std::string bytes;
      char buffer[1 << 16];
      for (size_t n; (n = source->Read(buffer, sizeof buffer)) > 0;) bytes.append(buffer, n);
      stats = ScanJitdump(bytes, s.path, &counter, &quiet);
    } catch (const InputError&) {
      continue;
    }
    held += (held.empty() ? "" : "; ") + s.path + " has " + std::to_string(counter.loads) +
            " code records" +
            (stats.truncated ? " and ends inside the next one (" +
                                   std::to_string(stats.dropped_bytes) + " bytes of it)"
                             : "");
  }
  const bool waited = options.runtimes.Enabled("bun");
  std::fprintf(err,
               "warning: pid %llu (%s): %.2f%% of the cost stayed in unnamed JIT code: "
               "JavaScriptCore writes its jitdump on a thread of its own and the process ended "
               "before that thread had written it all (%s)\n",
               static_cast<unsigned long long>(task.process.pid), task.program.c_str(),
               share * 100.0, held.c_str());
  std::fprintf(err,
               "  %s; keep the program alive a few seconds at its end (`await "
               "Bun.sleep(3000)`) and record again\n",
               waited ? "record's wait at exit (BUN_OPTIONS=--preload) did not see it finish: "
                        "the process was killed, or exited without running 'exit' handlers"
                      : "record's wait at exit was off (--no-runtime-env)");
}

/// Says what was written for an injected process; for one without sources, whether it ran JIT
/// code (then the message explains the missing map and false is returned) or not (a note).
bool ReportResult(const ProcessTask& task, const RecordOptions& options,
                  const RecordEnvironment& env, const std::string& record_dir) {
  std::FILE* err = env.err;
  const auto pid = static_cast<unsigned long long>(task.process.pid);
  std::string outputs;
  for (const std::string& in : task.process.profiles) outputs += " " + in + task.inject.suffix;
  if (!task.sources.empty()) {
    if (options.verbosity > 0) {
      std::fprintf(err, "cg-inject: pid %llu: wrote%s\n", pid, outputs.c_str());
      if (const char* note = CallGraphNote(task.program)) std::fputs(note, err);
    }
    const RuntimeSwitch* runtime = LookupRuntimeForProgram(task.program);
    if (runtime != nullptr && runtime->runtime == "bun")
      ReportIncompleteBunDump(task, options, err);
    return true;
  }
  double share = UnnamedShare(task, err);
  if (share >= kJitShareThreshold) {
    std::fputs(ExplainMissingSources(task, options, env, record_dir, share).c_str(), err);
    std::fprintf(err, "cg-inject:   wrote%s with the addresses unnamed\n", outputs.c_str());
    return false;
  }
  if (options.verbosity > 0) {
    std::fprintf(err,
                 "cg-inject: note: pid %llu (%s) ran no JIT code (%.2f%% of the cost in unnamed "
                 "code, PLT stubs and the like); wrote%s unchanged\n",
                 pid, task.program.c_str(), share * 100.0, outputs.c_str());
  }
  return true;
}

/// A directory of this run's own inside DIR, where Callgrind writes: two runs into one -o DIR
/// took each other's profiles for their own (issue 36 item 8), as telling them apart by what
/// appeared in DIR during the run cannot work for runs at the same time. The profiles move into
/// DIR when the run is over; the directory is removed then, unless a process that left the
/// recording's process group is still writing into it.
class RecordingDirectory {
 public:
  explicit RecordingDirectory(const std::string& dir) {
    std::string pattern = Join(dir, ".cg-inject-record." + std::to_string(::getpid()) + ".XXXXXX");
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~RecordingDirectory() {
    if (!path_.empty()) ::rmdir(path_.c_str());  // only when empty
  }
  RecordingDirectory(const RecordingDirectory&) = delete;
  RecordingDirectory& operator=(const RecordingDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// RunChild's note: the program left processes running in its group.
void SayStillRunning(const std::vector<pid_t>& pids, void* context) {
  std::string list;
  for (pid_t p : pids) list += (list.empty() ? "" : ", ") + std::to_string(p);
  std::fprintf(static_cast<std::FILE*>(context),
               "cg-inject: the program ended and left %zu process%s running in its process group "
               "(%s): waiting for %s, as %s profile%s written when %s (Ctrl-C ends %s)\n",
               pids.size(), pids.size() == 1 ? "" : "es", list.c_str(),
               pids.size() == 1 ? "it" : "them", pids.size() == 1 ? "its" : "their",
               pids.size() == 1 ? " is" : "s are", pids.size() == 1 ? "it ends" : "they end",
               pids.size() == 1 ? "it" : "them");
}

bool ProcessIsAlive(uint64_t pid) {
  return pid > 0 && pid <= uint64_t(INT32_MAX) && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

int Record(const RecordOptions& options, const RecordEnvironment& env) {
  std::FILE* err = env.err;
  std::error_code ec;
  std::filesystem::create_directories(options.output_dir, ec);
  std::string dir = std::filesystem::absolute(options.output_dir, ec).lexically_normal().string();
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(err, "cg-inject: %s: cannot create the output directory\n",
                 options.output_dir.c_str());
    return int(ExitCode::kInputError);
  }
  RecordingDirectory recording(dir);
  if (recording.path().empty()) {
    std::fprintf(err, "cg-inject: %s: cannot create a directory in it: %s\n",
                 options.output_dir.c_str(), std::strerror(errno));
    return int(ExitCode::kInputError);
  }
  // Valgrind gets the absolute path (the program may change directory); the files are named
  // relative to the given directory, as the user wrote it, in messages and to RunCgInject.
  const std::string& shown_dir = options.output_dir;

  std::error_code self_ec;
  const ValgrindChoice valgrind =
      ChooseValgrind(options.valgrind_given ? options.valgrind : "",
                     std::filesystem::read_symlink("/proc/self/exe", self_ec).string());
  // The program is looked up first, as Valgrind will (PATH of the program's environment), so
  // that a missing program is told apart from a missing valgrind; the codes are the shell's.
  ProgramLookup found =
      FindProgram(options.program[0], LookupEnv(env.environ, "PATH", "/bin:/usr/bin"));
  if (found.error == ENOENT) {
    std::fprintf(err, "cg-inject: %s: program not found%s\n", options.program[0].c_str(),
                 options.program[0].find('/') == std::string::npos ? " in PATH" : "");
    return int(ExitCode::kNotFound);
  }
  if (found.error != 0) {
    std::fprintf(err, "cg-inject: %s: cannot run the program: not an executable file\n",
                 found.path.c_str());
    return int(ExitCode::kCannotRun);
  }
  const bool user_trace =
      std::any_of(options.valgrind_args.begin(), options.valgrind_args.end(),
                  [](const std::string& a) { return a.starts_with("--trace-children="); });
  const bool follow = !user_trace && (IsScript(found.path) || IsLauncherProgram(found.path));
  // Valgrind's own messages come through a pipe of record's (forwarded to stderr as they come),
  // so that Valgrind dying is told apart from the program (issue 33 item 9); a user's own log
  // destination wins.
  const bool user_log = std::any_of(options.valgrind_args.begin(), options.valgrind_args.end(),
                                    [](const std::string& a) { return a.starts_with("--log-"); });
  std::optional<ValgrindLog> valgrind_log;
  if (!user_log) valgrind_log.emplace(err);

  std::vector<std::string> argv = {
      valgrind.program, "--tool=callgrind", "--dump-instr=yes",
      "--callgrind-out-file=" + Join(recording.path(), "callgrind.out.%p")};
  if (options.verbosity == 0) argv.push_back("-q");  // no banner: errors only
  if (valgrind_log && valgrind_log->fd() >= 0)
    argv.push_back("--log-fd=" + std::to_string(valgrind_log->fd()));
  for (std::string& o : PlanValgrindOptions(options.program[0], options.runtimes))
    argv.push_back(std::move(o));
  if (follow) {
    argv.push_back("--trace-children=yes");
    argv.push_back(kUntracedHelpers);
  }
  argv.insert(argv.end(), options.valgrind_args.begin(), options.valgrind_args.end());
  std::vector<std::string> program = PlanProgramArgs(options.program, options.runtimes);
  argv.insert(argv.end(), program.begin(), program.end());
  const std::vector<std::pair<std::string, std::string>> dir_files = PlanDirFiles(options.runtimes);
  // Bun's jitdumps go into record's directory, so it is made for Bun even without files.
  RecordDirectory record_dir(env.roots.tmp_dir,
                             !dir_files.empty() || options.runtimes.Enabled("bun"), dir_files, err);
  std::vector<std::string> changes;
  std::vector<std::string> envp =
      PlanRuntimeEnv(env.environ, options.runtimes, record_dir.path(), &changes);
  // Where Bun writes its jitdumps: record's directory, or the user's own choice.
  std::vector<std::string> dump_dirs;
  if (std::string bun_dir = LookupEnv(envp, "BUN_JSC_jitDumpDirectory", ""); !bun_dir.empty())
    dump_dirs.push_back(bun_dir);
  if (!valgrind.valgrind_lib.empty()) {
    std::erase_if(envp, [](const std::string& e) { return e.starts_with("VALGRIND_LIB="); });
    envp.push_back("VALGRIND_LIB=" + valgrind.valgrind_lib);
  }
  if (options.verbosity >= 1) std::fprintf(err, "%s\n", valgrind.message.c_str());
  if (options.verbosity >= 2) {
    std::string line;
    for (const std::string& a : argv) line += " " + a;
    std::fprintf(err, "cg-inject: running%s\n", line.c_str());
    for (const std::string& c : changes) std::fprintf(err, "cg-inject:   with %s\n", c.c_str());
  }

  const int64_t started_ns = FileClockNowNs();
  ChildResult child = RunChild(argv, envp, SayStillRunning, err);
  std::string valgrind_failure;
  if (valgrind_log) {
    valgrind_log->Finish();
    valgrind_failure = valgrind_log->failure();
  }
  if (child.pid == 0) {
    return ReportSpawnError(valgrind.program, child.spawn_error,
                            LookupEnv(envp, "PATH", "/bin:/usr/bin"), err);
  }
  const int status = child.status;
  if (options.verbosity >= 2) std::fprintf(err, "cg-inject: valgrind exited with %d\n", status);
  // Valgrind died (an assertion, a panic): whatever it left is not the program's doing.
  const bool valgrind_failed = status != 0 && !valgrind_failure.empty();
  if (valgrind_failed)
    std::fprintf(err, "cg-inject: valgrind failed (exit status %d): %s\n", status,
                 valgrind_failure.c_str());

  // Every file here is this run's. Those of a process still running (it left the process group,
  // so it was not waited for) stay where Callgrind writes them; the rest move into DIR.
  std::vector<RecordedProcess> processes;
  for (RecordedProcess& p :
       GroupRecordedProfiles(recording.path(), ListDirectory(recording.path()), {})) {
    const bool all_empty = std::all_of(p.profiles.begin(), p.profiles.end(), [](auto& f) {
      struct stat fst;
      return ::stat(f.c_str(), &fst) == 0 && fst.st_size == 0;
    });
    if (all_empty && ProcessIsAlive(p.pid)) {
      std::fprintf(err,
                   "cg-inject: pid %llu is still running outside the recording's process group; "
                   "Callgrind writes %s when it ends: inject it then with cg-inject -i\n",
                   static_cast<unsigned long long>(p.pid), p.profiles.back().c_str());
      continue;
    }
    for (std::string& f : p.profiles) {
      if (::rename(f.c_str(), Join(dir, Basename(f)).c_str()) != 0) {
        std::fprintf(err, "cg-inject: cannot move %s into %s: %s\n", f.c_str(), dir.c_str(),
                     std::strerror(errno));
        continue;
      }
      f = Join(shown_dir, Basename(f));
    }
    processes.push_back(std::move(p));
  }
  if (processes.empty()) {
    if (valgrind_failed) {
      std::fprintf(err, "cg-inject: no Callgrind file was written to %s\n", dir.c_str());
    } else {
      std::fprintf(err,
                   "cg-inject: no Callgrind file was written to %s (valgrind exited with "
                   "status %d; see its messages above)\n",
                   dir.c_str(), status);
    }
    // Valgrind's own 126/127 (the program cannot be run or was not found) are passed on.
    bool not_run = status == int(ExitCode::kCannotRun) || status == int(ExitCode::kNotFound);
    return not_run ? status : int(ExitCode::kInputError);
  }

  // A process whose every file is empty ended without Callgrind's dump: Valgrind died, or it
  // exec'd a program Valgrind did not follow (or SIGKILL ended it). It is no result; the
  // program's own process is an error, another (a helper's subshell) a note.
  bool main_empty = false;
  std::erase_if(processes, [&](const RecordedProcess& p) {
    for (const std::string& f : p.profiles) {
      struct stat fst;
      if (::stat(f.c_str(), &fst) != 0 || fst.st_size != 0) return false;
    }
    const bool is_main = p.pid == uint64_t(child.pid);
    if (valgrind_failed) {
      // Callgrind writes its profile at exit, which a dying Valgrind never reaches.
      if (is_main || options.verbosity > 0)
        std::fprintf(err, "cg-inject: %spid %llu (%s) left an empty profile: valgrind failed\n",
                     is_main ? "" : "note: ", static_cast<unsigned long long>(p.pid),
                     is_main ? options.program[0].c_str() : "?");
      if (is_main) main_empty = true;
      return true;
    }
    if (is_main || options.verbosity > 0) {
      std::fprintf(err,
                   "cg-inject: %spid %llu (%s) left an empty profile: it exec'd a program that "
                   "ran outside Valgrind (or SIGKILL ended it)\n",
                   is_main ? "" : "note: ", static_cast<unsigned long long>(p.pid),
                   is_main ? options.program[0].c_str() : "?");
    }
    if (is_main) {
      main_empty = true;
      std::fprintf(err, "cg-inject:   %s\n",
                   follow ? "the exec'd program is one --trace-children-skip leaves out"
                          : "give -- --trace-children=yes -- to follow an exec");
    }
    return true;
  });

  std::vector<ProcessTask> tasks;
  for (RecordedProcess& p : processes) {
    ProcessTask task;
    task.process = std::move(p);
    std::vector<SourceSpec> found =
        CollectAndMoveSources(task.process.pid, env.roots, dump_dirs, shown_dir, started_ns, err);
    std::string why;
    task.sources = PickSources(found, &why);
    if (!why.empty() && options.verbosity > 0 && !task.sources.empty())
      std::fprintf(err, "cg-inject: pid %llu: using the %s: %s\n",
                   static_cast<unsigned long long>(task.process.pid),
                   task.sources[0].kind == SourceKind::kJitdump ? "jitdump" : "perf map",
                   why.c_str());
    for (const SourceSpec& s : found) task.files.push_back(s.path);
    for (std::string& f : MoveByproducts(task.process.pid, env.roots, shown_dir, err))
      task.files.push_back(std::move(f));
    // The program's own pid runs what it exec'd when children are followed (beam.smp for erl).
    task.program = task.process.pid == uint64_t(child.pid) && !follow && !user_trace
                       ? options.program[0]
                       : ReadProgramName(task.process.profiles[0]);
    if (task.program == "?") task.program = options.program[0];
    PlanInjection(options, &task);
    tasks.push_back(std::move(task));
  }
  int jobs =
      options.jobs > 0 ? options.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  RunTasks(&tasks, jobs);

  int worst = 0;
  bool missing_sources = false;
  for (ProcessTask& task : tasks) {
    if (tasks.size() > 1 && !task.messages.empty())
      std::fprintf(err, "cg-inject: pid %llu (%s):\n",
                   static_cast<unsigned long long>(task.process.pid), task.program.c_str());
    std::fputs(task.messages.c_str(), err);
    if (task.code != ExitCode::kOk) {
      if (worst == 0) worst = int(task.code);
      continue;  // the raw files stay, even with --clean
    }
    if (!ReportResult(task, options, env, record_dir.path())) missing_sources = true;
    if (options.clean) {
      for (const std::string& in : task.process.profiles) ::unlink(in.c_str());
      for (const std::string& f : task.files) ::unlink(f.c_str());
    }
  }
  if (worst != 0) return worst;
  if (missing_sources || main_empty) return int(ExitCode::kInputError);
  return status;
}

}  // namespace

RecordEnvironment RecordEnvironment::FromProcess() {
  RecordEnvironment env;
  for (char** e = ::environ; e != nullptr && *e != nullptr; ++e) env.environ.emplace_back(*e);
  env.roots = DiscoveryRoots::FromEnvironment();
  // LLVM's perf listener (Julia) writes under $JITDUMPDIR when set, else $HOME.
  if (const char* dir = std::getenv("JITDUMPDIR"); dir != nullptr && *dir != '\0')
    env.roots.home = dir;
  return env;
}

int RunRecord(const RecordOptions& options, const RecordEnvironment& env) {
  try {
    return Record(options, env);
  } catch (const InputError& e) {
    std::fprintf(env.err, "cg-inject: %s\n", e.what());
    return int(ExitCode::kInputError);
  } catch (const std::exception& e) {
    std::fprintf(env.err, "cg-inject: record: %s\n", e.what());
    return int(ExitCode::kInputError);
  }
}

}  // namespace cg_inject
