// Decides where each input's output goes and refuses combinations that would lose data: an
// output that is one of the files the run reads (an input, a symbol source, stdin's file; same
// device and inode), two outputs with one name, several inputs into one file.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cg_inject {

struct CliOptions;

struct PlannedOutput {
  std::string input;
  std::string output;     // "-" = stdout
  std::string callgraph;  // --callgraph FILE (FILE.N with several inputs), "" for none
  bool zstd = false;      // compress (asked for, or the name ends in .zst)
};

/// Pairs every input with its output path. Throws InputError (usage-like problems are reported
/// as "cg-inject: ..." by the caller) when an output is an input and --in-place is not given,
/// when two outputs (profiles, call graphs) have one name, or when the call graph and the
/// profile would both go to stdout.
std::vector<PlannedOutput> PlanOutputs(const CliOptions& options);

/// The files a run reads, by device and inode: a write onto one is refused. Names that do not
/// exist and character devices (/dev/null reads as empty and writes as nothing) are not kept.
class ReadFiles {
 public:
  /// `role` says what the file is in messages ("the input", "the perf map").
  void Add(const std::string& path, const std::string& role);
  /// Standard input, when it is a regular file (`-i - < FILE`).
  void AddStdin();
  /// Throws InputError when `output` (symlinks followed; "-" = stdout when it is a regular file)
  /// is one of the files read. `what` names the output's option in the message ("output",
  /// "--callgraph output"); `in_place` lets it be an input (not a source).
  void CheckOutput(const std::string& output, const std::string& what, bool in_place) const;

 private:
  struct File {
    dev_t dev = 0;
    ino_t ino = 0;
    std::string path;
    std::string role;
  };
  std::vector<File> files_;
};

/// The checks PlanOutputs makes, again with the discovered symbol sources `sources` (known only
/// once the inputs' pids are read). Throws InputError.
void CheckPlannedOutputs(const CliOptions& options, const std::vector<PlannedOutput>& plan,
                         const std::vector<std::string>& sources);

/// The inputs (stdin's file too), the explicit symbol sources and `sources` (discovered ones).
ReadFiles CollectReadFiles(const CliOptions& options, const std::vector<std::string>& sources);

/// For an empty `input` named like `callgrind.out.PID`, the per-thread files Callgrind wrote
/// beside it with --separate-threads=yes (`callgrind.out.PID-NN`), sorted; empty otherwise.
std::vector<std::string> FindPerThreadSiblings(const std::string& input);

}  // namespace cg_inject
