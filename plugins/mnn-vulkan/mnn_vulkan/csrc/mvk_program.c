/* Compute pipelines, and programs: one segment's dispatches in one command buffer.
 *
 * A program collects dispatches at resize (pipeline, tensor ranges in the
 * arena, push constants, group counts, whether a barrier must precede it),
 * then `finish` allocates one descriptor set per dispatch from its own pool,
 * writes them, and records the command buffer once. `run` submits it and
 * waits on the program's fence: one submit and one wait per run.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mvk_internal.h"

mvk_pipeline *mvk_pipeline_create(mvk_context *ctx, const uint32_t *code, size_t code_bytes, uint32_t n_bindings,
                                  const uint32_t *spec, uint32_t n_spec, char *err, size_t errlen) {
    if (n_bindings > MVK_MAX_BINDINGS || n_spec > 16) {
        mvk_set_error(err, errlen, "a pipeline takes at most %d bindings and 16 constants", MVK_MAX_BINDINGS);
        return NULL;
    }
    mvk_pipeline *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->ctx = ctx;
    p->n_bindings = n_bindings;
    VkShaderModuleCreateInfo si = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, code_bytes, code};
    MVK_CHECK(vk.vkCreateShaderModule(ctx->device, &si, NULL, &p->module), "vkCreateShaderModule");
    VkSpecializationMapEntry entries[16];
    for (uint32_t i = 0; i < n_spec; ++i) {
        VkSpecializationMapEntry e = {i, i * 4u, 4};
        entries[i] = e;
    }
    VkSpecializationInfo spi = {n_spec, entries, n_spec * 4u, spec};
    VkPipelineShaderStageCreateInfo stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                                             VK_SHADER_STAGE_COMPUTE_BIT, p->module, "main", n_spec ? &spi : NULL};
    VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, 0, stage,
                                      ctx->layouts[n_bindings], NULL, -1};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    MVK_CHECK(vk.vkCreateComputePipelines(ctx->device, ctx->cache, 1, &ci, NULL, &p->pipeline),
              "vkCreateComputePipelines");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ctx->pipelines_created += 1;
    ctx->pipeline_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
    return p;
fail:
    mvk_pipeline_destroy(p);
    return NULL;
}

void mvk_context_pipeline_stats(mvk_context *ctx, uint64_t *created, uint64_t *ns) {
    *created = ctx->pipelines_created;
    *ns = ctx->pipeline_ns;
}

void mvk_pipeline_destroy(mvk_pipeline *p) {
    if (p == NULL) return;
    if (p->pipeline) vk.vkDestroyPipeline(p->ctx->device, p->pipeline, NULL);
    if (p->module) vk.vkDestroyShaderModule(p->ctx->device, p->module, NULL);
    free(p);
}

/* -- programs ------------------------------------------------------------------ */

typedef struct mvk_dispatch {
    mvk_pipeline *pipe;
    uint32_t first_binding; /* into the program's offsets/ranges */
    uint32_t push_size;
    uint8_t push[MVK_MAX_PUSH];
    uint32_t groups[3];
    int barrier;
} mvk_dispatch;

struct mvk_program {
    mvk_context *ctx;
    mvk_dispatch *d;
    uint32_t n, cap;
    mvk_buffer **bufs; /* per binding, like offsets and ranges */
    uint64_t *offsets, *ranges;
    uint32_t nb, nb_cap;
    VkDescriptorPool pool;
    VkDescriptorSet *sets;
    VkCommandBuffer cb;
    VkFence fence;
    VkQueryPool queries;
    int finished;
    int pending; /* a wait failed: the GPU may still use this program */
    char error[512];
    mnn_execution exe;
};

static int run_abi(void *state, const mnn_tensor *inputs, int32_t n_inputs, mnn_tensor *outputs, int32_t n_outputs) {
    (void)inputs;
    (void)n_inputs;
    (void)outputs;
    (void)n_outputs; /* every tensor's place in the arena was fixed at resize */
    return mvk_program_run((mvk_program *)state);
}

static const char *error_abi(void *state) { return mvk_program_error((mvk_program *)state); }

mvk_program *mvk_program_create(mvk_context *ctx, char *err, size_t errlen) {
    mvk_program *p = calloc(1, sizeof *p);
    if (p == NULL) {
        mvk_set_error(err, errlen, "out of host memory");
        return NULL;
    }
    p->ctx = ctx;
    p->exe.abi_version = MNN_ABI_VERSION;
    p->exe.run = run_abi;
    p->exe.state = p;
    p->exe.error = error_abi;
    p->exe.name = "vulkan.segment";
    return p;
}

static int grow(void **ptr, uint32_t *cap, uint32_t need, size_t item) {
    if (need <= *cap) return MVK_OK;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*ptr, (size_t)c * item);
    if (q == NULL) return MVK_ERROR;
    *ptr = q;
    *cap = c;
    return MVK_OK;
}

