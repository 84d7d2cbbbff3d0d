#include "callgrind/background_sink.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

// Every record kind, two parts, compressed names, relative positions, a jump and a header after
// the body: what the writer makes of it must not depend on the thread it runs on.
constexpr std::string_view kProfile =
    "# callgrind format\n"
    "version: 1\n"
    "creator: callgrind-3.19.0\n"
    "positions: instr line\n"
    "events: Ir Dr\n"
    "summary: 35 3\n"
    "\n"
    "ob=(1) /usr/bin/app\n"
    "fl=(1) app.c\n"
    "fn=(1) main\n"
    "0x1000 3 4 1\n"
    "+2 * 2\n"
    "jump=3 0x1010 5\n"
    "+4 6\n"
    "cfn=(2) helper\n"
    "calls=2 0x2000 20\n"
    "* * 10 2\n"
    "fn=(2)\n"
    "0x2000 20 10 1\n"
    "totals: 16 2\n"
    "part: 2\n"
    "positions: instr line\n"
    "events: Ir Dr\n"
    "\n"
    "ob=(1) /usr/bin/app\n"
    "fl=(1) app.c\n"
    "fn=(1) main\n"
    "0x1000 3 19 1\n"
    "totals: 19 1\n";

std::string WriteDirect(std::string_view text) {
  auto in = OpenMemoryInput(text, "in.cg");
  StringSink out;
  CallgrindWriter writer(&out, {});
  ReadCallgrind(*in, writer);
  writer.Flush();
  return out.data();
}

std::string WriteInBackground(std::string_view text) {
  auto in = OpenMemoryInput(text, "in.cg");
  StringSink out;
  CallgrindWriter writer(&out, {});
  BackgroundSink background(&writer);
  ReadCallgrind(*in, background);
  background.Finish();
  writer.Flush();
  return out.data();
}

TEST(BackgroundSinkTest, WritesWhatTheWriterWritesDirectly) {
  std::string direct = WriteDirect(kProfile);
  EXPECT_NE(direct.find("jump=3"), std::string::npos);
  EXPECT_EQ(WriteInBackground(kProfile), direct);
}

/// Every field a sink may read, as text: positions in the layout's columns, names with their ids,
/// costs, input text and, with it, the position that text is relative to.
class Transcript : public ProfileSink {
 public:
  std::string text;
  void OnPartBegin(int i) override { text += "part " + std::to_string(i) + "\n"; }
  void OnHeader(std::string_view k, std::string_view v) override {
    text += "header " + std::string(k) + ":" + std::string(v) + "\n";
  }
  void OnLayout(const PartLayout& l) override {
    columns_ = l.positions.count;
    text += "layout " + std::to_string(columns_) + "\n";
  }
  void OnFunction(const FunctionContext& f) override {
    text += "fn " + N(f.object) + N(f.file) + N(f.function) + "[" + std::string(f.raw) + "] line " +
            std::to_string(f.line) + "\n";
  }
  void OnCost(const CostRecord& c) override {
    text += "cost " + P(c.position) + N(c.source_file) + C(c.costs) + R(c.raw, c.raw_base) + "\n";
  }
  void OnCall(const CallRecord& c) override {
    text += "call " + std::to_string(c.count) + P(c.target) + P(c.source) + N(c.source_file) +
            N(c.target_object) + N(c.target_file) + N(c.target_function) + C(c.inclusive) +
            R(c.raw, c.raw_base) + "\n";
  }
  void OnJump(const JumpRecord& j) override {
    text += "jump " + std::to_string(j.followed) + "/" + std::to_string(j.executed) + P(j.target) +
            P(j.source) + N(j.source_file) + N(j.target_file) + N(j.target_function) +
            R(j.raw, j.raw_base) + "\n";
  }
  void OnPartEnd() override { text += "end\n"; }

 private:
  std::string P(const Position& p) const {
    std::string out = " @";
    for (int i = 0; i < columns_; ++i) out += std::to_string(p.values[i]) + ",";
    return out;
  }
  static std::string N(const Name& n) {
    return " " + std::to_string(n.id) + ":" + std::string(n.text);
  }
  static std::string C(std::span<const uint64_t> costs) {
    std::string out = " =";
    for (uint64_t c : costs) out += " " + std::to_string(c);
    return out;
  }
  std::string R(std::string_view raw, const Position& base) const {
    return raw.empty() ? " no raw" : " [" + std::string(raw) + "]" + P(base);
  }
  int columns_ = kMaxPositionColumns;
};

