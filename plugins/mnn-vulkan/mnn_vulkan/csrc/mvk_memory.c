/* Device buffers and host copies.
 *
 * The plan's arena is one VkBuffer. Where the device shares memory with the
 * host (lavapipe, integrated GPUs) it is host-visible and coherent, and host
 * copies are memcpy through its mapping. On a discrete GPU it is device-local
 * and host copies go through the context's staging buffer: copy in chunks of
 * at most MVK_STAGING_CAP, one submit per chunk. The last chunk of an upload is
 * not waited for (an input written before a run: its copy overlaps the run's
 * submit, and the barrier recorded after the copy orders it before any later
 * submission's compute on the same queue); whatever next touches the staging
 * buffer, the copy command buffer or a buffer being freed waits first
 * (copy_settle). Copies happen with the GIL held, so this state needs no lock.
 */
#include <stdlib.h>
#include <string.h>

#include "mvk_internal.h"

static int find_memory_type(const mvk_context *ctx, uint32_t bits, VkMemoryPropertyFlags need,
                            VkMemoryPropertyFlags avoid) {
    for (uint32_t i = 0; i < ctx->memory.memoryTypeCount; ++i) {
        VkMemoryPropertyFlags f = ctx->memory.memoryTypes[i].propertyFlags;
        if ((bits & (1u << i)) && (f & need) == need && !(f & avoid)) return (int)i;
    }
    return -1;
}

static int choose_memory_type(const mvk_context *ctx, uint32_t bits, int host_mapped) {
    const VkMemoryPropertyFlags HOST = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int t;
    if (host_mapped) { /* cached first: host reads of uncached memory crawl */
        if ((t = find_memory_type(ctx, bits, HOST | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0)) >= 0) return t;
        return find_memory_type(ctx, bits, HOST, 0);
    }
    /* device-local, and not the small host-visible BAR window when there is a choice */
    if ((t = find_memory_type(ctx, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) >= 0)
        return t;
    if ((t = find_memory_type(ctx, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0)) >= 0) return t;
    return find_memory_type(ctx, bits, 0, 0);
}

static void buffer_free(mvk_buffer *b) {
    VkDevice dev = b->ctx->device;
    if (b->mapped) vk.vkUnmapMemory(dev, b->memory);
    if (b->buffer) vk.vkDestroyBuffer(dev, b->buffer, NULL);
    if (b->memory) vk.vkFreeMemory(dev, b->memory, NULL);
    free(b);
}

/* Thread-safe apart from the copies' state (no staging, no fence): Buffer() calls it without the GIL. */
mvk_buffer *mvk_buffer_create(mvk_context *ctx, uint64_t size, int host_mapped, char *err, size_t errlen) {
    mvk_buffer *b = calloc(1, sizeof *b);
    if (b == NULL) {
        mvk_set_error(err, errlen, "out of host memory");
        return NULL;
    }
    b->ctx = ctx;
    b->size = size ? size : 16;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, b->size,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             VK_SHARING_MODE_EXCLUSIVE, 0, NULL};
    MVK_CHECK(vk.vkCreateBuffer(ctx->device, &bi, NULL, &b->buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vk.vkGetBufferMemoryRequirements(ctx->device, b->buffer, &req);
    int type = choose_memory_type(ctx, req.memoryTypeBits, host_mapped);
    if (type < 0) {
        mvk_set_error(err, errlen, "no %s memory type for a buffer", host_mapped ? "host-visible" : "device");
        goto fail;
    }
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, (uint32_t)type};
    VkResult r = vk.vkAllocateMemory(ctx->device, &ai, NULL, &b->memory);
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "cannot allocate %llu bytes of Vulkan memory: %s", (unsigned long long)req.size,
                      mvk_result_name(r));
        goto fail;
    }
    MVK_CHECK(vk.vkBindBufferMemory(ctx->device, b->buffer, b->memory, 0), "vkBindBufferMemory");
    if (host_mapped) MVK_CHECK(vk.vkMapMemory(ctx->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped), "vkMapMemory");
    return b;
fail:
    buffer_free(b); /* no copy ever touched it: no settling (this may run without the GIL) */
    return NULL;
}

/* wait for the upload left in flight, if any */
static int copy_settle(mvk_context *ctx, char *err, size_t errlen) {
    if (!ctx->copy_inflight) return MVK_OK;
    ctx->copy_inflight = 0;
    VkResult r = vk.vkWaitForFences(ctx->device, 1, &ctx->copy_fence, VK_TRUE, MVK_WAIT_NS);
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "waiting for a host-to-device copy failed: %s", mvk_result_name(r));
        return MVK_ERROR;
    }
    vk.vkResetFences(ctx->device, 1, &ctx->copy_fence);
    return MVK_OK;
}

