// NCCL: one communicator per rank, a grouped all-reduce on a stream.
#include <rccl/rccl.h>
#include <hip/hip_runtime.h>

ncclResult_t AllReduceSum(float* buffer, size_t count, int rank, int world, ncclUniqueId id, hipStream_t stream) {
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, world, id, rank);
  if (r != ncclSuccess) return r;
  ncclGroupStart();
  r = ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclSum, comm, stream);
  ncclGroupEnd();
  hipStreamSynchronize(stream);
  ncclCommDestroy(comm);
  return r;
}