/// "" when equal, else the first line that differs in each (a diff of megabytes would not fit).
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  if (at == a.size() && at == b.size()) return "";
  auto line = [&](const std::string& s) {
    size_t begin = s.rfind('\n', at == 0 ? 0 : at - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    return s.substr(begin, s.find('\n', at) - begin);
  };
  return "line " + std::to_string(std::count(a.begin(), a.begin() + at, '\n') + 1) + ": " +
         line(a) + " | " + line(b);
}

// Every field replays as the producer gave it, across files, jumps, parts and batches.
TEST(BackgroundSinkTest, EveryFieldReplaysAsGiven) {
  std::string many(kProfile);
  many += "part: 3\npositions: line\nevents: Ir\nob=o\nfl=a.c\nfn=f\n";
  for (int i = 0; i < 30000; ++i) {
    if (i % 7 == 0) many += (i % 14 == 0 ? "fi=b.h\n" : "fe=a.c\n");
    many += "+" + std::to_string(i % 5) + " " + std::to_string(i) + "\n";
    if (i % 11 == 0) many += "cfi=c.c\ncfn=g\ncalls=2 +3\n* 4\n";
  }
  many += "totals: 449985000\n";
  for (const std::string& text : {std::string(kProfile), many}) {
    Transcript direct, behind;
    ReadCallgrind(*OpenMemoryInput(text, "in.cg"), direct);
    {
      BackgroundSink background(&behind);
      ReadCallgrind(*OpenMemoryInput(text, "in.cg"), background);
      background.Finish();
    }
    EXPECT_NE(direct.text.find("jump 3/3"), std::string::npos);
    EXPECT_EQ(FirstDifference(behind.text, direct.text), "");
  }
}