void mvk_buffer_destroy(mvk_buffer *b) {
    if (b == NULL) return;
    char ignored[8];
    copy_settle(b->ctx, ignored, sizeof ignored); /* a copy may still read or write it */
    buffer_free(b);
}

void *mvk_buffer_mapping(mvk_buffer *b) { return b->mapped; }

uint64_t mvk_context_copy_submits(mvk_context *ctx) { return ctx->copy_submits; }

static int ensure_staging(mvk_context *ctx, uint64_t want, char *err, size_t errlen) {
    if (copy_settle(ctx, err, errlen) != MVK_OK) return MVK_ERROR; /* before the host touches staging */
    if (want > MVK_STAGING_CAP) want = MVK_STAGING_CAP; /* more goes through in chunks: no new buffer */
    if (ctx->staging && ctx->staging->size >= want) return MVK_OK;
    uint64_t size = ctx->staging ? ctx->staging->size : (1u << 20);
    while (size < want) size *= 2;
    if (size > MVK_STAGING_CAP) size = MVK_STAGING_CAP;
    mvk_buffer *s = mvk_buffer_create(ctx, size, 1, err, errlen);
    if (s == NULL) return MVK_ERROR;
    mvk_buffer_destroy(ctx->staging);
    ctx->staging = s;
    return MVK_OK;
}

int mvk_staging_reserve(mvk_context *ctx, uint64_t size, char *err, size_t errlen) {
    return ensure_staging(ctx, size, err, errlen);
}

/* staging <-> buffer, the regions recorded into one command buffer and submitted; waited for unless
 * `wait` is 0 (an upload's last submit, see the top of this file) */
static int copy_regions(mvk_buffer *b, const VkBufferCopy *regions, uint32_t n, int to_device, int wait, char *err,
                        size_t errlen) {
    mvk_context *ctx = b->ctx;
    VkCommandBuffer cb = ctx->copy_cb;
    if (copy_settle(ctx, err, errlen) != MVK_OK) return MVK_ERROR;
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                   VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
    MVK_CHECK(vk.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    /* earlier compute or copies on this buffer finish before this copy touches it */
    mvk_global_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    if (to_device)
        vk.vkCmdCopyBuffer(cb, ctx->staging->buffer, b->buffer, n, regions);
    else
        vk.vkCmdCopyBuffer(cb, b->buffer, ctx->staging->buffer, n, regions);
    mvk_global_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    MVK_CHECK(vk.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    ctx->copy_submits++;
    if (wait) return mvk_submit_and_wait(ctx, cb, ctx->copy_fence, err, errlen);
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL};
    pthread_mutex_lock(&ctx->queue_lock);
    VkResult r = vk.vkQueueSubmit(ctx->queue, 1, &si, ctx->copy_fence);
    pthread_mutex_unlock(&ctx->queue_lock);
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "vkQueueSubmit failed: %s", mvk_result_name(r));
        return MVK_ERROR;
    }
    ctx->copy_inflight = 1;
    return MVK_OK;
fail:
    return MVK_ERROR;
}

/* one chunk: staging <-> buffer */
static int copy_chunk(mvk_buffer *b, uint64_t offset, uint64_t size, int to_device, int wait, char *err,
                      size_t errlen) {
    VkBufferCopy region = {to_device ? 0 : offset, to_device ? offset : 0, size};
    return copy_regions(b, &region, 1, to_device, wait, err, errlen);
}

static int check_range(mvk_buffer *b, uint64_t offset, uint64_t size, char *err, size_t errlen) {
    if (offset > b->size || size > b->size - offset) {
        mvk_set_error(err, errlen, "copy of %llu bytes at offset %llu is outside the %llu-byte buffer",
                      (unsigned long long)size, (unsigned long long)offset, (unsigned long long)b->size);
        return MVK_ERROR;
    }
    return MVK_OK;
}

/* Host bytes into device bytes: a copy, or (half) float32 narrowed to float16 on the way. */
static void put(void *dst, const void *src, uint64_t dst_bytes, int half) {
    if (half)
        mvk_narrow((const float *)src, (uint16_t *)dst, dst_bytes / 2);
    else
        memcpy(dst, src, dst_bytes);
}

static void get(void *dst, const void *src, uint64_t src_bytes, int half) {
    if (half)
        mvk_widen((const uint16_t *)src, (float *)dst, src_bytes / 2);
    else
        memcpy(dst, src, src_bytes);
}

