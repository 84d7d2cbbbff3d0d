#include "callgrind/background_sink.h"

#include <pthread.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <type_traits>

namespace cg_inject {
namespace {

constexpr size_t kMaxQueued = 4;

enum class Tag : uint8_t {
  kPartBegin,
  kHeader,
  kRawHeader,
  kLayout,
  kFunction,
  kCost,
  kCall,
  kJump,
  kPartEnd,
};

// Names travel as they are (id and view): their text outlives the batch (see the header).
static_assert(std::is_trivially_copyable_v<Name> && std::is_trivially_copyable_v<Position> &&
              std::is_trivially_copyable_v<PositionLayout>);

/// Where a record's costs start: the next 8-byte boundary. Replayed in place, they need no copy
/// (the copy, with its vector resize and memcpy call, was a fifth of Replay's instructions).
template <typename Char>
Char* AlignCosts(Char* at) {
  return at + (-reinterpret_cast<uintptr_t>(at) & (alignof(uint64_t) - 1));
}

/// Reads a batch back in the order BackgroundSink wrote it.
class BatchReader {
 public:
  explicit BatchReader(const std::string& batch) : at_(batch.data()), end_(at_ + batch.size()) {}
  bool done() const { return at_ == end_; }
  template <typename T>
  T Get() {
    T value;
    std::memcpy(&value, at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string_view GetText() {
    auto size = Get<uint32_t>();
    std::string_view text(at_, size);
    at_ += size;
    return text;
  }
  /// Costs are read in place: StoreCosts aligned them in the batch, whose buffer is the same.
  std::span<const uint64_t> GetCosts() {
    auto count = Get<uint32_t>();
    at_ = AlignCosts(at_);
    std::span<const uint64_t> costs(reinterpret_cast<const uint64_t*>(at_), count);
    at_ += count * sizeof(uint64_t);
    return costs;
  }

 private:
  const char* at_;
  const char* end_;
};

}  // namespace

BackgroundSink::BackgroundSink(ProfileSink* downstream, const char* thread_name)
    : downstream_(downstream), has_thread_(true) {
  batch_.resize(kBatchBytes + 4096);
  thread_ = std::thread([this] { Run(); });
  // Best effort: a name too long or a platform without names leaves the process's.
  pthread_setname_np(thread_.native_handle(), thread_name);
}

BackgroundSink::BackgroundSink(ProfileSink* downstream, DrainedByCaller) : downstream_(downstream) {
  batch_.resize(kBatchBytes + 4096);
}

BackgroundSink::~BackgroundSink() {
  // A thread waiting for the later sink to be drained would never be joined.
  if (drained_ != nullptr) drained_->Abandon();
  Stop();
}

void BackgroundSink::DrainWhileWaiting(BackgroundSink* later) {
  std::lock_guard lock(mutex_);  // Run reads drained_ from the start
  drained_ = later;
  later->drainer_ = this;
}

void BackgroundSink::Poke() {
  {
    std::lock_guard lock(mutex_);
    poked_ = true;
  }
  changed_.notify_all();
}

template <typename Ready>
void BackgroundSink::WaitUntil(std::unique_lock<std::mutex>& lock, Ready ready) {
  // A sink without a thread: its producer replays the batches itself rather than wait for the
  // thread that drains it, unless that thread is replaying one (busy_).
  auto can_replay = [&] { return !has_thread_ && !full_.empty() && !busy_ && !stop_; };
  for (;;) {
    changed_.wait(lock, [&] { return ready() || poked_ || can_replay(); });
    if (ready()) return;
    if (can_replay()) {
      ReplayNext(lock);  // an error is kept in error_, which every `ready` checks
      continue;
    }
    // The later sink has batches and this thread's own may wait for them to be replayed.
    poked_ = false;
    lock.unlock();
    drained_->Drain();
    lock.lock();
  }
}

void BackgroundSink::Drain() {
  std::unique_lock lock(mutex_);
  // While another thread replays a batch (busy_), it also replays the ones after it.
  while (!full_.empty() && !stop_ && !busy_) {
    if (std::exception_ptr error = ReplayNext(lock)) std::rethrow_exception(error);
  }
  if (error_) std::rethrow_exception(error_);
}

char* BackgroundSink::StoreCosts(char* at, std::span<const uint64_t> costs) {
  at = Store(at, uint32_t(costs.size()));
  at = AlignCosts(at);
  return Store(at, costs.data(), costs.size_bytes());
}

void BackgroundSink::GrowBatch(size_t size) {
  batch_.resize(std::max(batch_.size() * 2, used_ + size));
}

void BackgroundSink::PutText(std::string_view text) {
  PutValue(uint32_t(text.size()));
  Put(text.data(), text.size());
}

void BackgroundSink::OnPartBegin(int part_index) {
  PutValue(Tag::kPartBegin);
  PutValue(part_index);
  HandWhenFull();
}

void BackgroundSink::OnHeader(std::string_view key, std::string_view value) {
  PutValue(Tag::kHeader);
  PutText(key);
  PutText(value);
  HandWhenFull();
}

void BackgroundSink::OnRawHeader(std::string_view key, std::string_view value,
                                 std::string_view raw) {
  PutValue(Tag::kRawHeader);
  PutText(key);
  PutText(value);
  PutText(raw);
  HandWhenFull();
}

void BackgroundSink::OnLayout(const PartLayout& layout) {
  PutValue(Tag::kLayout);
  PutValue(layout.positions);
  PutValue(uint32_t(layout.events.size()));
  for (std::string_view event : layout.events) PutText(event);
  HandWhenFull();
}

void BackgroundSink::OnFunction(const FunctionContext& function) {
  PutValue(Tag::kFunction);
  PutValue(function.object);
  PutValue(function.file);
  PutValue(function.function);
  PutText(function.raw);
  PutValue(function.line);
  HandWhenFull();
}

void BackgroundSink::OnCost(const CostRecord& cost) {
  char* at = Claim(sizeof(Tag) + 2 * sizeof(Position) + sizeof(Name) + 2 * sizeof(uint32_t) +
                   kCostsPadding + cost.costs.size_bytes() + cost.raw.size());
  at = Store(at, Tag::kCost);
  at = Store(at, cost.position);
  at = Store(at, cost.source_file);
  at = StoreCosts(at, cost.costs);
  at = StoreText(at, cost.raw);
  at = Store(at, cost.raw_base);
  Unclaim(at);
  HandWhenFull();
}

void BackgroundSink::OnCall(const CallRecord& call) {
  char* at =
      Claim(sizeof(Tag) + sizeof(uint64_t) + 3 * sizeof(Position) + 4 * sizeof(Name) +
            2 * sizeof(uint32_t) + kCostsPadding + call.inclusive.size_bytes() + call.raw.size());
  at = Store(at, Tag::kCall);
  at = Store(at, call.count);
  at = Store(at, call.target);
  at = Store(at, call.source);
  at = Store(at, call.source_file);
  at = Store(at, call.target_object);
  at = Store(at, call.target_file);
  at = Store(at, call.target_function);
  at = StoreCosts(at, call.inclusive);
  at = StoreText(at, call.raw);
  at = Store(at, call.raw_base);
  Unclaim(at);
  HandWhenFull();
}

void BackgroundSink::OnJump(const JumpRecord& jump) {
  PutValue(Tag::kJump);
  PutValue(jump.conditional);
  PutValue(jump.followed);
  PutValue(jump.executed);
  PutValue(jump.target);
  PutValue(jump.source);
  PutValue(jump.source_file);
  PutValue(jump.target_file);
  PutValue(jump.target_function);
  PutText(jump.raw);
  PutValue(jump.raw_base);
  HandWhenFull();
}

void BackgroundSink::OnPartEnd() {
  PutValue(Tag::kPartEnd);
  WaitIdle();
}

void BackgroundSink::OnAbort() {
  if (drained_ != nullptr) drained_->Abandon();
  Stop();
  // Stages after the downstream may run threads of their own that still hold the producer's
  // names (a reader -> BackgroundSink -> injector -> BackgroundSink -> writer chain): with this
  // thread stopped, the producer's thread tells them.
  downstream_->OnAbort();
}

void BackgroundSink::Finish() {
  if (!has_thread_ && !stop_) {  // DrainedByCaller: its producer is done
    Drain();
    Hand(true);
    Drain();
  }
  WaitIdle();
  Stop();
}

void BackgroundSink::Hand(bool force) {
  if (used_ < kBatchBytes && !(force && used_ != 0)) return;
  std::unique_lock lock(mutex_);
  WaitUntil(lock, [&] { return full_.size() < kMaxQueued || error_ || stop_; });
  if (error_) std::rethrow_exception(error_);
  if (stop_) {  // abandoned: nothing more is written
    used_ = 0;
    return;
  }
  batch_.resize(used_);  // what the thread replays
  full_.push_back(std::move(batch_));
  if (free_.empty()) {
    batch_ = std::string();
  } else {
    batch_ = std::move(free_.back());
    free_.pop_back();
  }
  batch_.resize(std::max(batch_.capacity(), kBatchBytes + 4096));
  used_ = 0;
  changed_.notify_all();
  lock.unlock();
  if (drainer_ != nullptr) drainer_->Poke();
  // Between its own batches, the producer replays the later sink's that are ready: they wait
  // less for a full queue.
  if (drained_ != nullptr) drained_->Drain();
}

void BackgroundSink::WaitIdle() {
  Hand(true);
  std::unique_lock lock(mutex_);
  WaitUntil(lock, [&] { return (full_.empty() && !busy_) || error_ || stop_; });
  if (error_) std::rethrow_exception(error_);
}

void BackgroundSink::Abandon() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    abandoned_ = true;
    full_.clear();
  }
  changed_.notify_all();
}

void BackgroundSink::Stop() {
  Abandon();
  if (thread_.joinable()) thread_.join();
}

void BackgroundSink::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (full_.empty() && !stop_ && drained_ != nullptr) {
      // Nothing to replay: the later sink's batches, which this thread handed it, are written
      // meanwhile rather than left to the producer's thread, which is the busier one.
      lock.unlock();
      std::exception_ptr error;
      try {
        drained_->Drain();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error) {
        error_ = error;
        full_.clear();
        changed_.notify_all();
        return;
      }
    }
    changed_.wait(lock, [&] { return !full_.empty() || stop_; });
    if (stop_) return;
    if (ReplayNext(lock)) return;
  }
}

