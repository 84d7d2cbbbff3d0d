// Conformance over real files: every Callgrind file in ../shared/corpus/callgrind and every
// tests/data capture must read, write and read back to the same ProfileSummary (digest of every
// record included), and callgrind_annotate, an independent reader, must print the same totals
// and per-function lines for the original and the rewritten file. Cachegrind files must be
// refused with a located error.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/profile_summary.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

const std::string kRoot = CG_INJECT_SOURCE_ROOT;
const std::string kCorpus = kRoot + "/../shared/corpus/callgrind";

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void ListRecursive(const std::string& dir, std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    if (IsDir(path)) {
      ListRecursive(path, out);
    } else {
      out->push_back(path);
    }
  }
  closedir(d);
  std::sort(out->begin(), out->end());
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> CallgrindFiles() {
  std::vector<std::string> all, files;
  ListRecursive(kCorpus, &all);
  for (const std::string& path : all) {
    std::string base = BaseName(path);
    if (EndsWith(base, ".callgrind") || base.find(".out") != std::string::npos)
      files.push_back(path);
  }
  std::vector<std::string> data;
  ListRecursive(kRoot + "/tests/data", &data);
  for (const std::string& path : data) {
    // valgrind --separate-threads=yes leaves the base callgrind.out empty; it is no profile.
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && st.st_size == 0) continue;
    if (BaseName(path).rfind("callgrind.out", 0) == 0) files.push_back(path);
  }
  return files;
}

std::string ReadFile(const std::string& path) { return ReadWholeFile(path); }

void Summarize(std::string_view bytes, const std::string& name, ProfileSummary* summary) {
  auto in = OpenMemoryInput(bytes, name);
  Diagnostics diagnostics;
  ReadCallgrind(*in, *summary, {.diagnostics = &diagnostics});
}

std::string Rewrite(std::string_view bytes, const std::string& name,
                    CallgrindWriterOptions options = {}) {
  auto in = OpenMemoryInput(bytes, name);
  StringSink out;
  CallgrindWriter writer(&out, options);
  Diagnostics diagnostics;
  ReadCallgrind(*in, writer, {.diagnostics = &diagnostics});
  return out.data();
}

/// Files the reader refuses on purpose, with the exact message.
const std::map<std::string, std::string> kRefused = {
    // +N/-N/* in cost columns: not in the spec (only positions are compressed); refused.
    {"speedscope-subposition-compression.callgrind",
     "speedscope-subposition-compression.callgrind:13: expected a cost (a decimal or 0x hex "
     "number), got '*'"},
};

/// Files callgrind_annotate itself cannot read, and why (checked: it must fail on them).
const std::map<std::string, std::string> kAnnotateRejects = {
    // lsprofcalltree writes fi= before the first fn=; callgrind_annotate dies with
    // "Unexpected fi/fe line".
    {"gprof2dot-bzr.callgrind", "fi= before fn="},
    // `positions: line memAddr`: it takes the hex memAddr column for a cost and dies with
    // "too many event counts".
    {"qtcreator-multiCostAndPos.out", "memAddr column"},
    {"qtcreator-multiPos.out", "memAddr column"},
};

/// Files whose summary: is not what their costs add up to (Qt Creator's hand-edited tests and
/// others), with that sum. The reader warns and keeps the file's summary: (issue 23: a second,
/// corrected one changed callgrind_annotate's percentages and totals).
const std::map<std::string, std::string> kTrueSummary = {
    {"qtcreator-calleeFunctions.out", "830"},
    {"qtcreator-inlinedFunctions.out", "804"},
    {"qtcreator-recursion.out", "35700865"},
    {"qtcreator-simpleFunction.out", "23"},
    {"gprof2dot-bzr.callgrind", "1482191"},  // lsprofcalltree
    // Callgrind 3.5 wrote summary: 0 for a client-request dump; its totals: is right.
    {"gprof2dot-googlecode-issue34.callgrind",
     "192717159265 64592858456 41880232760 9202071 127695919 4750724 3468 44754 10930"},
};

/// The lines of `text` that start with `prefix`, in order.
std::vector<std::string> LinesStartingWith(std::string_view text, std::string_view prefix) {
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.starts_with(prefix)) lines.emplace_back(line);
    pos = end + 1;
  }
  return lines;
}