/* size counts the device's bytes; with half the host side holds twice as many (float32) */
int mvk_buffer_write_as(mvk_buffer *b, uint64_t offset, const void *src, uint64_t size, int half, char *err,
                        size_t errlen) {
    if (check_range(b, offset, size, err, errlen) != MVK_OK) return MVK_ERROR;
    if (size == 0) return MVK_OK;
    if (b->mapped) {
        put((char *)b->mapped + offset, src, size, half);
        return MVK_OK;
    }
    if (ensure_staging(b->ctx, size, err, errlen) != MVK_OK) return MVK_ERROR;
    for (uint64_t done = 0; done < size;) {
        uint64_t n = size - done < b->ctx->staging->size ? size - done : b->ctx->staging->size;
        if (half) n &= ~1ull; /* whole elements per chunk */
        if (copy_settle(b->ctx, err, errlen) != MVK_OK) return MVK_ERROR; /* the last chunk's copy read it */
        put(b->ctx->staging->mapped, (const char *)src + (half ? done * 2 : done), n, half);
        if (copy_chunk(b, offset + done, n, 1, done + n == size ? 0 : 1, err, errlen) != MVK_OK) return MVK_ERROR;
        done += n;
    }
    return MVK_OK;
}

int mvk_buffer_write(mvk_buffer *b, uint64_t offset, const void *src, uint64_t size, char *err, size_t errlen) {
    return mvk_buffer_write_as(b, offset, src, size, 0, err, errlen);
}

/* Many host pieces into one buffer (a plan's weights): memcpy where it is mapped; else packed
 * into the staging buffer, sized once for all of them (up to MVK_STAGING_CAP), and copied by one
 * submit per staging fill (a piece larger than what is left continues in the next fill), the last
 * left in flight as a single upload's is. Each piece starts 4-byte aligned in staging. */
int mvk_buffer_write_many(mvk_buffer *b, uint32_t n, const uint64_t *offsets, const void *const *srcs,
                          const uint64_t *sizes, const uint8_t *halves, char *err, size_t errlen) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (check_range(b, offsets[i], sizes[i], err, errlen) != MVK_OK) return MVK_ERROR;
        total += sizes[i] + 3;
    }
    if (b->mapped) {
        for (uint32_t i = 0; i < n; ++i) put((char *)b->mapped + offsets[i], srcs[i], sizes[i], halves[i]);
        return MVK_OK;
    }
    if (total == 0) return MVK_OK;
    if (ensure_staging(b->ctx, total, err, errlen) != MVK_OK) return MVK_ERROR;
    VkBufferCopy *regions = malloc((n + 1) * sizeof *regions);
    if (regions == NULL) {
        mvk_set_error(err, errlen, "out of host memory");
        return MVK_ERROR;
    }
    const uint64_t cap = b->ctx->staging->size;
    char *stage = b->ctx->staging->mapped;
    uint64_t fill = 0;
    uint32_t used = 0;
    int rc = MVK_OK;
    for (uint32_t i = 0; i < n && rc == MVK_OK; ++i) {
        for (uint64_t done = 0; done < sizes[i] && rc == MVK_OK;) {
            if (cap - fill < 4) { /* full: copy what it holds, then refill from the start */
                rc = copy_regions(b, regions, used, 1, 1, err, errlen);
                fill = used = 0;
                continue;
            }
            uint64_t take = sizes[i] - done < cap - fill ? sizes[i] - done : cap - fill;
            if (halves[i]) take &= ~1ull; /* whole elements */
            put(stage + fill, (const char *)srcs[i] + (halves[i] ? done * 2 : done), take, halves[i]);
            VkBufferCopy region = {fill, offsets[i] + done, take};
            regions[used++] = region;
            fill = (fill + take + 3) & ~3ull;
            if (fill > cap) fill = cap;
            done += take;
        }
    }
    if (rc == MVK_OK && used) rc = copy_regions(b, regions, used, 1, 0, err, errlen);
    free(regions);
    return rc;
}

int mvk_buffer_read_as(mvk_buffer *b, uint64_t offset, void *dst, uint64_t size, int half, char *err,
                       size_t errlen) {
    if (check_range(b, offset, size, err, errlen) != MVK_OK) return MVK_ERROR;
    if (size == 0) return MVK_OK;
    if (b->mapped) {
        get(dst, (const char *)b->mapped + offset, size, half);
        return MVK_OK;
    }
    if (ensure_staging(b->ctx, size, err, errlen) != MVK_OK) return MVK_ERROR;
    for (uint64_t done = 0; done < size;) {
        uint64_t n = size - done < b->ctx->staging->size ? size - done : b->ctx->staging->size;
        if (half) n &= ~1ull;
        if (copy_chunk(b, offset + done, n, 0, 1, err, errlen) != MVK_OK) return MVK_ERROR;
        get((char *)dst + (half ? done * 2 : done), b->ctx->staging->mapped, n, half);
        done += n;
    }
    return MVK_OK;
}

int mvk_buffer_read(mvk_buffer *b, uint64_t offset, void *dst, uint64_t size, char *err, size_t errlen) {
    return mvk_buffer_read_as(b, offset, dst, size, 0, err, errlen);
}