std::exception_ptr BackgroundSink::ReplayNext(std::unique_lock<std::mutex>& lock) {
  std::string batch = std::move(full_.front());
  full_.pop_front();
  busy_ = true;
  lock.unlock();
  std::exception_ptr error;
  try {
    Replay(batch);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  busy_ = false;
  free_.push_back(std::move(batch));
  if (error) {
    error_ = error;
    full_.clear();
  }
  changed_.notify_all();
  return error;
}

void BackgroundSink::Replay(const std::string& batch) {
  BatchReader in(batch);
  while (!in.done()) {
    switch (in.Get<Tag>()) {
      case Tag::kPartBegin:
        downstream_->OnPartBegin(in.Get<int>());
        break;
      case Tag::kHeader: {
        std::string_view key = in.GetText();
        downstream_->OnHeader(key, in.GetText());
        break;
      }
      case Tag::kRawHeader: {
        std::string_view key = in.GetText();
        std::string_view value = in.GetText();
        downstream_->OnRawHeader(key, value, in.GetText());
        break;
      }
      case Tag::kLayout: {
        PartLayout layout;
        layout.positions = in.Get<PositionLayout>();
        event_texts_.resize(in.Get<uint32_t>());
        for (std::string& text : event_texts_) text = in.GetText();
        events_.assign(event_texts_.begin(), event_texts_.end());
        layout.events = events_;
        downstream_->OnLayout(layout);
        break;
      }
      // Records are built whole from what is read (braces: in member order, the order they were
      // stored in): one default-constructed and filled field by field was zeroed first, a
      // `rep stos` that took 40% of this loop.
      case Tag::kFunction: {
        const FunctionContext function{in.Get<Name>(), in.Get<Name>(), in.Get<Name>(), in.GetText(),
                                       in.Get<uint64_t>()};
        downstream_->OnFunction(function);
        break;
      }
      case Tag::kCost: {
        const CostRecord cost{in.Get<Position>(), in.Get<Name>(), in.GetCosts(), in.GetText(),
                              in.Get<Position>()};
        downstream_->OnCost(cost);
        break;
      }
      case Tag::kCall: {
        const CallRecord call{in.Get<uint64_t>(), in.Get<Position>(), in.Get<Position>(),
                              in.Get<Name>(),     in.Get<Name>(),     in.Get<Name>(),
                              in.Get<Name>(),     in.GetCosts(),      in.GetText(),
                              in.Get<Position>()};
        downstream_->OnCall(call);
        break;
      }
      case Tag::kJump: {
        const JumpRecord jump{in.Get<bool>(),     in.Get<uint64_t>(), in.Get<uint64_t>(),
                              in.Get<Position>(), in.Get<Position>(), in.Get<Name>(),
                              in.Get<Name>(),     in.Get<Name>(),     in.GetText(),
                              in.Get<Position>()};
        downstream_->OnJump(jump);
        break;
      }
      case Tag::kPartEnd:
        downstream_->OnPartEnd();
        break;
    }
    // OnAbort: the producer's names are about to go away.
    if (abandoned_.load(std::memory_order_relaxed)) return;
  }
}

}  // namespace cg_inject
