/* Shared by the mvk translation units: the function table and the structs. */
#ifndef MNN_VULKAN_MVK_INTERNAL_H
#define MNN_VULKAN_MVK_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include "mvk.h"
#include "vk_min.h"

/* loaded from the loader before an instance exists */
#define MVK_GLOBAL_FNS(X)                   \
    X(vkEnumerateInstanceVersion)           \
    X(vkEnumerateInstanceLayerProperties)   \
    X(vkEnumerateInstanceExtensionProperties) \
    X(vkCreateInstance)

/* loaded through vkGetInstanceProcAddr(instance); device-level functions come
 * as loader trampolines, which serve every device of the instance */
#define MVK_INSTANCE_FNS(X)                     \
    X(vkDestroyInstance)                        \
    X(vkEnumeratePhysicalDevices)               \
    X(vkGetPhysicalDeviceProperties)            \
    X(vkGetPhysicalDeviceProperties2)           \
    X(vkGetPhysicalDeviceFeatures2)             \
    X(vkEnumerateDeviceExtensionProperties)     \
    X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkGetPhysicalDeviceMemoryProperties)      \
    X(vkCreateDevice)                           \
    X(vkDestroyDevice)                          \
    X(vkGetDeviceQueue)                         \
    X(vkDeviceWaitIdle)                         \
    X(vkQueueSubmit)                            \
    X(vkCreateBuffer)                           \
    X(vkDestroyBuffer)                          \
    X(vkGetBufferMemoryRequirements)            \
    X(vkAllocateMemory)                         \
    X(vkFreeMemory)                             \
    X(vkBindBufferMemory)                       \
    X(vkMapMemory)                              \
    X(vkUnmapMemory)                            \
    X(vkCreateShaderModule)                     \
    X(vkDestroyShaderModule)                    \
    X(vkCreatePipelineCache)                    \
    X(vkDestroyPipelineCache)                   \
    X(vkGetPipelineCacheData)                   \
    X(vkCreateDescriptorSetLayout)              \
    X(vkDestroyDescriptorSetLayout)             \
    X(vkCreatePipelineLayout)                   \
    X(vkDestroyPipelineLayout)                  \
    X(vkCreateComputePipelines)                 \
    X(vkDestroyPipeline)                        \
    X(vkCreateDescriptorPool)                   \
    X(vkDestroyDescriptorPool)                  \
    X(vkAllocateDescriptorSets)                 \
    X(vkUpdateDescriptorSets)                   \
    X(vkCreateCommandPool)                      \
    X(vkDestroyCommandPool)                     \
    X(vkAllocateCommandBuffers)                 \
    X(vkFreeCommandBuffers)                     \
    X(vkBeginCommandBuffer)                     \
    X(vkEndCommandBuffer)                       \
    X(vkCmdBindPipeline)                        \
    X(vkCmdBindDescriptorSets)                  \
    X(vkCmdPushConstants)                       \
    X(vkCmdDispatch)                            \
    X(vkCmdPipelineBarrier)                     \
    X(vkCmdCopyBuffer)                          \
    X(vkCmdWriteTimestamp)                      \
    X(vkCmdResetQueryPool)                      \
    X(vkCreateQueryPool)                        \
    X(vkDestroyQueryPool)                       \
    X(vkGetQueryPoolResults)                    \
    X(vkCreateFence)                            \
    X(vkDestroyFence)                           \
    X(vkWaitForFences)                          \
    X(vkResetFences)

#define MVK_DECLARE(name) PFN_##name name;
typedef struct mvk_fns {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    MVK_GLOBAL_FNS(MVK_DECLARE)
    MVK_INSTANCE_FNS(MVK_DECLARE)
    PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
    PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV vkGetPhysicalDeviceCooperativeMatrixPropertiesNV; /* or NULL */
} mvk_fns;
#undef MVK_DECLARE

extern mvk_fns vk;
extern VkInstance mvk_instance;

#define MVK_COPY_SLOTS 16 /* MVK_STAGING_CAP / MVK_COPY_CHUNK */
#define MVK_MAPPED_DEVICE_LOCAL 2 /* mvk_buffer_create's host_mapped: device-local and host-visible */

