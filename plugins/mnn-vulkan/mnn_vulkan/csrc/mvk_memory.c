/* Device buffers and host copies.
 *
 * The plan's arena is one VkBuffer. Where the device shares memory with the
 * host (lavapipe, integrated GPUs) it is host-visible and coherent, and host
 * copies are memcpy through its mapping. On a discrete GPU it is device-local
 * and host copies go through the context's staging buffer (host-visible,
 * cached where the device offers it: the host reads results back from it), in
 * chunks of MVK_COPY_CHUNK, each copied by a command buffer and fence of its
 * own (a "slot"), so that the host's memcpy of one chunk overlaps the DMA of
 * the last: an upload fills chunk after chunk and submits each as it is full;
 * a download submits every chunk's copy at once and takes each out as its
 * fence signals. An upload's copies are not waited for (an input written
 * before a run: its DMA overlaps the run's submit, and the barrier recorded
 * after each copy orders it before any later submission's compute on the same
 * queue); whatever next touches the staging buffer or a buffer being freed
 * waits first (settle). A plan's weights (write_many) fill the whole staging
 * buffer per submit instead.
 *
 * A run's copies come without the GIL (mvk_transfer.c), so all of this is
 * guarded by the context's copy lock.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
    if (host_mapped == MVK_MAPPED_DEVICE_LOCAL) /* the GPU's own memory through the PCIe BAR, or none */
        return find_memory_type(ctx, bits, HOST | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
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
    b->flags = ctx->memory.memoryTypes[type].propertyFlags;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, (uint32_t)type};
    VkResult r = vk.vkAllocateMemory(ctx->device, &ai, NULL, &b->memory);
    __atomic_fetch_add(&ctx->allocations, 1, __ATOMIC_RELAXED);
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

uint64_t mvk_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int mvk_copies_init(mvk_context *ctx, char *err, size_t errlen) {
    /* MNN_VULKAN_COPY_CHUNK: another chunk size, for A/B runs (32 MiB: one chunk, no overlap) */
    const char *chunk = getenv("MNN_VULKAN_COPY_CHUNK");
    ctx->copy_chunk = chunk && *chunk ? strtoull(chunk, NULL, 10) : MVK_COPY_CHUNK;
    if (ctx->copy_chunk < (64u << 10)) ctx->copy_chunk = 64u << 10;
    if (ctx->copy_chunk > MVK_STAGING_CAP) ctx->copy_chunk = MVK_STAGING_CAP;
    ctx->copy_chunk &= ~3ull; /* whole float16 and float32 elements */
    /* a download in one DMA by default: on the H100, BERT-base's 6.3 MB output in 2 MiB chunks waited
     * 0.55 ms for their fences against 0.31 ms for one copy, and gained nothing on the memcpy */
    ctx->read_chunk = chunk && *chunk ? ctx->copy_chunk : MVK_STAGING_CAP;
    /* a large memcpy over 4 threads where there are 8 cores or more: on the H100's host, ResNet-50's
     * 9.6 MB input went into staging in 0.50 ms against 1.51 ms on one thread */
    const char *threads = getenv("MNN_VULKAN_COPY_THREADS");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ctx->copy_threads = threads && *threads ? atoi(threads) : cores >= 8 ? 4 : 1;
    if (ctx->copy_threads < 1) ctx->copy_threads = 1;
    if (ctx->copy_threads > 16) ctx->copy_threads = 16;
    VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                  VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, ctx->family};
    MVK_CHECK(vk.vkCreateCommandPool(ctx->device, &pi, NULL, &ctx->copy_pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, ctx->copy_pool,
                                      VK_COMMAND_BUFFER_LEVEL_PRIMARY, MVK_COPY_SLOTS};
    MVK_CHECK(vk.vkAllocateCommandBuffers(ctx->device, &ai, ctx->copy_cb), "vkAllocateCommandBuffers");
    __atomic_fetch_add(&ctx->allocations, 1, __ATOMIC_RELAXED);
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
    for (int i = 0; i < MVK_COPY_SLOTS; ++i)
        MVK_CHECK(vk.vkCreateFence(ctx->device, &fi, NULL, &ctx->copy_fence[i]), "vkCreateFence");
    return MVK_OK;
fail:
    return MVK_ERROR;
}