// Costs and texts of every size the batch copies by a different path (none; under 8, 16, 32 and
// 64 bytes; more), each at every alignment its record may start at.
TEST(BackgroundSinkTest, CostsAndTextsOfEverySizeReplayAsGiven) {
  std::string letters;
  for (int i = 0; i < 200; ++i) letters += char('a' + i % 26);
  std::vector<uint64_t> values(20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0x0102030405060708u * (i + 1);
  Transcript direct, behind;
  {
    BackgroundSink background(&behind);
    static const std::string_view kEvents[] = {"Ir"};
    for (ProfileSink* sink :
         {static_cast<ProfileSink*>(&direct), static_cast<ProfileSink*>(&background)}) {
      sink->OnPartBegin(0);
      sink->OnLayout(PartLayout{PositionLayout{}, kEvents});
      sink->OnFunction(FunctionContext{Name{1, "o"}, Name{2, "f.c"}, Name{3, "f"}});
      for (size_t events = 0; events <= values.size(); ++events) {
        for (size_t length : {0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 150}) {
          Position position;
          position.values[0] = events * 1000 + length;
          std::span<const uint64_t> costs(values.data(), events);
          std::string_view raw(letters.data() + events % 8, length);
          sink->OnCost(CostRecord{position, Name{2, "f.c"}, costs, raw, position});
          sink->OnCall(CallRecord{events, position, position, Name{2, "f.c"}, Name{1, "o"},
                                  Name{2, "f.c"}, Name{3, "f"}, costs, raw, position});
        }
      }
      sink->OnPartEnd();
    }
    background.Finish();
  }
  EXPECT_NE(direct.text.find(" " + std::to_string(values[19]) + " ["), std::string::npos);
  EXPECT_EQ(FirstDifference(behind.text, direct.text), "");
}

/// `parts` parts of 20,000 functions with five cost lines and a call each: many batches.
std::string ManyBatchesProfile(int parts) {
  std::string text;
  for (int part = 0; part < parts; ++part) {
    text +=
        "# callgrind format\nversion: 1\ncreator: test\npositions: line\nevents: Ir\n\n"
        "ob=/usr/bin/app\nfl=app.c\n";
    for (int f = 0; f < 20000; ++f) {
      text += "fn=function_" + std::to_string(f) + "\n";
      for (int line = 1; line <= 5; ++line)
        text += std::to_string(line * 7 + f % 13) + " " + std::to_string(f * 5 + line) + "\n";
      text += "cfn=function_" + std::to_string((f + 1) % 20000) + "\ncalls=1 3\n9 " +
              std::to_string(f + 1) + "\n";
    }
  }
  return text;
}

// Enough records for many batches: order and content survive the hand-overs.
TEST(BackgroundSinkTest, ManyBatchesKeepTheirOrder) {
  const std::string text = ManyBatchesProfile(1);
  std::string direct = WriteDirect(text);
  // A record takes more room in a batch than as text: several 256 KiB batches.
  ASSERT_GT(direct.size(), size_t{1} << 20);
  EXPECT_EQ(WriteInBackground(text), direct);
}

/// What a writer throws when its disk is full (a type of its own: the test checks the producer
/// gets this very exception).
struct DiskFull : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Fails at the n-th record it receives.
class FailingSink : public ProfileSink {
 public:
  explicit FailingSink(int fail_at) : fail_at_(fail_at) {}
  void OnPartBegin(int) override {}
  void OnHeader(std::string_view, std::string_view) override {}
  void OnLayout(const PartLayout&) override {}
  void OnFunction(const FunctionContext&) override { Count(); }
  void OnCost(const CostRecord&) override { Count(); }
  void OnCall(const CallRecord&) override { Count(); }
  void OnJump(const JumpRecord&) override { Count(); }
  void OnPartEnd() override {}
  int seen() const { return seen_; }

 private:
  void Count() {
    if (++seen_ == fail_at_) throw DiskFull("out.cg: cannot write: No space left on device");
  }
  int fail_at_;
  int seen_ = 0;
};

// The writer's error reaches the producer as itself, and the producer stops reading.
TEST(BackgroundSinkTest, DownstreamErrorIsThrownToTheProducer) {
  FailingSink failing(3);
  BackgroundSink background(&failing);
  auto in = OpenMemoryInput(kProfile, "in.cg");
  try {
    ReadCallgrind(*in, background);
    background.Finish();
    FAIL() << "no error";
  } catch (const DiskFull& e) {
    EXPECT_STREQ(e.what(), "out.cg: cannot write: No space left on device");
  }
  EXPECT_EQ(failing.seen(), 3);
}

/// Throws from inside the reader's callbacks (at a call line, unless told not to), as the
/// injector does on a bad input.
class ThrowingStage : public ProfileSink {
 public:
  explicit ThrowingStage(ProfileSink* next, bool throws = true) : next_(next), throws_(throws) {}
  void OnPartBegin(int i) override { next_->OnPartBegin(i); }
  void OnHeader(std::string_view k, std::string_view v) override { next_->OnHeader(k, v); }
  void OnRawHeader(std::string_view k, std::string_view v, std::string_view raw) override {
    next_->OnRawHeader(k, v, raw);
  }
  void OnLayout(const PartLayout& l) override { next_->OnLayout(l); }
  void OnFunction(const FunctionContext& f) override { next_->OnFunction(f); }
  void OnCost(const CostRecord& c) override { next_->OnCost(c); }
  void OnCall(const CallRecord& c) override {
    if (throws_) throw InputError("in.cg:15: expected no calls");
    next_->OnCall(c);
  }
  void OnJump(const JumpRecord& j) override { next_->OnJump(j); }
  void OnPartEnd() override { next_->OnPartEnd(); }
  void OnAbort() override {
    aborted_ = true;
    next_->OnAbort();
  }
  bool aborted() const { return aborted_; }

 private:
  ProfileSink* next_;
  bool throws_;
  bool aborted_ = false;
};

// A failing producer stops the thread through OnAbort before its reader's names go away (under
// ASan, a replay after that would be a use after free), and its error is the one reported.
TEST(BackgroundSinkTest, ProducerErrorAbortsTheThread) {
  StringSink out;
  CallgrindWriter writer(&out, {});
  BackgroundSink background(&writer);
  ThrowingStage stage(&background);
  auto in = OpenMemoryInput(kProfile, "in.cg");
  EXPECT_THROW(ReadCallgrind(*in, stage), InputError);
  EXPECT_TRUE(stage.aborted());
}

// With the injector on a thread too (reader -> background -> injector -> background -> writer),
// a reader's error stops the first thread and then reaches the stages after it, so the second
// thread stops too before the reader's names go away.
TEST(BackgroundSinkTest, AbortReachesTheStagesBehindTheThread) {
  StringSink out;
  CallgrindWriter writer(&out, {});
  BackgroundSink writer_thread(&writer);
  ThrowingStage injector(&writer_thread, /*throws=*/false);
  BackgroundSink injector_thread(&injector);
  const std::string profile = std::string(kProfile) + "fn=late\n1 not-a-number\n";
  auto in = OpenMemoryInput(profile, "in.cg");
  EXPECT_THROW(ReadCallgrind(*in, injector_thread), InputError);
  EXPECT_TRUE(injector.aborted());
}

/// reader -> thread (`stage` on it, passing records on) -> DrainedByCaller -> `sink`, the reader's
/// thread draining the second sink as cg-inject does with sources.
void ReadThroughDrainedChain(std::string_view text, ProfileSink* sink, bool stage_throws = false,
                             bool* aborted = nullptr) {
  BackgroundSink drained(sink, BackgroundSink::DrainedByCaller{});
  ThrowingStage stage(&drained, stage_throws);
  BackgroundSink staged(&stage, "cgi-test-stage");
  staged.DrainWhileWaiting(&drained);
  auto in = OpenMemoryInput(text, "in.cg");
  try {
    ReadCallgrind(*in, staged);
    staged.Finish();
    drained.Finish();
  } catch (...) {
    if (aborted != nullptr) *aborted = stage.aborted();
    throw;
  }
}

// Many batches each way and several part ends, where each thread waits for the other: the
// reader's thread replays the second sink's batches while it waits, so nothing deadlocks, and
// the output is what the writer writes directly.
TEST(BackgroundSinkTest, DrainedByTheReadersThreadWritesWhatTheWriterWritesDirectly) {
  for (const std::string& text : {std::string(kProfile), ManyBatchesProfile(3)}) {
    StringSink out;
    CallgrindWriter writer(&out, {});
    ReadThroughDrainedChain(text, &writer);
    writer.Flush();
    EXPECT_EQ(out.data(), WriteDirect(text));
  }
}

// The writer's error, thrown on the reader's thread while it drains, reaches the reader as itself
// and the stage's thread stops (it may have been waiting for the drained sink's room).
TEST(BackgroundSinkTest, DrainedWritersErrorReachesTheReader) {
  for (int fail_at : {3, 60000}) {
    FailingSink failing(fail_at);
    try {
      ReadThroughDrainedChain(ManyBatchesProfile(2), &failing);
      FAIL() << "no error";
    } catch (const DiskFull& e) {
      EXPECT_STREQ(e.what(), "out.cg: cannot write: No space left on device");
    }
    EXPECT_EQ(failing.seen(), fail_at);
  }
}

// A stage's error on its thread (the injector's, at a call line) reaches the reader, which
// aborts the chain: the stage's OnAbort runs and nothing is left waiting.
TEST(BackgroundSinkTest, StageErrorBeforeTheDrainedSinkAbortsTheChain) {
  StringSink out;
  CallgrindWriter writer(&out, {});
  bool aborted = false;
  EXPECT_THROW(
      ReadThroughDrainedChain(ManyBatchesProfile(1), &writer, /*stage_throws=*/true, &aborted),
      InputError);
  EXPECT_TRUE(aborted);
}

// A reader's error midway, with batches queued both ways, stops both sinks.
TEST(BackgroundSinkTest, ReaderErrorStopsTheDrainedChain) {
  StringSink out;
  CallgrindWriter writer(&out, {});
  bool aborted = false;
  EXPECT_THROW(ReadThroughDrainedChain(ManyBatchesProfile(1) + "fn=late\n1 not-a-number\n", &writer,
                                       false, &aborted),
               InputError);
  EXPECT_TRUE(aborted);
}

/// A stage that holds its first record until the producer is done, then passes every cost
/// record on `copies` times: its thread hands the drained sink more batches than that sink queues
/// while the producer's thread is away.
class GatedStage : public ProfileSink {
 public:
  GatedStage(ProfileSink* next, int copies) : next_(next), copies_(copies) {}
  void Open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }
  void OnPartBegin(int i) override {
    {
      std::unique_lock lock(mutex_);
      opened_.wait(lock, [&] { return open_; });
    }
    next_->OnPartBegin(i);
  }
  void OnHeader(std::string_view k, std::string_view v) override { next_->OnHeader(k, v); }
  void OnLayout(const PartLayout& l) override { next_->OnLayout(l); }
  void OnFunction(const FunctionContext& f) override { next_->OnFunction(f); }
  void OnCost(const CostRecord& c) override {
    for (int i = 0; i < copies_; ++i) next_->OnCost(c);
  }
  void OnCall(const CallRecord& c) override { next_->OnCall(c); }
  void OnJump(const JumpRecord& j) override { next_->OnJump(j); }
  void OnPartEnd() override { next_->OnPartEnd(); }

 private:
  ProfileSink* next_;
  int copies_;
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

/// Counts the cost records it is given, on the thread that is not `producer`'s, and checks they
/// come in order; fails at `fail_at` (0: never).
class CountingSink : public ProfileSink {
 public:
  CountingSink(std::thread::id producer, int fail_at) : producer_(producer), fail_at_(fail_at) {}
  void OnPartBegin(int) override {}
  void OnHeader(std::string_view, std::string_view) override {}
  void OnLayout(const PartLayout&) override {}
  void OnFunction(const FunctionContext&) override {}
  void OnCost(const CostRecord& cost) override {
    if (++seen_ == fail_at_) {
      failed_ = true;
      throw DiskFull("out.cg: cannot write: No space left on device");
    }
    if (cost.costs[0] < last_) in_order_ = false;
    last_ = cost.costs[0];
    if (std::this_thread::get_id() != producer_) ++off_producer_;
  }
  void OnCall(const CallRecord&) override {}
  void OnJump(const JumpRecord&) override {}
  void OnPartEnd() override {}
  int off_producer() const { return off_producer_; }
  bool failed() const { return failed_; }
  bool in_order() const { return in_order_; }

 private:
  std::thread::id producer_;
  int fail_at_;
  int seen_ = 0;
  uint64_t last_ = 0;
  bool in_order_ = true;
  std::atomic<int> off_producer_{0};
  std::atomic<bool> failed_{false};
};

// About 90 bytes a record in a batch: three 256 KiB batches into the stage are handed before the
// part's end, and nine out of it, more than twice what the drained sink queues.
constexpr int kGatedRecords = 11000;
constexpr int kGatedCopies = 3;

/// Sends kGatedRecords cost records into reader-thread -> `staged` (GatedStage) -> drained ->
/// `sink`, opens the gate and waits up to `wait` for `sink` to have `expected` records from
/// another thread (or to fail) before finishing the chain.
void SendThroughGatedChain(CountingSink* sink, int expected, std::chrono::seconds wait) {
  BackgroundSink drained(sink, BackgroundSink::DrainedByCaller{});
  GatedStage stage(&drained, kGatedCopies);
  BackgroundSink staged(&stage, "cgi-test-stage");
  staged.DrainWhileWaiting(&drained);
  static const std::string_view kEvents[] = {"Ir"};
  staged.OnPartBegin(0);
  staged.OnLayout(PartLayout{PositionLayout{}, kEvents});
  staged.OnFunction(FunctionContext{Name{1, "app"}, Name{2, "app.c"}, Name{3, "main"}});
  for (int i = 0; i < kGatedRecords; ++i) {
    const uint64_t costs[] = {uint64_t(i)};
    Position position;
    position.values[0] = uint64_t(i);
    staged.OnCost(CostRecord{position, Name{2, "app.c"}, costs});
  }
  stage.Open();
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (sink->off_producer() < expected && !sink->failed() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  staged.OnPartEnd();
  staged.Finish();
  drained.Finish();
}

// With the producer away (the reader's thread reading), the stage's thread writes what it handed
// the drained sink: while its own queue is empty, and itself when the drained sink's queue is full
// rather than wait for the producer. Without that the records wait for the producer's next batch.
TEST(BackgroundSinkTest, DrainedSinkIsWrittenByTheStagesThreadWhileTheProducerIsAway) {
  CountingSink sink(std::this_thread::get_id(), 0);
  // Half the records: more than the drained sink queues, fewer than the batches handed before
  // the part's end hold (the producer's last, partial batch waits for it).
  const int expected = kGatedRecords * kGatedCopies / 2;
  SendThroughGatedChain(&sink, expected, std::chrono::seconds(20));
  EXPECT_GE(sink.off_producer(), expected);
  EXPECT_TRUE(sink.in_order());
}

// The writer's error, thrown on the stage's thread while it writes for the producer, reaches the
// producer as itself.
TEST(BackgroundSinkTest, DrainedWritersErrorOnTheStagesThreadReachesTheProducer) {
  CountingSink sink(std::this_thread::get_id(), 5000);
  try {
    SendThroughGatedChain(&sink, 5000, std::chrono::seconds(20));
    FAIL() << "no error";
  } catch (const DiskFull& e) {
    EXPECT_STREQ(e.what(), "out.cg: cannot write: No space left on device");
  }
  EXPECT_EQ(sink.off_producer(), 4999);
}

// Thread names of this process (/proc/self/task/*/comm).
std::vector<std::string> ThreadNames() {
  std::vector<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) names.push_back(name);
  }
  return names;
}

// The thread carries the name it was given while it runs (what perf and top -H show), and is gone
// when the sink is.
TEST(BackgroundSinkTest, ThreadIsNamed) {
  if (!std::filesystem::exists("/proc/self/task")) GTEST_SKIP() << "no /proc/self/task";
  StringSink out;
  CallgrindWriter writer(&out, {});
  {
    BackgroundSink background(&writer, "cgi-test-sink");
    EXPECT_THAT(ThreadNames(), testing::Contains("cgi-test-sink"));
    background.Finish();
  }
  EXPECT_THAT(ThreadNames(), testing::Not(testing::Contains("cgi-test-sink")));
}

}  // namespace
}  // namespace cg_inject
