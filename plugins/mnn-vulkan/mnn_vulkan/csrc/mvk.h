/* mvk: the small Vulkan compute runtime under mnn-vulkan.
 *
 * libvulkan.so.1 is opened with dlopen at run time, so the package builds and
 * imports on machines without Vulkan; `mvk_init` says why it cannot start.
 * Everything the data path needs is here in C: one instance per process,
 * a context per device (queue, pipeline layouts, a staging buffer for host
 * copies), device buffers (the plan's arena), compute pipelines, and
 * programs: the dispatches of one segment recorded into one command buffer
 * at resize and submitted once per run, behind the mnn C ABI.
 *
 * Threading: everything except mvk_program_run is called with the GIL held
 * (from the Cython glue), which serializes command-pool use; queue submits
 * take the context's lock, since runs happen without the GIL.
 */
#ifndef MNN_VULKAN_MVK_H
#define MNN_VULKAN_MVK_H

#include <stddef.h>
#include <stdint.h>

#include "mnn_core/abi.h"

#define MVK_MAX_PUSH 128
#define MVK_MAX_BINDINGS 8

enum mvk_status {
    MVK_OK = 0,
    MVK_NO_LOADER = 1,   /* dlopen of the loader failed */
    MVK_NO_INSTANCE = 2, /* loader too old, or vkCreateInstance failed */
    MVK_ERROR = 3
};

typedef struct mvk_device_desc {
    char name[256];
    uint32_t type; /* VkPhysicalDeviceType: 1 integrated, 2 discrete, 3 virtual, 4 cpu */
    uint32_t vendor_id, device_id, api_version, driver_version;
    uint64_t device_local_bytes;
    int32_t compute_family; /* -1: no compute queue */
    uint32_t subgroup_size;
    uint32_t max_shared_bytes, max_invocations, max_group_count[3], max_group_size[3];
    uint64_t max_storage_range;
    uint32_t min_storage_align;
    uint32_t max_push_bytes;
    float timestamp_period_ns;
    uint32_t timestamp_bits;
    uint32_t fp16; /* shaderFloat16 and storageBuffer16BitAccess */
    /* VK_NV_cooperative_matrix with 16x16x16 float16 products summed in float32 per subgroup,
     * and the Vulkan memory model its shaders declare (tensor cores on NVIDIA) */
    uint32_t coopmat;
    uint32_t sm_count; /* streaming multiprocessors (VK_NV_shader_sm_builtins); 0: not reported */
} mvk_device_desc;

typedef struct mvk_context mvk_context;
typedef struct mvk_buffer mvk_buffer;
typedef struct mvk_pipeline mvk_pipeline;
typedef struct mvk_program mvk_program;

/* -- process-wide: loader, instance, devices, validation ---------------------- */
int mvk_init(const char *library, int validation, char *err, size_t errlen);
int mvk_device_count(void);
int mvk_device_desc_get(int index, mvk_device_desc *out);
int mvk_validation_active(void);
uint64_t mvk_validation_errors(char *last, size_t lastlen);

/* -- a device ---------------------------------------------------------------- */
mvk_context *mvk_context_create(int device_index, char *err, size_t errlen);
void mvk_context_destroy(mvk_context *ctx);
/* The pipeline cache, saved to disk by the caller between processes. `load` replaces the
 * context's (empty) cache with `data` when its header names this device and driver, else
 * returns MVK_ERROR with the reason and keeps the cache as it was. `data`: dst NULL asks
 * for the size, as vkGetPipelineCacheData does. With the GIL held. */
int mvk_context_cache_load(mvk_context *ctx, const void *data, size_t size, char *err, size_t errlen);
int mvk_context_cache_data(mvk_context *ctx, void *dst, size_t *size, char *err, size_t errlen);
/* Pipelines created through this context, and the nanoseconds spent in vkCreateComputePipelines. */
void mvk_context_pipeline_stats(mvk_context *ctx, uint64_t *created, uint64_t *ns);
uint64_t mvk_context_copy_submits(mvk_context *ctx); /* staging copy submissions so far */
/* Where host copies' time went, summed since the context was made; index 0 host-to-device, 1 back.
 * host_ns: memcpy (or float16 conversion) between host memory and the staging buffer or mapping;
 * submit_ns: recording and submitting copy commands; wait_ns: waiting for their fences. */