void mvk_copies_destroy(mvk_context *ctx) {
    mvk_buffer_destroy(ctx->staging); /* after vkDeviceWaitIdle: nothing in flight */
    mvk_buffer_destroy(ctx->upload);
    ctx->staging = ctx->upload = NULL;
    mvk_copy_pool_destroy(ctx->copy_pool_threads);
    ctx->copy_pool_threads = NULL;
    for (int i = 0; i < MVK_COPY_SLOTS; ++i)
        if (ctx->copy_fence[i]) vk.vkDestroyFence(ctx->device, ctx->copy_fence[i], NULL);
    if (ctx->copy_pool) vk.vkDestroyCommandPool(ctx->device, ctx->copy_pool, NULL);
}

/* wait for slot's copy if it is in flight (copy lock held) */
static int slot_wait(mvk_context *ctx, int slot, int dir, char *err, size_t errlen) {
    if (!(ctx->copy_busy & (1u << slot))) return MVK_OK;
    uint64_t t0 = mvk_now_ns();
    ctx->copy_busy &= ~(1u << slot);
    VkResult r = vk.vkWaitForFences(ctx->device, 1, &ctx->copy_fence[slot], VK_TRUE, MVK_WAIT_NS);
    vk.vkResetFences(ctx->device, 1, &ctx->copy_fence[slot]);
    ctx->stats.wait_ns[dir] += mvk_now_ns() - t0;
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "waiting for a host<->device copy failed: %s", mvk_result_name(r));
        return MVK_ERROR;
    }
    return MVK_OK;
}

/* wait for every copy in flight (copy lock held) */
static int settle(mvk_context *ctx, char *err, size_t errlen) {
    int rc = MVK_OK;
    for (int i = 0; i < MVK_COPY_SLOTS; ++i)
        if (slot_wait(ctx, i, 0, err, errlen) != MVK_OK) rc = MVK_ERROR;
    return rc;
}

void mvk_buffer_destroy(mvk_buffer *b) {
    if (b == NULL) return;
    mvk_context *ctx = b->ctx;
    char ignored[8];
    pthread_mutex_lock(&ctx->copy_lock);
    settle(ctx, ignored, sizeof ignored); /* a copy may still read or write it */
    pthread_mutex_unlock(&ctx->copy_lock);
    buffer_free(b);
}

void *mvk_buffer_mapping(mvk_buffer *b) { return b->mapped; }

uint64_t mvk_context_copy_submits(mvk_context *ctx) { return ctx->copy_submits; }

void mvk_context_copy_stats(mvk_context *ctx, mvk_copy_stats *out) {
    pthread_mutex_lock(&ctx->copy_lock);
    *out = ctx->stats;
    pthread_mutex_unlock(&ctx->copy_lock);
}

uint32_t mvk_context_memory_types(mvk_context *ctx, uint32_t *flags, uint64_t *heap_bytes, uint32_t max) {
    uint32_t n = ctx->memory.memoryTypeCount;
    for (uint32_t i = 0; i < n && i < max; ++i) {
        flags[i] = ctx->memory.memoryTypes[i].propertyFlags;
        heap_bytes[i] = ctx->memory.memoryHeaps[ctx->memory.memoryTypes[i].heapIndex].size;
    }
    return n;
}

void mvk_context_staging_flags(mvk_context *ctx, uint32_t *staging, uint32_t *upload) {
    pthread_mutex_lock(&ctx->copy_lock);
    *staging = ctx->staging ? ctx->staging->flags : 0;
    *upload = ctx->upload ? ctx->upload->flags : *staging;
    pthread_mutex_unlock(&ctx->copy_lock);
}

