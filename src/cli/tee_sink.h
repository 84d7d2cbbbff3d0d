// Forwards every record to two sinks, e.g. the writer and a summary of what is written.
#pragma once

#include "cg_inject/profile.h"

namespace cg_inject {

class TeeSink : public ProfileSink {
 public:
  TeeSink(ProfileSink* first, ProfileSink* second) : a_(first), b_(second) {}
  void OnPartBegin(int part_index) override {
    a_->OnPartBegin(part_index), b_->OnPartBegin(part_index);
  }
  void OnHeader(std::string_view key, std::string_view value) override {
    a_->OnHeader(key, value);
    b_->OnHeader(key, value);
  }
  void OnRawHeader(std::string_view key, std::string_view value, std::string_view raw) override {
    a_->OnRawHeader(key, value, raw);
    b_->OnRawHeader(key, value, raw);
  }
  void OnLayout(const PartLayout& layout) override { a_->OnLayout(layout), b_->OnLayout(layout); }
  void OnFunction(const FunctionContext& f) override { a_->OnFunction(f), b_->OnFunction(f); }
  void OnCost(const CostRecord& cost) override { a_->OnCost(cost), b_->OnCost(cost); }
  void OnCall(const CallRecord& call) override { a_->OnCall(call), b_->OnCall(call); }
  void OnJump(const JumpRecord& jump) override { a_->OnJump(jump), b_->OnJump(jump); }
  void OnPartEnd() override { a_->OnPartEnd(), b_->OnPartEnd(); }
  void OnAbort() override { a_->OnAbort(), b_->OnAbort(); }

 private:
  ProfileSink* a_;
  ProfileSink* b_;
};

}  // namespace cg_inject