typedef struct mvk_copy_stats {
    uint64_t copies[2], bytes[2], host_ns[2], submit_ns[2], wait_ns[2];
} mvk_copy_stats;
void mvk_context_copy_stats(mvk_context *ctx, mvk_copy_stats *out);
/* device memory blocks, command buffers and descriptor pools made in this context so far: a run
 * makes none (tests) */
uint64_t mvk_context_allocations(mvk_context *ctx);
/* The device's memory types (at most `max`): VkMemoryPropertyFlags and the size of each one's heap;
 * returns how many there are. */
uint32_t mvk_context_memory_types(mvk_context *ctx, uint32_t *flags, uint64_t *heap_bytes, uint32_t max);
/* VkMemoryPropertyFlags of the staging buffer and of what runs' uploads are written into (0: none yet) */
void mvk_context_staging_flags(mvk_context *ctx, uint32_t *staging, uint32_t *upload);

/* -- memory: host_mapped=1 asks for host-visible coherent memory used through
 * its mapping; 0 asks for device-local memory reached through staging. */
mvk_buffer *mvk_buffer_create(mvk_context *ctx, uint64_t size, int host_mapped, char *err, size_t errlen);
void mvk_buffer_destroy(mvk_buffer *buf);
void *mvk_buffer_mapping(mvk_buffer *buf);
int mvk_buffer_write(mvk_buffer *buf, uint64_t offset, const void *src, uint64_t size, char *err, size_t errlen);
int mvk_buffer_read(mvk_buffer *buf, uint64_t offset, void *dst, uint64_t size, char *err, size_t errlen);
/* The same with half != 0: the host side is float32, the device's `size` bytes float16. */
int mvk_buffer_write_as(mvk_buffer *buf, uint64_t offset, const void *src, uint64_t size, int half, char *err,
                        size_t errlen);
int mvk_buffer_read_as(mvk_buffer *buf, uint64_t offset, void *dst, uint64_t size, int half, char *err,
                       size_t errlen);
/* n pieces at once (a plan's weights): sizes in the device's bytes, halves[i] as `half` above; on
 * device-local memory one staging copy submit per staging fill instead of one per piece. */
int mvk_buffer_write_many(mvk_buffer *buf, uint32_t n, const uint64_t *offsets, const void *const *srcs,
                          const uint64_t *sizes, const uint8_t *halves, char *err, size_t errlen);

/* -- pipelines: SPIR-V words, number of storage-buffer bindings (0..n-1 in set
 * 0), and specialization constants given for constant_id 0..n_spec-1. */
mvk_pipeline *mvk_pipeline_create(mvk_context *ctx, const uint32_t *code, size_t code_bytes, uint32_t n_bindings,
                                  const uint32_t *spec, uint32_t n_spec, char *err, size_t errlen);
void mvk_pipeline_destroy(mvk_pipeline *pipe);

/* -- a run's host copies, as mnn C ABI executions: `to_device` copies its input tensor's bytes
 * (read at every run: MNN_EXEC_INPUTS_MAY_MOVE, so the caller's array itself) into buf at
 * offset; else buf's bytes at offset into its output tensor. `size` counts device bytes (half:
 * float16 there, float32 on the host). Without the GIL; the context's copy lock serializes them. */
typedef struct mvk_transfer mvk_transfer;
mvk_transfer *mvk_transfer_create(mvk_buffer *buf, uint64_t offset, uint64_t size, int half, int to_device);
mnn_execution *mvk_transfer_execution(mvk_transfer *t);
void mvk_transfer_destroy(mvk_transfer *t);

/* -- programs ---------------------------------------------------------------- */
mvk_program *mvk_program_create(mvk_context *ctx, char *err, size_t errlen);
/* binding i of the pipeline is ranges[i] bytes of bufs[i] at offsets[i] */
int mvk_program_dispatch(mvk_program *p, mvk_pipeline *pipe, mvk_buffer *const *bufs, const uint64_t *offsets,
                         const uint64_t *ranges,
                         const void *push, uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz,
                         int barrier_before, char *err, size_t errlen);
int mvk_program_finish(mvk_program *p, int timestamps, char *err, size_t errlen);
int mvk_program_run(mvk_program *p); /* submit + wait; no GIL needed */
const char *mvk_program_error(mvk_program *p);
int mvk_program_times(mvk_program *p, double *ms, uint32_t n); /* per dispatch, from timestamps */
uint32_t mvk_program_size(mvk_program *p);
mnn_execution *mvk_program_execution(mvk_program *p);
void mvk_program_destroy(mvk_program *p);

#endif
