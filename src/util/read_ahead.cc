// ReadAhead: zstd decompression of a 100 MB profile takes about 0.3 s of CPU, as long as a third
// of the reading and writing; on its own thread it overlaps with parsing (issue 9's target: .zst
// input costs no more than the plain run plus decompression, here less). Blocks, not records,
// cross the thread boundary: a bounded ring of kBlocks buffers, so memory stays at 4 MiB.
#include "util/read_ahead.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "cg_inject/io.h"

namespace cg_inject {
namespace {

class ReadAheadSource : public ByteSource {
 public:
  explicit ReadAheadSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {
    for (Block& b : blocks_) b.data = std::make_unique<char[]>(kBlockSize);
    thread_ = std::thread([this] { Produce(); });
  }
  ~ReadAheadSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ReadAheadSource(const ReadAheadSource&) = delete;
  ReadAheadSource& operator=(const ReadAheadSource&) = delete;

  size_t Read(char* buf, size_t size) override {
    for (;;) {
      if (current_ != nullptr && pos_ < current_->size) {
        size_t n = std::min(size, current_->size - pos_);
        std::memcpy(buf, current_->data.get() + pos_, n);
        pos_ += n;
        return n;
      }
      std::unique_lock<std::mutex> lock(mu_);
      if (current_ != nullptr) {  // hand the consumed block back to the producer
        current_ = nullptr;
        ++head_;
        --filled_;
        cv_.notify_all();
      }
      cv_.wait(lock, [this] { return filled_ > 0 || done_; });
      if (filled_ == 0) {
        if (error_) std::rethrow_exception(error_);
        return 0;
      }
      current_ = &blocks_[head_ % kBlocks];
      pos_ = 0;
    }
  }
  const std::string& display_name() const override { return inner_->display_name(); }

 private:
  static constexpr size_t kBlockSize = size_t{1} << 20;
  static constexpr size_t kBlocks = 4;
  struct Block {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };

  void Produce() {
    try {
      for (;;) {
        Block* block;
        {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [this] { return filled_ < kBlocks || stop_; });
          if (stop_) return;
          block = &blocks_[tail_ % kBlocks];
        }
        size_t n = inner_->Read(block->data.get(), kBlockSize);
        std::lock_guard<std::mutex> lock(mu_);
        if (n == 0) {
          done_ = true;
          cv_.notify_all();
          return;
        }
        block->size = n;
        ++tail_;
        ++filled_;
        cv_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
      done_ = true;
      cv_.notify_all();
    }
  }

  std::unique_ptr<ByteSource> inner_;
  Block blocks_[kBlocks];
  // Guarded by mu_: blocks [head_, head_ + filled_) are full; the producer fills tail_.
  std::mutex mu_;
  std::condition_variable cv_;
  size_t head_ = 0, tail_ = 0, filled_ = 0;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  // Consumer only.
  Block* current_ = nullptr;
  size_t pos_ = 0;
  std::thread thread_;  // last: starts after everything above is initialized
};

}  // namespace

std::unique_ptr<ByteSource> ReadAhead(std::unique_ptr<ByteSource> inner) {
  return std::make_unique<ReadAheadSource>(std::move(inner));
}

}  // namespace cg_inject