TEST(CorpusTest, WrongSummariesAreWarnedAboutAndKeptOnce) {
  if (!IsDir(kCorpus)) GTEST_SKIP() << "no corpus at " << kCorpus;
  for (const auto& [base, sum] : kTrueSummary) {
    SCOPED_TRACE(base);
    std::string bytes = ReadFile(kCorpus + "/" + base);
    auto in = OpenMemoryInput(bytes, base);
    StringSink out;
    CallgrindWriter writer(&out);
    Diagnostics diagnostics;
    ReadCallgrind(*in, writer, {.diagnostics = &diagnostics});
    ASSERT_EQ(diagnostics.kinds().size(), 1u);
    EXPECT_EQ(diagnostics.kinds()[0].kind, "callgrind: costs disagree with summary:/totals:");
    EXPECT_NE(diagnostics.kinds()[0].first_messages[0].find("add up to (" + sum + ")"),
              std::string::npos)
        << diagnostics.kinds()[0].first_messages[0];
    // One summary: per part, the file's own.
    std::vector<std::string> summaries = LinesStartingWith(bytes, "summary:");
    ASSERT_FALSE(summaries.empty());
    EXPECT_EQ(LinesStartingWith(out.data(), "summary:"), summaries);
  }
}

TEST(CorpusTest, EveryCallgrindFileRoundTrips) {
  if (!IsDir(kCorpus)) GTEST_SKIP() << "no corpus at " << kCorpus;
  std::vector<std::string> files = CallgrindFiles();
  ASSERT_GE(files.size(), 20u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    std::string base = BaseName(path);
    std::string bytes = ReadFile(path);
    auto refused = kRefused.find(base);
    if (refused != kRefused.end()) {
      try {
        ProfileSummary ignored;
        Summarize(bytes, base, &ignored);
        ADD_FAILURE() << "expected an error";
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), refused->second);
      }
      continue;
    }
    ProfileSummary original;
    ASSERT_NO_THROW(Summarize(bytes, base, &original));
    EXPECT_FALSE(original.parts().empty());

    std::string written = Rewrite(bytes, base);
    ProfileSummary reread;
    ASSERT_NO_THROW(Summarize(written, base + " (rewritten)", &reread)) << written.substr(0, 2000);
    EXPECT_EQ(CompareSummaries(original, reread), "");

    // Without compression the records are the same too.
    std::string plain =
        Rewrite(bytes, base, {.compress_names = false, .compress_positions = false});
    ProfileSummary plain_summary;
    ASSERT_NO_THROW(Summarize(plain, base + " (plain)", &plain_summary));
    EXPECT_EQ(CompareSummaries(original, plain_summary), "");

    // Writing is a fixed point: rewriting our own output gives the same bytes.
    EXPECT_EQ(Rewrite(written, base), written);
    // And zstd input reads the same.
    if (bytes.rfind("\x28\xB5\x2F\xFD", 0) == 0) continue;  // already compressed
    StringSink packed;
    auto zsink = MakeZstdSink(&packed);
    zsink->Write(bytes);
    zsink->Finish();
    ProfileSummary unpacked;
    Summarize(packed.data(), base, &unpacked);
    EXPECT_EQ(CompareSummaries(original, unpacked), "");
  }
}

TEST(CorpusTest, CachegrindFilesAreRefused) {
  if (!IsDir(kCorpus)) GTEST_SKIP() << "no corpus at " << kCorpus;
  std::vector<std::string> all;
  ListRecursive(kCorpus, &all);
  int seen = 0;
  for (const std::string& path : all) {
    if (!EndsWith(path, ".cgout")) continue;
    SCOPED_TRACE(path);
    ++seen;
    std::string base = BaseName(path);
    try {
      ProfileSummary ignored;
      Summarize(ReadFile(path), base, &ignored);
      ADD_FAILURE() << "expected an error";
    } catch (const InputError& e) {
      std::string what = e.what();
      EXPECT_EQ(what.rfind(base + ":", 0), 0u) << what;
      EXPECT_NE(what.find(": expected a Callgrind header (# callgrind format, version:, creator:, "
                          "positions: or summary:) before the first record, got 'fl="),
                std::string::npos)
          << what;
    }
  }
  EXPECT_GE(seen, 10);
}