struct mvk_context {
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkPhysicalDeviceMemoryProperties memory;
    VkPhysicalDeviceProperties props;
    pthread_mutex_t queue_lock; /* vkQueueSubmit needs external synchronization */
    VkCommandPool pool;
    VkPipelineCache cache;
    uint64_t pipelines_created, pipeline_ns; /* what start-up spends compiling (mvk_context_pipeline_stats) */
    VkDescriptorSetLayout set_layouts[MVK_MAX_BINDINGS + 1];
    VkPipelineLayout layouts[MVK_MAX_BINDINGS + 1];
    /* host copies (mvk_memory.c): a staging buffer, grown on demand up to MVK_STAGING_CAP, cut into
     * MVK_COPY_SLOTS chunks of MVK_COPY_CHUNK, each copied by a command buffer and fence of its own
     * so that the host's memcpy of one chunk overlaps the DMA of another. copy_lock guards all of
     * it: a run's copies come without the GIL (mvk_transfer.c), possibly from several threads. */
    pthread_mutex_t copy_lock;
    mvk_buffer *staging;
    mvk_buffer *upload;   /* MNN_VULKAN_UPLOAD=bar: runs' uploads through device-local mapped memory */
    int upload_tried;
    VkCommandPool copy_pool;
    VkCommandBuffer copy_cb[MVK_COPY_SLOTS];
    VkFence copy_fence[MVK_COPY_SLOTS];
    uint32_t copy_busy;    /* slots submitted and not yet waited for */
    uint64_t copy_chunk;   /* uploads' chunk: MVK_COPY_CHUNK, or MNN_VULKAN_COPY_CHUNK's bytes (A/B runs) */
    uint64_t read_chunk;   /* downloads': the whole staging buffer, or MNN_VULKAN_COPY_CHUNK's */
    int copy_threads;      /* MNN_VULKAN_COPY_THREADS: threads of a large memcpy (mvk_copy_threads.c) */
    struct mvk_copy_pool *copy_pool_threads; /* their helpers, made at the first large copy */
    uint64_t copy_submits; /* host<->device copy submissions so far (mvk_context_copy_submits) */
    mvk_copy_stats stats;  /* where the copies' time went (mvk_context_copy_stats) */
    uint64_t allocations;  /* device memory, command buffers and descriptor pools made (tests) */
};

struct mvk_buffer {
    mvk_context *ctx;
    VkBuffer buffer;
    VkDeviceMemory memory;
    uint64_t size;
    void *mapped; /* NULL: reached through staging */
    uint32_t flags; /* VkMemoryPropertyFlags of its memory type */
};

struct mvk_pipeline {
    mvk_context *ctx;
    VkShaderModule module;
    VkPipeline pipeline;
    uint32_t n_bindings;
};

#define MVK_STAGING_CAP (32ull << 20)
#define MVK_COPY_CHUNK (2ull << 20) /* a run's copies go in chunks of this many device bytes */
#define MVK_WAIT_NS (120ull * 1000000000ull) /* a run longer than this is reported as a hang */

const char *mvk_result_name(VkResult r);
void mvk_narrow(const float *src, uint16_t *dst, size_t n); /* float32 -> float16, mvk_half.c */
void mvk_widen(const uint16_t *src, float *dst, size_t n);
void mvk_set_error(char *err, size_t errlen, const char *fmt, ...);
int mvk_staging_reserve(mvk_context *ctx, uint64_t size, char *err, size_t errlen); /* at least size bytes */
int mvk_copies_init(mvk_context *ctx, char *err, size_t errlen); /* the copy slots, at context creation */
void mvk_copies_destroy(mvk_context *ctx);
uint64_t mvk_now_ns(void);
typedef struct mvk_copy_pool mvk_copy_pool;
/* dst <- src, `bytes` device-side bytes (half: float32 on the host side), over the context's copy
 * threads when it has more than one (copy lock held) */
void mvk_host_copy(mvk_context *ctx, void *dst, const void *src, uint64_t bytes, int half, int to_device);
void mvk_copy_pool_destroy(mvk_copy_pool *p);
int mvk_submit_and_wait(mvk_context *ctx, VkCommandBuffer cb, VkFence fence, char *err, size_t errlen);
void mvk_global_barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                        VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

#define MVK_CHECK(call, what)                                                                \
    do {                                                                                     \
        VkResult r_ = (call);                                                                \
        if (r_ != VK_SUCCESS) {                                                              \
            mvk_set_error(err, errlen, "%s failed: %s", (what), mvk_result_name(r_));        \
            goto fail;                                                                       \
        }                                                                                    \
    } while (0)

#endif