int mvk_program_dispatch(mvk_program *p, mvk_pipeline *pipe, mvk_buffer *const *bufs, const uint64_t *offsets,
                         const uint64_t *ranges, const void *push, uint32_t push_size, uint32_t gx, uint32_t gy,
                         uint32_t gz, int barrier_before, char *err, size_t errlen) {
    if (p->finished) {
        mvk_set_error(err, errlen, "the program is already recorded");
        return MVK_ERROR;
    }
    if (push_size > MVK_MAX_PUSH) {
        mvk_set_error(err, errlen, "push constants of %u bytes exceed %d", push_size, MVK_MAX_PUSH);
        return MVK_ERROR;
    }
    const VkPhysicalDeviceLimits *lim = &p->ctx->props.limits;
    for (uint32_t i = 0; i < pipe->n_bindings; ++i) {
        if (lim->minStorageBufferOffsetAlignment && offsets[i] % lim->minStorageBufferOffsetAlignment) {
            mvk_set_error(err, errlen, "binding %u at offset %llu is not aligned to %llu bytes", i,
                          (unsigned long long)offsets[i], (unsigned long long)lim->minStorageBufferOffsetAlignment);
            return MVK_ERROR;
        }
        if (ranges[i] == 0 || offsets[i] + ranges[i] > bufs[i]->size || ranges[i] > lim->maxStorageBufferRange) {
            mvk_set_error(err, errlen, "binding %u (%llu bytes at %llu) is outside its %llu-byte buffer or over the "
                          "device's %u-byte storage range", i, (unsigned long long)ranges[i],
                          (unsigned long long)offsets[i], (unsigned long long)bufs[i]->size,
                          lim->maxStorageBufferRange);
            return MVK_ERROR;
        }
    }
    uint32_t nb_cap = p->nb_cap;
    if (grow((void **)&p->d, &p->cap, p->n + 1, sizeof *p->d) ||
        grow((void **)&p->offsets, &p->nb_cap, p->nb + pipe->n_bindings, sizeof *p->offsets)) {
        mvk_set_error(err, errlen, "out of host memory");
        return MVK_ERROR;
    }
    if (p->nb_cap != nb_cap) { /* ranges and buffers grow with offsets */
        uint64_t *r = realloc(p->ranges, (size_t)p->nb_cap * sizeof *r);
        if (r) p->ranges = r;
        mvk_buffer **b = realloc(p->bufs, (size_t)p->nb_cap * sizeof *b);
        if (b) p->bufs = b;
        if (!r || !b) {
            mvk_set_error(err, errlen, "out of host memory");
            return MVK_ERROR;
        }
    }
    mvk_dispatch *d = &p->d[p->n++];
    memset(d, 0, sizeof *d);
    d->pipe = pipe;
    d->first_binding = p->nb;
    d->push_size = push_size;
    if (push_size) memcpy(d->push, push, push_size);
    d->groups[0] = gx;
    d->groups[1] = gy;
    d->groups[2] = gz;
    d->barrier = barrier_before;
    memcpy(p->offsets + p->nb, offsets, pipe->n_bindings * sizeof *offsets);
    memcpy(p->ranges + p->nb, ranges, pipe->n_bindings * sizeof *ranges);
    memcpy(p->bufs + p->nb, bufs, pipe->n_bindings * sizeof *bufs);
    p->nb += pipe->n_bindings;
    return MVK_OK;
}

static int write_sets(mvk_program *p, char *err, size_t errlen) {
    VkDevice dev = p->ctx->device;
    uint32_t n_sets = p->n ? p->n : 1;
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, p->nb ? p->nb : 1};
    VkDescriptorPoolCreateInfo pi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, n_sets, 1, &size};
    MVK_CHECK(vk.vkCreateDescriptorPool(dev, &pi, NULL, &p->pool), "vkCreateDescriptorPool");
    __atomic_fetch_add(&p->ctx->allocations, 1, __ATOMIC_RELAXED);
    p->sets = calloc(n_sets, sizeof *p->sets);
    VkDescriptorSetLayout *layouts = calloc(n_sets, sizeof *layouts);
    VkDescriptorBufferInfo *infos = calloc(p->nb ? p->nb : 1, sizeof *infos);
    VkWriteDescriptorSet *writes = calloc(p->nb ? p->nb : 1, sizeof *writes);
    if (!p->sets || !layouts || !infos || !writes) {
        free(layouts);
        free(infos);
        free(writes);
        mvk_set_error(err, errlen, "out of host memory");
        return MVK_ERROR;
    }
    for (uint32_t i = 0; i < p->n; ++i) layouts[i] = p->ctx->set_layouts[p->d[i].pipe->n_bindings];
    VkResult r = VK_SUCCESS;
    if (p->n) {
        VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, p->pool, p->n, layouts};
        r = vk.vkAllocateDescriptorSets(dev, &ai, p->sets);
    }
    if (r == VK_SUCCESS) {
        uint32_t w = 0;
        for (uint32_t i = 0; i < p->n; ++i)
            for (uint32_t b = 0; b < p->d[i].pipe->n_bindings; ++b, ++w) {
                uint32_t k = p->d[i].first_binding + b;
                VkDescriptorBufferInfo info = {p->bufs[k]->buffer, p->offsets[k], p->ranges[k]};
                infos[w] = info;
                VkWriteDescriptorSet wr = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, p->sets[i], b, 0, 1,
                                           VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &infos[w], NULL};
                writes[w] = wr;
            }
        if (w) vk.vkUpdateDescriptorSets(dev, w, writes, 0, NULL);
    }
    free(layouts);
    free(infos);
    free(writes);
    MVK_CHECK(r, "vkAllocateDescriptorSets");
    return MVK_OK;
