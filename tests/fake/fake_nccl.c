/*
 * fake_nccl.c - a small fake NCCL (libnccl.so.2) for the CPU tests: one rank,
 * buffers in host memory (an all-reduce of one rank copies), counts in
 * FAKE_NCCL_COUNTS. Every other export is absent (the shim answers ncclSystemError).
 */
#include <nccl.h>

#include "fake_libcount.h"

static const char *const fl_names[] = {"ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce",
                                       "ncclCommDestroy", "ncclGetErrorString", "ncclGroupStart", "ncclGroupEnd"};
FL_COUNTING("FAKE_NCCL_COUNTS", fake_nccl_count)

struct ncclComm {
    int nranks, rank;
};
static struct ncclComm fl_comm;

FL_EXPORT ncclResult_t ncclGetVersion(int *version)
{
    FK_COUNT(0);
    if (version == NULL)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    FK_COUNT(1);
    if (id == NULL)
        return ncclInvalidArgument;
    memset(id, 0x5a, sizeof *id);
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    FK_COUNT(2);
    (void)commId;
    if (comm == NULL || nranks != 1 || rank != 0)
        return ncclInvalidArgument;
    fl_comm.nranks = nranks, fl_comm.rank = rank;
    *comm = &fl_comm;
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    FK_COUNT(3);
    (void)op, (void)stream;
    if (comm != &fl_comm || datatype != ncclFloat32 || sendbuff == NULL || recvbuff == NULL)
        return ncclInvalidArgument;
    memmove(recvbuff, sendbuff, count * sizeof(float));   /* one rank: the sum is its own data */
    return ncclSuccess;
}

FL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    FK_COUNT(4);
    return comm == &fl_comm ? ncclSuccess : ncclInvalidArgument;
}

FL_EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
    FK_COUNT(5);
    return result == ncclSuccess ? "no error" : result == ncclSystemError ? "unhandled system error" : "error";
}

FL_EXPORT ncclResult_t ncclGroupStart(void) { FK_COUNT(6); return ncclSuccess; }
FL_EXPORT ncclResult_t ncclGroupEnd(void) { FK_COUNT(7); return ncclSuccess; }