// --- callgrind_annotate as an independent reader --------------------------------------------

struct Annotated {
  int status = -1;
  std::vector<std::string> lines;  // sorted, trailing blanks removed, file-name line dropped
};

/// A function line whose every cost column is "." (no cost at all). callgrind_annotate makes
/// such entries for "file:function" pairs whenever a fi=/fe= line switches files, even when no
/// cost follows; a writer that leaves out a fi=/fe= with nothing after it changes only these.
bool AllCostsAreDots(const std::string& line) {
  size_t i = 0;
  bool dots = false;
  while (i < line.size() && (line[i] == ' ' || line[i] == '.')) {
    dots |= line[i] == '.';
    ++i;
  }
  return dots && i > 0 && i < line.size() && line[i - 1] == ' ';
}

/// Starts callgrind_annotate on `path`; FinishAnnotate collects it. Two run at once so that the
/// test takes half as long on two cores (a blocked writer just waits until it is read).
FILE* StartAnnotate(const std::string& args, const std::string& path) {
  std::string command = "callgrind_annotate " + args + " '" + path + "' 2>/dev/null";
  return popen(command.c_str(), "r");
}

Annotated FinishAnnotate(FILE* pipe) {
  Annotated result;
  if (pipe == nullptr) return result;
  std::string text;
  char buf[65536];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) text.append(buf, n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    start = nl + 1;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.rfind("Profile data file", 0) == 0) continue;  // names the file
    if (AllCostsAreDots(line)) continue;
    result.lines.push_back(line);
  }
  // Ties in cost are printed in hash order, so compare the lines as a sorted list.
  std::sort(result.lines.begin(), result.lines.end());
  return result;
}

TEST(CorpusTest, CallgrindAnnotateSeesTheSameProfile) {
  if (!IsDir(kCorpus)) GTEST_SKIP() << "no corpus at " << kCorpus;
  if (access("/usr/bin/callgrind_annotate", X_OK) != 0) GTEST_SKIP() << "no callgrind_annotate";
  char dir_template[] = "/tmp/cg_inject_corpus_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  for (const std::string& path : CallgrindFiles()) {
    std::string base = BaseName(path);
    if (kRefused.count(base)) continue;
    SCOPED_TRACE(path);
    std::string rewritten = dir + "/" + base;
    std::string bytes = ReadFile(path);
    {
      std::ofstream out(rewritten, std::ios::binary);
      out << Rewrite(bytes, base);
    }
    // callgrind_annotate reads only plain text: give it a decompressed copy of .zst captures.
    // A file whose summary: is wrong is compared as it is: its percentages must not change.
    std::string original = path;
    if (bytes.rfind("\x28\xB5\x2F\xFD", 0) == 0) {
      original = dir + "/orig-" + base;
      auto in = OpenMemoryInput(bytes, base);
      std::ofstream out(original, std::ios::binary);
      char buf[65536];
      while (size_t n = in->Read(buf, sizeof buf)) out.write(buf, static_cast<std::streamsize>(n));
    }
    for (const char* args :
         {"--auto=no --threshold=100", "--auto=no --threshold=100 --inclusive=yes"}) {
      // --auto=no: source annotation would read the sources on disk, which may change between
      // the two runs; only the profile matters here.
      SCOPED_TRACE(args);
      FILE* pipe_a = StartAnnotate(args, original);
      FILE* pipe_b = StartAnnotate(args, rewritten);
      Annotated a = FinishAnnotate(pipe_a);
      Annotated b = FinishAnnotate(pipe_b);
      if (kAnnotateRejects.count(base)) {
        EXPECT_NE(a.status, 0) << "callgrind_annotate now reads " << base;
        continue;
      }
      ASSERT_EQ(a.status, 0);
      EXPECT_EQ(b.status, 0);
      EXPECT_EQ(a.lines, b.lines);
    }
    unlink(rewritten.c_str());
    if (original != path) unlink(original.c_str());
  }
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace cg_inject
