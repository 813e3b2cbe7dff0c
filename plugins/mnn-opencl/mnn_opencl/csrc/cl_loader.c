/* Loading the OpenCL ICD loader at run time (dlopen), so nothing links against it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mnn_cl.h"

mnncl_api mnncl;
static void *handle = NULL;

#define RESOLVE(field, symbol)                                                        \
    do {                                                                              \
        *(void **)(&mnncl.field) = dlsym(lib, symbol);                                \
        if (mnncl.field == NULL) {                                                    \
            snprintf(err, err_len, "%s has no symbol %s (an OpenCL 1.2 loader is needed)", \
                     name, symbol);                                                   \
            memset(&mnncl, 0, sizeof(mnncl));                                         \
            dlclose(lib);                                                             \
            return -1;                                                                \
        }                                                                             \
    } while (0)

static int forked = 0;

/* OpenCL drivers (their threads, their device state) do not survive fork(): a child
 * forked after the loader was used must not call into it, or it hangs. */
static void on_fork_child(void) { forked = 1; }

int mnncl_loaded(void) { return handle != NULL; }
int mnncl_forked(void) { return forked; }

int mnncl_load(const char *library, char *err, size_t err_len) {
    if (handle != NULL) return 0;
    const char *names[2] = {library, NULL};
    if (library == NULL || library[0] == '\0') {
        names[0] = "libOpenCL.so.1";
        names[1] = "libOpenCL.so";
    }
    void *lib = NULL;
    const char *name = names[0];
    char first_error[256] = "";
    for (int i = 0; i < 2 && names[i] != NULL; ++i) {
        name = names[i];
        lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (lib != NULL) break;
        if (i == 0) {
            const char *e = dlerror();
            snprintf(first_error, sizeof first_error, "%s", e ? e : name);
        }
    }
    if (lib == NULL) {
        snprintf(err, err_len, "cannot load the OpenCL ICD loader: %s", first_error);
        return -1;
    }
    RESOLVE(GetPlatformIDs, "clGetPlatformIDs");
    RESOLVE(GetPlatformInfo, "clGetPlatformInfo");
    RESOLVE(GetDeviceIDs, "clGetDeviceIDs");
    RESOLVE(GetDeviceInfo, "clGetDeviceInfo");
    RESOLVE(CreateContext, "clCreateContext");
    RESOLVE(ReleaseContext, "clReleaseContext");
    RESOLVE(CreateCommandQueue, "clCreateCommandQueue");
    RESOLVE(ReleaseCommandQueue, "clReleaseCommandQueue");
    RESOLVE(CreateBuffer, "clCreateBuffer");
    RESOLVE(ReleaseMemObject, "clReleaseMemObject");
    RESOLVE(EnqueueWriteBuffer, "clEnqueueWriteBuffer");
    RESOLVE(EnqueueReadBuffer, "clEnqueueReadBuffer");
    RESOLVE(EnqueueCopyBuffer, "clEnqueueCopyBuffer");
    RESOLVE(CreateProgramWithSource, "clCreateProgramWithSource");
    RESOLVE(CreateProgramWithBinary, "clCreateProgramWithBinary");
    RESOLVE(BuildProgram, "clBuildProgram");
    RESOLVE(GetProgramInfo, "clGetProgramInfo");
    RESOLVE(GetProgramBuildInfo, "clGetProgramBuildInfo");
    RESOLVE(ReleaseProgram, "clReleaseProgram");
    RESOLVE(CreateKernel, "clCreateKernel");
    RESOLVE(ReleaseKernel, "clReleaseKernel");
    RESOLVE(SetKernelArg, "clSetKernelArg");
    RESOLVE(GetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo");
    RESOLVE(EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
    RESOLVE(Finish, "clFinish");
    RESOLVE(Flush, "clFlush");
    RESOLVE(WaitForEvents, "clWaitForEvents");
    RESOLVE(GetEventProfilingInfo, "clGetEventProfilingInfo");
    RESOLVE(ReleaseEvent, "clReleaseEvent");
    handle = lib;
    pthread_atfork(NULL, NULL, on_fork_child);
    return 0;
}

const char *mnncl_error_name(cl_int code) {
    switch (code) {
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -30: return "CL_INVALID_VALUE";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -42: return "CL_INVALID_BINARY";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -58: return "CL_INVALID_EVENT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL error";
    }
}
