// Runs a ProfileSink (the writer; with symbol sources the injector too) on a thread of its own, so
// that reading, rewriting and writing overlap on several cores.
//
// Or without a thread of its own (DrainedByCaller): with sources the writer's batches are
// replayed by whichever of the two threads has time, one at a time and in order. The reader's
// thread replays them after each batch it hands the injector's and whenever it would wait for it
// (DrainWhileWaiting); the injector's thread, when it has nothing to rewrite and when the
// writer's queue is full. Two threads then share two cores; three (reader, injector, writer) left
// a quarter of them idle in context switches and hand-over waits, and the reader's thread alone
// writing left the injector's idle a tenth of the time.
//
// Records are copied into batches that the thread replays in order: positions, costs and input
// text are copied (the producer reuses their storage after each callback), names are not (a
// Name's text lives as long as its reader, see profile.h). So that no name outlives its reader,
// every part ends with the thread caught up (OnPartEnd waits), and a producer that fails calls
// OnAbort, which stops the thread, before its reader goes away.
#pragma once

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cg_inject/profile.h"

namespace cg_inject {

class BackgroundSink : public ProfileSink {
 public:
  /// Starts the thread that replays into `downstream`, named `thread_name` (at most 15
  /// characters: what `top -H`, `perf report --sort comm` and gdb show for it).
  explicit BackgroundSink(ProfileSink* downstream, const char* thread_name = "cgi-background");
  /// No thread: the batches are replayed by Drain, called by the thread of an earlier stage
  /// (see DrainWhileWaiting) or by Finish, and by the producer itself when the queue is full.
  struct DrainedByCaller {};
  BackgroundSink(ProfileSink* downstream, DrainedByCaller);
  /// Stops the thread; what it has not replayed yet is dropped.
  ~BackgroundSink() override;
  BackgroundSink(const BackgroundSink&) = delete;
  BackgroundSink& operator=(const BackgroundSink&) = delete;

  void OnPartBegin(int part_index) override;
  void OnHeader(std::string_view key, std::string_view value) override;
  void OnRawHeader(std::string_view key, std::string_view value, std::string_view raw) override;
  void OnLayout(const PartLayout& layout) override;
  void OnFunction(const FunctionContext& function) override;
  void OnCost(const CostRecord& cost) override;
  void OnCall(const CallRecord& call) override;
  void OnJump(const JumpRecord& jump) override;
  /// Forwards the part's end and waits until the thread has replayed everything; rethrows the
  /// downstream's error, if it had one.
  void OnPartEnd() override;
  /// Stops the thread without replaying what is queued (the output is abandoned), then forwards
  /// OnAbort downstream.
  void OnAbort() override;

  /// Waits until every record is replayed and stops the thread; rethrows the downstream's error.
  /// A DrainedByCaller sink replays what is left itself (its producer must be done).
  void Finish();

  /// DrainedByCaller: replays the batches handed so far on the calling thread; rethrows the
  /// downstream's error.
  void Drain();
  /// This sink's producer drains `later` (a DrainedByCaller sink further down the chain, fed by
  /// this sink's thread): after each batch it hands over and whenever it waits for this sink's
  /// thread. This sink's thread drains it too whenever it has nothing to replay; a `later`'s
  /// error met there is this sink's. `later` must outlive this.
  void DrainWhileWaiting(BackgroundSink* later);

