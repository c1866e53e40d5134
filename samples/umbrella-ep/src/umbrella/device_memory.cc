#include "device_memory.h"

namespace amdgpu_ep {
namespace {

constexpr uint32_t kAmdVendorId = 0x1002;

// Releases the views WrapDataTransfer makes, whatever path CopyTensors leaves by.
class Views {
 public:
  explicit Views(const OrtApi& api) : api_(api) {}
  ~Views() {
    for (OrtValue* view : made_) api_.ReleaseValue(view);
  }
  // `value` itself, or a view of its bytes under the backend's memory info when it lies in the umbrella's.
  OrtStatus* For(const MemoryMap& memory, const OrtValue* value, OrtValue** out) {
    *out = const_cast<OrtValue*>(value);
    const MemoryMap::Entry* entry = value ? memory.Find(memory.ep_api().Value_GetMemoryDevice(value)) : nullptr;
    if (entry == nullptr) return nullptr;
    OrtTensorTypeAndShapeInfo* shape_info = nullptr;
    if (OrtStatus* status = api_.GetTensorTypeAndShape(value, &shape_info)) return status;
    ONNXTensorElementDataType type{};
    size_t rank = 0;
    OrtStatus* status = api_.GetTensorElementType(shape_info, &type);
    if (status == nullptr) status = api_.GetDimensionsCount(shape_info, &rank);
    std::vector<int64_t> dims(rank);
    if (status == nullptr) status = api_.GetDimensions(shape_info, dims.data(), rank);
    api_.ReleaseTensorTypeAndShapeInfo(shape_info);
    void* data = nullptr;
    size_t bytes = 0;
    if (status == nullptr) status = api_.GetTensorMutableData(const_cast<OrtValue*>(value), &data);
    if (status == nullptr) status = api_.GetTensorSizeInBytes(value, &bytes);
    if (status == nullptr)
      status = api_.CreateTensorWithDataAsOrtValue(entry->theirs, data, bytes, dims.data(), rank, type, out);
    if (status != nullptr) return status;
    made_.push_back(*out);
    return nullptr;
  }

 private:
  const OrtApi& api_;
  std::vector<OrtValue*> made_;
};

struct TranslatingTransfer : OrtDataTransferImpl {
  TranslatingTransfer(OrtDataTransferImpl* inner_transfer, std::shared_ptr<const MemoryMap> map)
      : OrtDataTransferImpl{}, inner(inner_transfer), memory(std::move(map)) {
    ort_version_supported = ORT_API_VERSION;
    Release = [](OrtDataTransferImpl* self) noexcept {
      auto* t = static_cast<TranslatingTransfer*>(self);
      t->inner->Release(t->inner);
      delete t;
    };
    CanCopy = [](const OrtDataTransferImpl* self, const OrtMemoryDevice* src, const OrtMemoryDevice* dst) noexcept {
      auto* t = static_cast<const TranslatingTransfer*>(self);
      return t->inner->CanCopy(t->inner, t->memory->Theirs(src), t->memory->Theirs(dst));
    };
    CopyTensors = [](OrtDataTransferImpl* self, const OrtValue** src, OrtValue** dst, OrtSyncStream** streams,
                     size_t count) noexcept -> OrtStatus* {
      auto* t = static_cast<TranslatingTransfer*>(self);
      Views views(t->memory->api());
      std::vector<const OrtValue*> from(count);
      std::vector<OrtValue*> to(count);
      for (size_t i = 0; i < count; ++i) {
        OrtValue* view = nullptr;
        if (OrtStatus* status = views.For(*t->memory, src[i], &view)) return status;
        from[i] = view;
        if (OrtStatus* status = views.For(*t->memory, dst[i], &to[i])) return status;
      }
      return t->inner->CopyTensors(t->inner, from.data(), to.data(), streams, count);
    };
  }
  OrtDataTransferImpl* inner;
  std::shared_ptr<const MemoryMap> memory;
};

const OrtMemoryInfo* ORT_API_CALL ForwardingInfo(const OrtAllocator* self) noexcept {
  return static_cast<const ForwardingAllocator*>(self)->ours;
}

}  // namespace

MemoryMap::~MemoryMap() {
  for (const Entry& entry : entries_) api_.ReleaseMemoryInfo(entry.ours);
}

OrtStatus* MemoryMap::Offer(const OrtMemoryInfo* theirs, OrtEpFactory* backend, const OrtMemoryInfo** offered) {
  *offered = theirs;
  OrtMemoryInfoDeviceType type{};
  api_.MemoryInfoGetDeviceType(theirs, &type);
  if (type != OrtMemoryInfoDeviceType_GPU) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Entry& entry : entries_) {
    if (entry.theirs == theirs) return *offered = entry.ours, nullptr;
  }
  int device_id = 0;
  if (OrtStatus* status = api_.MemoryInfoGetId(theirs, &device_id)) return status;
  const char* name = nullptr;
  if (OrtStatus* status = api_.MemoryInfoGetName(theirs, &name)) return status;
  const OrtMemoryDevice* device = ep_api_.MemoryInfo_GetMemoryDevice(theirs);
  const OrtDeviceMemoryType memory_type = ep_api_.MemoryDevice_GetMemoryType(device);
  OrtMemoryInfo* ours = nullptr;
  // The backend's name, which its kernels check a tensor's memory by (the WebGPU EP's: "WebGPU_Buffer");
  // alignment 0 and a device allocator, as ORT makes them of the name "Hip", so a client's lookup matches.
  if (OrtStatus* status = api_.CreateMemoryInfo_V2(name, OrtMemoryInfoDeviceType_GPU, kAmdVendorId, device_id,
                                                   memory_type, 0, OrtDeviceAllocator, &ours))
    return status;
  entries_.push_back({ours, theirs, backend});
  *offered = ours;
  return nullptr;
}