uint64_t mvk_context_allocations(mvk_context *ctx) { return __atomic_load_n(&ctx->allocations, __ATOMIC_RELAXED); }

/* a staging buffer of at least `want` bytes (up to MVK_STAGING_CAP), nothing in flight (copy lock held) */
static int ensure_staging(mvk_context *ctx, uint64_t want, char *err, size_t errlen) {
    if (settle(ctx, err, errlen) != MVK_OK) return MVK_ERROR; /* before the host touches staging */
    if (want > MVK_STAGING_CAP) want = MVK_STAGING_CAP; /* more goes through in chunks: no new buffer */
    if (ctx->staging && ctx->staging->size >= want) return MVK_OK;
    uint64_t size = ctx->staging ? ctx->staging->size : (1u << 20);
    while (size < want) size *= 2;
    if (size > MVK_STAGING_CAP) size = MVK_STAGING_CAP;
    mvk_buffer *s = mvk_buffer_create(ctx, size, 1, err, errlen);
    if (s == NULL) return MVK_ERROR;
    if (ctx->staging) buffer_free(ctx->staging); /* settled above */
    ctx->staging = s;
    return MVK_OK;
}

int mvk_staging_reserve(mvk_context *ctx, uint64_t size, char *err, size_t errlen) {
    pthread_mutex_lock(&ctx->copy_lock);
    int rc = ensure_staging(ctx, size, err, errlen);
    pthread_mutex_unlock(&ctx->copy_lock);
    return rc;
}

/* staging <-> buffer, the regions recorded into slot's command buffer and submitted with its fence
 * (copy lock held, the slot idle); waited for when `wait` */
static int copy_regions(mvk_buffer *b, mvk_buffer *stage, const VkBufferCopy *regions, uint32_t n, int to_device,
                        int slot, int wait, char *err, size_t errlen) {
    mvk_context *ctx = b->ctx;
    VkCommandBuffer cb = ctx->copy_cb[slot];
    int dir = to_device ? 0 : 1;
    uint64_t t0 = mvk_now_ns();
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                   VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
    MVK_CHECK(vk.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    /* earlier compute or copies on this buffer finish before this copy touches it */
    mvk_global_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    if (to_device)
        vk.vkCmdCopyBuffer(cb, stage->buffer, b->buffer, n, regions);
    else
        vk.vkCmdCopyBuffer(cb, b->buffer, stage->buffer, n, regions);
    mvk_global_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    MVK_CHECK(vk.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    ctx->copy_submits++;
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL};
    pthread_mutex_lock(&ctx->queue_lock);
    VkResult r = vk.vkQueueSubmit(ctx->queue, 1, &si, ctx->copy_fence[slot]);
    pthread_mutex_unlock(&ctx->queue_lock);
    ctx->stats.submit_ns[dir] += mvk_now_ns() - t0;
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "vkQueueSubmit failed: %s", mvk_result_name(r));
        return MVK_ERROR;
    }
    ctx->copy_busy |= 1u << slot;
    return wait ? slot_wait(ctx, slot, dir, err, errlen) : MVK_OK;
fail:
    return MVK_ERROR;
}

/* one chunk: staging at stage_off <-> buffer at offset */
static int copy_chunk(mvk_buffer *b, mvk_buffer *stage, uint64_t stage_off, uint64_t offset, uint64_t size,
                      int to_device, int slot, char *err, size_t errlen) {
    VkBufferCopy region = {to_device ? stage_off : offset, to_device ? offset : stage_off, size};
    return copy_regions(b, stage, &region, 1, to_device, slot, 0, err, errlen);
}

/* The buffer a run's upload is written into: the staging buffer, or with MNN_VULKAN_UPLOAD=bar
 * (on a device with memory both device-local and host-visible: a resizable BAR) one of that memory,
 * so that the host's stores cross PCIe themselves and the copy command stays inside the GPU
 * (copy lock held, nothing in flight). */
