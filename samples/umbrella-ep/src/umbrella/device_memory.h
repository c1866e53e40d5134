// The umbrella's own device memory. ORT and its clients find an EP's memory by OrtDevice (type, vendor,
// device id, memory type): onnxruntime-genai's amdgpu provider asks a session for the allocator of
// OrtMemoryInfo "Hip", which ORT reads as GPU memory of vendor 0x1002. So the umbrella offers its devices
// with memory infos of its own: the backend's GPU memory (same name, device id and memory type) as AMD
// GPU memory, whatever vendor the backend gave it (the WebGPU EP: "WebGPU_Buffer", vendor 0). The bytes
// stay the backend's: every allocation and copy goes to the backend, with its own memory info put back.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "onnxruntime_c_api.h"

namespace amdgpu_ep {

class MemoryMap {
 public:
  struct Entry {
    OrtMemoryInfo* ours;
    const OrtMemoryInfo* theirs;  // owned by the backend's factory, which outlives the umbrella's
    OrtEpFactory* backend;
  };

  MemoryMap(const OrtApi& api, const OrtEpApi& ep_api) : api_(api), ep_api_(ep_api) {}
  ~MemoryMap();
  MemoryMap(const MemoryMap&) = delete;
  MemoryMap& operator=(const MemoryMap&) = delete;

  // The memory info the umbrella offers in place of the backend's `theirs`: AMD GPU memory with the same
  // device id and memory type, made once per `theirs`. Memory that is not GPU memory is offered as it is.
  OrtStatus* Offer(const OrtMemoryInfo* theirs, OrtEpFactory* backend, const OrtMemoryInfo** offered);
  // The entry whose memory is `info`'s / `device`'s (same OrtDevice, whichever copy ORT hands over), or null.
  const Entry* Find(const OrtMemoryInfo* info) const;
  const Entry* Find(const OrtMemoryDevice* device) const;
  // The backend's memory device for `device`: translated if it is the umbrella's, else `device` itself.
  const OrtMemoryDevice* Theirs(const OrtMemoryDevice* device) const;

  const OrtApi& api() const { return api_; }
  const OrtEpApi& ep_api() const { return ep_api_; }

 private:
  const OrtApi& api_;
  const OrtEpApi& ep_api_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

// An allocator of the backend's, reporting the umbrella's memory info: ORT keys a session's allocators by
// the OrtDevice an allocator reports, and kernels' memory by the EP device's, so the two must agree.
struct ForwardingAllocator : OrtAllocator {
  ForwardingAllocator(OrtAllocator* inner, const OrtMemoryInfo* ours);
  // Whether `allocator` is one of these (ORT hands back every allocator to the same ReleaseAllocator).
  static ForwardingAllocator* Of(OrtAllocator* allocator);
  OrtAllocator* inner;  // released through the backend factory the umbrella recorded for this allocator
  const OrtMemoryInfo* ours;
};

// The backend's data transfer, for tensors in the umbrella's memory: devices and tensors are handed over
// as the backend's (a tensor becomes a view of the same bytes under the backend's memory info).
OrtDataTransferImpl* WrapDataTransfer(OrtDataTransferImpl* inner, std::shared_ptr<const MemoryMap> memory);

}  // namespace amdgpu_ep