const MemoryMap::Entry* MemoryMap::Find(const OrtMemoryInfo* info) const {
  return info == nullptr ? nullptr : Find(ep_api_.MemoryInfo_GetMemoryDevice(info));
}

const MemoryMap::Entry* MemoryMap::Find(const OrtMemoryDevice* device) const {
  if (device == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Entry& entry : entries_) {
    if (ep_api_.MemoryDevice_AreEqual(device, ep_api_.MemoryInfo_GetMemoryDevice(entry.ours))) return &entry;
  }
  return nullptr;
}

const OrtMemoryDevice* MemoryMap::Theirs(const OrtMemoryDevice* device) const {
  const Entry* entry = Find(device);
  return entry == nullptr ? device : ep_api_.MemoryInfo_GetMemoryDevice(entry->theirs);
}

ForwardingAllocator::ForwardingAllocator(OrtAllocator* inner_allocator, const OrtMemoryInfo* our_info)
    : OrtAllocator{}, inner(inner_allocator), ours(our_info) {
  version = ORT_API_VERSION;
  Alloc = [](OrtAllocator* self, size_t size) noexcept {
    OrtAllocator* i = static_cast<ForwardingAllocator*>(self)->inner;
    return i->Alloc(i, size);
  };
  Free = [](OrtAllocator* self, void* p) noexcept {
    OrtAllocator* i = static_cast<ForwardingAllocator*>(self)->inner;
    i->Free(i, p);
  };
  Info = ForwardingInfo;
  // The optional members only where the backend's allocator has them, so ORT's fallbacks apply otherwise.
  if (inner->version >= 18 && inner->Reserve != nullptr) {
    Reserve = [](OrtAllocator* self, size_t size) noexcept {
      OrtAllocator* i = static_cast<ForwardingAllocator*>(self)->inner;
      return i->Reserve(i, size);
    };
  }
  if (inner->version >= 23 && inner->GetStats != nullptr) {
    GetStats = [](const OrtAllocator* self, OrtKeyValuePairs** out) noexcept {
      const OrtAllocator* i = static_cast<const ForwardingAllocator*>(self)->inner;
      return i->GetStats(i, out);
    };
  }
  if (inner->version >= 23 && inner->AllocOnStream != nullptr) {
    AllocOnStream = [](OrtAllocator* self, size_t size, OrtSyncStream* stream) noexcept {
      OrtAllocator* i = static_cast<ForwardingAllocator*>(self)->inner;
      return i->AllocOnStream(i, size, stream);
    };
  }
}

ForwardingAllocator* ForwardingAllocator::Of(OrtAllocator* allocator) {
  return allocator != nullptr && allocator->Info == ForwardingInfo ? static_cast<ForwardingAllocator*>(allocator)
                                                                    : nullptr;
}

OrtDataTransferImpl* WrapDataTransfer(OrtDataTransferImpl* inner, std::shared_ptr<const MemoryMap> memory) {
  return inner == nullptr ? nullptr : new TranslatingTransfer(inner, std::move(memory));
}

}  // namespace amdgpu_ep