static mvk_buffer *upload_buffer(mvk_context *ctx) {
    if (!ctx->upload_tried) {
        ctx->upload_tried = 1;
        const char *how = getenv("MNN_VULKAN_UPLOAD");
        if (how && strcmp(how, "bar") == 0) {
            char ignored[256];
            ctx->upload = mvk_buffer_create(ctx, ctx->staging->size, MVK_MAPPED_DEVICE_LOCAL, ignored, sizeof ignored);
        }
    }
    return ctx->upload ? ctx->upload : ctx->staging;
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

/* size counts the device's bytes; with half the host side holds twice as many (float32) */
static int write_staged(mvk_buffer *b, uint64_t offset, const char *src, uint64_t size, int half, char *err,
                        size_t errlen) {
    mvk_context *ctx = b->ctx;
    if (ensure_staging(ctx, size, err, errlen) != MVK_OK) return MVK_ERROR;
    mvk_buffer *up = upload_buffer(ctx);
    uint64_t chunk = up->size < ctx->copy_chunk ? up->size : ctx->copy_chunk;
    int slots = (int)(up->size / chunk);
    if (slots > MVK_COPY_SLOTS) slots = MVK_COPY_SLOTS;
    char *stage = up->mapped;
    uint64_t host_ns = 0;
    for (uint64_t done = 0, i = 0; done < size; ++i) {
        int slot = (int)(i % (uint64_t)slots);
        uint64_t n = size - done < chunk ? size - done : chunk;
        if (half) n &= ~1ull; /* whole elements per chunk */
        if (slot_wait(ctx, slot, 0, err, errlen) != MVK_OK) return MVK_ERROR; /* its last copy read it */
        uint64_t t0 = mvk_now_ns();
        mvk_host_copy(ctx, stage + (uint64_t)slot * chunk, src + (half ? done * 2 : done), n, half, 1);
        host_ns += mvk_now_ns() - t0;
        if (copy_chunk(b, up, (uint64_t)slot * chunk, offset + done, n, 1, slot, err, errlen) != MVK_OK)
            return MVK_ERROR;
        done += n;
    }
    ctx->stats.host_ns[0] += host_ns;
    return MVK_OK;
}

int mvk_buffer_write_as(mvk_buffer *b, uint64_t offset, const void *src, uint64_t size, int half, char *err,
                        size_t errlen) {
    if (check_range(b, offset, size, err, errlen) != MVK_OK) return MVK_ERROR;
    if (size == 0) return MVK_OK;
    mvk_context *ctx = b->ctx;
    pthread_mutex_lock(&ctx->copy_lock);
    int rc = MVK_OK;
    if (b->mapped) {
        uint64_t t0 = mvk_now_ns();
        mvk_host_copy(ctx, (char *)b->mapped + offset, src, size, half, 1);
        ctx->stats.host_ns[0] += mvk_now_ns() - t0;
    } else {
        rc = write_staged(b, offset, src, size, half, err, errlen);
    }
    ctx->stats.copies[0]++;
    ctx->stats.bytes[0] += size;
    pthread_mutex_unlock(&ctx->copy_lock);
    return rc;
}

int mvk_buffer_write(mvk_buffer *b, uint64_t offset, const void *src, uint64_t size, char *err, size_t errlen) {
    return mvk_buffer_write_as(b, offset, src, size, 0, err, errlen);
}

/* Many host pieces into one buffer (a plan's weights): memcpy where it is mapped; else packed
 * into the staging buffer, sized once for all of them (up to MVK_STAGING_CAP), and copied by one
 * submit per staging fill (a piece larger than what is left continues in the next fill), the last
 * left in flight as a single upload's is. Each piece starts 4-byte aligned in staging. */
static int write_many_staged(mvk_buffer *b, uint32_t n, const uint64_t *offsets, const void *const *srcs,
                             const uint64_t *sizes, const uint8_t *halves, uint64_t total, char *err,
                             size_t errlen) {
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
                rc = copy_regions(b, b->ctx->staging, regions, used, 1, 0, 1, err, errlen);
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
    if (rc == MVK_OK && used) rc = copy_regions(b, b->ctx->staging, regions, used, 1, 0, 0, err, errlen);
    free(regions);
    return rc;
}

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
    pthread_mutex_lock(&b->ctx->copy_lock);
    int rc = write_many_staged(b, n, offsets, srcs, sizes, halves, total, err, errlen);
    pthread_mutex_unlock(&b->ctx->copy_lock);
    return rc;
}