 private:
  // Inline, into a batch already sized: a std::string append per field (7 per cost line)
  // was 4% of a map run's instructions.
  void Put(const void* bytes, size_t size) {
    if (size > batch_.size() - used_) GrowBatch(size);
    if (size == 0) return;  // an empty span's data() may be null, which memcpy must not get
    std::memcpy(batch_.data() + used_, bytes, size);
    used_ += size;
  }
  void GrowBatch(size_t size);
  /// Room for `size` more bytes, claimed: for records with many fields (cost and call lines,
  /// most of a profile), one check instead of one per field. Fill it with Store.
  char* Claim(size_t size) {
    if (size > batch_.size() - used_) GrowBatch(size);
    char* at = batch_.data() + used_;
    used_ += size;
    return at;
  }
  /// Gives back the end of a claim that was not used (the costs' alignment padding it allowed
  /// for): `end` is where the record ends.
  void Unclaim(const char* end) {
    assert(end <= batch_.data() + used_);
    used_ = size_t(end - batch_.data());
  }
  /// A record's costs: their count, then, at the next 8-byte boundary (up to kCostsPadding bytes
  /// on), the values, which the replay then reads where they are.
  static constexpr size_t kCostsPadding = alignof(uint64_t) - 1;
  static char* StoreCosts(char* at, std::span<const uint64_t> costs);
  template <typename T>
  static char* Store(char* at, const T& value) {
    std::memcpy(at, &value, sizeof value);
    return at + sizeof value;
  }
  static char* Store(char* at, const void* bytes, size_t size) {
    // Most are a cost line's text or costs, under 64 bytes: two fixed-size copies that may
    // overlap, inline, instead of a call to memcpy (12.8M calls on a 100 MB profile).
    const char* from = static_cast<const char*>(bytes);
    if (size >= 16 && size <= 64) {
      size_t half = size >= 32 ? 32 : 16;
      CopyFixed(at, from, half);
      CopyFixed(at + size - half, from + size - half, half);
    } else if (size >= 8 && size < 16) {
      std::memcpy(at, from, 8);
      std::memcpy(at + size - 8, from + size - 8, 8);
    } else if (size != 0) {  // an empty span's data() may be null
      std::memcpy(at, from, size);
    }
    return at + size;
  }
  static void CopyFixed(char* to, const char* from, size_t size) {
    if (size == 32) {
      std::memcpy(to, from, 32);
    } else {
      std::memcpy(to, from, 16);
    }
  }
  /// A text as PutText writes it: its 32-bit size, then its bytes.
  static char* StoreText(char* at, std::string_view text) {
    return Store(Store(at, uint32_t(text.size())), text.data(), text.size());
  }
  template <typename T>
  void PutValue(const T& value) {
    Put(&value, sizeof value);
  }
  void PutText(std::string_view text);
  /// Hands the current batch to the thread when it is full (or `force`); rethrows its error.
  void Hand(bool force);
  /// Hand(false) where the batch is full, inline: it runs after every record.
  void HandWhenFull() {
    if (used_ >= kBatchBytes) Hand(false);
  }
  // A batch is handed over once it holds this much; a few in flight keep both threads busy
  // and hold about a megabyte.
  static constexpr size_t kBatchBytes = size_t{256} << 10;
  /// Hands the current batch and waits until the thread is idle; rethrows its error.
  void WaitIdle();
  /// Waits on changed_ until `ready`, draining `drained_` whenever it was poked meanwhile.
  template <typename Ready>
  void WaitUntil(std::unique_lock<std::mutex>& lock, Ready ready);
  /// Wakes a producer waiting in WaitUntil to drain its `drained_` (called by that sink).
  void Poke();
  /// Drops what is queued and lets a waiting producer go (the output is abandoned).
  void Abandon();
  void Stop();
  void Run();
  /// Replays full_.front() (lock held on entry and exit); its error, if any.
  std::exception_ptr ReplayNext(std::unique_lock<std::mutex>& lock);
  void Replay(const std::string& batch);

  ProfileSink* downstream_;
  const bool has_thread_ = false;  // thread_ runs Run (not DrainedByCaller)
  std::string batch_;              // being filled by the producer: its first used_ bytes
  size_t used_ = 0;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> full_;   // handed to the thread, in order
  std::vector<std::string> free_;  // replayed batches, kept for reuse
  bool busy_ = false;              // a batch is being replayed (by the thread, or a drainer)
  bool stop_ = false;
  std::atomic<bool> abandoned_{false};  // stop_, read by the thread between records
  std::exception_ptr error_;            // the downstream's, thrown on the thread
  std::thread thread_;
  // DrainWhileWaiting: the later sink this one's producer drains, and whether it has batches
  // since (poked_, under mutex_). DrainedByCaller: the sink whose producer drains this one.
  BackgroundSink* drained_ = nullptr;
  bool poked_ = false;
  BackgroundSink* drainer_ = nullptr;

  // Owned by the thread: the event names of the current part's layout (the downstream may keep
  // views of them for the part).
  std::vector<std::string> event_texts_;
  std::vector<std::string_view> events_;
};

}  // namespace cg_inject
