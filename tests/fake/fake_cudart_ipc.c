/*
 * fake_cudart_ipc.c - the fake runtime's CUDA IPC (cudaIpc*) and the event calls PyTorch's IPC path makes with it
 * (an interprocess event created with flags, a stream waiting on an opened event): each the driver call the real
 * runtime makes, reached through cuGetProcAddress like the rest of the fake runtime. The runtime's IPC handles and
 * event flags are the driver's, byte for byte and bit for bit.
 */
#include <string.h>

#include "fake_cudart_internal.h"

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    FRT_ENTER(cudaIpcGetMemHandle);
    FRA_FN(__typeof__(&cuIpcGetMemHandle), fn, "cuIpcGetMemHandle");
    CUipcMemHandle h;
    if (handle == NULL)
        return frt_ext_ret(CUDA_ERROR_INVALID_VALUE);
    FRA_CTX();
    CUresult r = fn(&h, (CUdeviceptr)(uintptr_t)devPtr);
    if (r == CUDA_SUCCESS)
        memcpy(handle, &h, sizeof h);
    return frt_ext_ret(r);
}

cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    FRT_ENTER(cudaIpcOpenMemHandle);
    FRA_FN(__typeof__(&cuIpcOpenMemHandle_v2), fn, "cuIpcOpenMemHandle");
    CUipcMemHandle h;
    CUdeviceptr p = 0;
    if (devPtr == NULL)
        return frt_ext_ret(CUDA_ERROR_INVALID_VALUE);
    FRA_CTX();
    memcpy(&h, &handle, sizeof h);
    CUresult r = fn(&p, h, flags);
    *devPtr = r == CUDA_SUCCESS ? (void *)(uintptr_t)p : NULL;
    return frt_ext_ret(r);
}

cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
    FRT_ENTER(cudaIpcCloseMemHandle);
    FRA_FN(__typeof__(&cuIpcCloseMemHandle), fn, "cuIpcCloseMemHandle");
    FRA_CTX();
    return frt_ext_ret(fn((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
    FRT_ENTER(cudaIpcGetEventHandle);
    FRA_FN(__typeof__(&cuIpcGetEventHandle), fn, "cuIpcGetEventHandle");
    CUipcEventHandle h;
    if (handle == NULL)
        return frt_ext_ret(CUDA_ERROR_INVALID_VALUE);
    FRA_CTX();
    CUresult r = fn(&h, (CUevent)event);
    if (r == CUDA_SUCCESS)
        memcpy(handle, &h, sizeof h);
    return frt_ext_ret(r);
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    FRT_ENTER(cudaIpcOpenEventHandle);
    FRA_FN(__typeof__(&cuIpcOpenEventHandle), fn, "cuIpcOpenEventHandle");
    CUipcEventHandle h;
    CUevent ev = NULL;
    if (event == NULL)
        return frt_ext_ret(CUDA_ERROR_INVALID_VALUE);
    FRA_CTX();
    memcpy(&h, &handle, sizeof h);
    CUresult r = fn(&ev, h);
    *event = r == CUDA_SUCCESS ? (cudaEvent_t)ev : NULL;
    return frt_ext_ret(r);
}

/* cudaEventDefault/BlockingSync/DisableTiming/Interprocess are CU_EVENT_DEFAULT/BLOCKING_SYNC/DISABLE_TIMING/
   INTERPROCESS */
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    FRT_ENTER(cudaEventCreateWithFlags);
    FRA_FN(__typeof__(&cuEventCreate), fn, "cuEventCreate");
    if (event == NULL)
        return frt_ext_ret(CUDA_ERROR_INVALID_VALUE);
    FRA_CTX();
    return frt_ext_ret(fn((CUevent *)event, flags));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    FRT_ENTER(cudaStreamWaitEvent);
    FRA_FN(__typeof__(&cuStreamWaitEvent), fn, "cuStreamWaitEvent");
    FRA_CTX();
    return frt_ext_ret(fn((CUstream)stream, (CUevent)event, flags));
}