/* every chunk's copy submitted at once (as many as there are slots), each taken out of staging as
 * its fence signals, its slot then copying the next chunk not yet submitted */
static int read_staged(mvk_buffer *b, uint64_t offset, char *dst, uint64_t size, int half, char *err,
                       size_t errlen) {
    mvk_context *ctx = b->ctx;
    if (ensure_staging(ctx, size, err, errlen) != MVK_OK) return MVK_ERROR;
    uint64_t chunk = ctx->staging->size < ctx->read_chunk ? ctx->staging->size : ctx->read_chunk;
    uint64_t slots = ctx->staging->size / chunk;
    if (slots > MVK_COPY_SLOTS) slots = MVK_COPY_SLOTS;
    uint64_t chunks = (size + chunk - 1) / chunk, host_ns = 0;
    char *stage = ctx->staging->mapped;
    for (uint64_t i = 0; i < chunks && i < slots; ++i) {
        uint64_t n = size - i * chunk < chunk ? size - i * chunk : chunk;
        if (copy_chunk(b, ctx->staging, i * chunk, offset + i * chunk, n, 0, (int)i, err, errlen) != MVK_OK)
            return MVK_ERROR;
    }
    for (uint64_t i = 0; i < chunks; ++i) {
        int slot = (int)(i % slots);
        uint64_t n = size - i * chunk < chunk ? size - i * chunk : chunk;
        if (slot_wait(ctx, slot, 1, err, errlen) != MVK_OK) return MVK_ERROR;
        uint64_t t0 = mvk_now_ns();
        mvk_host_copy(ctx, dst + (half ? i * chunk * 2 : i * chunk), stage + (uint64_t)slot * chunk, n, half, 0);
        host_ns += mvk_now_ns() - t0;
        uint64_t next = i + slots;
        if (next < chunks) {
            uint64_t m = size - next * chunk < chunk ? size - next * chunk : chunk;
            if (copy_chunk(b, ctx->staging, (uint64_t)slot * chunk, offset + next * chunk, m, 0, slot, err, errlen) !=
                MVK_OK)
                return MVK_ERROR;
        }
    }
    ctx->stats.host_ns[1] += host_ns;
    return MVK_OK;
}

int mvk_buffer_read_as(mvk_buffer *b, uint64_t offset, void *dst, uint64_t size, int half, char *err,
                       size_t errlen) {
    if (check_range(b, offset, size, err, errlen) != MVK_OK) return MVK_ERROR;
    if (size == 0) return MVK_OK;
    mvk_context *ctx = b->ctx;
    pthread_mutex_lock(&ctx->copy_lock);
    int rc = MVK_OK;
    if (b->mapped) {
        uint64_t t0 = mvk_now_ns();
        mvk_host_copy(ctx, dst, (const char *)b->mapped + offset, size, half, 0);
        ctx->stats.host_ns[1] += mvk_now_ns() - t0;
    } else {
        rc = read_staged(b, offset, dst, size, half, err, errlen);
    }
    ctx->stats.copies[1]++;
    ctx->stats.bytes[1] += size;
    pthread_mutex_unlock(&ctx->copy_lock);
    return rc;
}

int mvk_buffer_read(mvk_buffer *b, uint64_t offset, void *dst, uint64_t size, char *err, size_t errlen) {
    return mvk_buffer_read_as(b, offset, dst, size, 0, err, errlen);
}