fail:
    return MVK_ERROR;
}

int mvk_program_finish(mvk_program *p, int timestamps, char *err, size_t errlen) {
    mvk_context *ctx = p->ctx;
    VkDevice dev = ctx->device;
    if (p->finished) return MVK_OK;
    if (write_sets(p, err, errlen) != MVK_OK) return MVK_ERROR;
    if (timestamps && p->n) {
        VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0, VK_QUERY_TYPE_TIMESTAMP,
                                    p->n + 1, 0};
        MVK_CHECK(vk.vkCreateQueryPool(dev, &qi, NULL, &p->queries), "vkCreateQueryPool");
    }
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, ctx->pool,
                                      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    MVK_CHECK(vk.vkAllocateCommandBuffers(dev, &ai, &p->cb), "vkAllocateCommandBuffers");
    __atomic_fetch_add(&ctx->allocations, 1, __ATOMIC_RELAXED);
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
    MVK_CHECK(vk.vkCreateFence(dev, &fi, NULL, &p->fence), "vkCreateFence");

    VkCommandBuffer cb = p->cb;
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, NULL};
    MVK_CHECK(vk.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    /* host writes, staging copies and earlier programs come before this program */
    mvk_global_barrier(cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (p->queries) {
        vk.vkCmdResetQueryPool(cb, p->queries, 0, p->n + 1);
        vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, p->queries, 0);
    }
    VkPipeline bound = NULL;
    for (uint32_t i = 0; i < p->n; ++i) {
        mvk_dispatch *d = &p->d[i];
        if (d->barrier && i > 0)
            mvk_global_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        if (d->pipe->pipeline != bound) {
            vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d->pipe->pipeline);
            bound = d->pipe->pipeline;
        }
        vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, ctx->layouts[d->pipe->n_bindings], 0, 1,
                                   &p->sets[i], 0, NULL);
        if (d->push_size)
            vk.vkCmdPushConstants(cb, ctx->layouts[d->pipe->n_bindings], VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                  d->push_size, d->push);
        vk.vkCmdDispatch(cb, d->groups[0], d->groups[1], d->groups[2]);
        if (p->queries) vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->queries, i + 1);
    }
    /* results are read by the host (mapped arena) or by staging copies */
    mvk_global_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
    MVK_CHECK(vk.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    p->finished = 1;
    return MVK_OK;
fail:
    return MVK_ERROR;
}

int mvk_program_run(mvk_program *p) {
    if (!p->finished) {
        mvk_set_error(p->error, sizeof p->error, "the Vulkan program was never recorded");
        return MVK_ERROR;
    }
    int rc = mvk_submit_and_wait(p->ctx, p->cb, p->fence, p->error, sizeof p->error);
    if (rc != MVK_OK) p->pending = 1;
    return rc;
}

const char *mvk_program_error(mvk_program *p) { return p->error[0] ? p->error : NULL; }

uint32_t mvk_program_size(mvk_program *p) { return p->n; }

mnn_execution *mvk_program_execution(mvk_program *p) { return &p->exe; }

int mvk_program_times(mvk_program *p, double *ms, uint32_t n) {
    if (p->queries == NULL || n < p->n) return MVK_ERROR;
    uint64_t *ticks = calloc(p->n + 1, sizeof *ticks);
    if (ticks == NULL) return MVK_ERROR;
    VkResult r = vk.vkGetQueryPoolResults(p->ctx->device, p->queries, 0, p->n + 1, (p->n + 1) * sizeof *ticks, ticks,
                                          sizeof *ticks, VK_QUERY_RESULT_64_BIT);
    if (r == VK_SUCCESS) {
        double period = p->ctx->props.limits.timestampPeriod * 1e-6;
        for (uint32_t i = 0; i < p->n; ++i) ms[i] = (double)(ticks[i + 1] - ticks[i]) * period;
    }
    free(ticks);
    return r == VK_SUCCESS ? MVK_OK : MVK_ERROR;
}

void mvk_program_destroy(mvk_program *p) {
    if (p == NULL) return;
    VkDevice dev = p->ctx->device;
    if (p->pending) vk.vkDeviceWaitIdle(dev); /* never free work in flight */
    if (p->fence) vk.vkDestroyFence(dev, p->fence, NULL);
    if (p->cb) vk.vkFreeCommandBuffers(dev, p->ctx->pool, 1, &p->cb);
    if (p->queries) vk.vkDestroyQueryPool(dev, p->queries, NULL);
    if (p->pool) vk.vkDestroyDescriptorPool(dev, p->pool, NULL);
    free(p->sets);
    free(p->d);
    free(p->offsets);
    free(p->ranges);
    free(p->bufs);
    free(p);
}
