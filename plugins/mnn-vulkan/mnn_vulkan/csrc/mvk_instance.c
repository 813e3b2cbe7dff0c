/* The loader, the process-wide instance, device descriptions and validation.
 *
 * One instance per process: devices are listed once and contexts are made
 * from it. With validation on (the Khronos layer, when installed), a
 * debug-utils messenger counts errors so tests can fail on them.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mvk_internal.h"

mvk_fns vk;
VkInstance mvk_instance = NULL;

static void *g_library = NULL;
static VkDebugUtilsMessengerEXT g_messenger = NULL;
static int g_validation = 0;
static VkPhysicalDevice *g_phys = NULL;
static uint32_t g_n_phys = 0;
static _Atomic uint64_t g_errors = 0;
static pthread_mutex_t g_msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_last_message[2048] = "";

static const char VALIDATION_LAYER[] = "VK_LAYER_KHRONOS_validation";

void mvk_set_error(char *err, size_t errlen, const char *fmt, ...) {
    if (err == NULL || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *mvk_result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver / ICD found)";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "VkResult error";
    }
}

static VkBool32 VKAPI_PTR on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                     const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
    (void)types;
    (void)user;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        atomic_fetch_add(&g_errors, 1);
        pthread_mutex_lock(&g_msg_lock);
        snprintf(g_last_message, sizeof g_last_message, "%s", data && data->pMessage ? data->pMessage : "?");
        pthread_mutex_unlock(&g_msg_lock);
        if (getenv("MNN_VULKAN_DEBUG")) fprintf(stderr, "mnn-vulkan validation: %s\n", g_last_message);
    }
    return VK_FALSE;
}

static int has_layer(const char *name) {
    uint32_t n = 0;
    if (vk.vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *props = calloc(n, sizeof *props);
    int found = 0;
    if (props && vk.vkEnumerateInstanceLayerProperties(&n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; ++i) found |= strcmp(props[i].layerName, name) == 0;
    free(props);
    return found;
}

static int has_extension(const char *layer, const char *name) {
    uint32_t n = 0;
    if (vk.vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkExtensionProperties *props = calloc(n, sizeof *props);
    int found = 0;
    if (props && vk.vkEnumerateInstanceExtensionProperties(layer, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; ++i) found |= strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

static int load_loader(const char *library, char *err, size_t errlen) {
    g_library = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (g_library == NULL) {
        const char *why = dlerror();
        mvk_set_error(err, errlen, "cannot load the Vulkan loader %s (%s)", library, why ? why : "dlopen failed");
        return MVK_NO_LOADER;
    }
    vk.vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(g_library, "vkGetInstanceProcAddr");
    if (vk.vkGetInstanceProcAddr == NULL) {
        mvk_set_error(err, errlen, "%s has no vkGetInstanceProcAddr: not a Vulkan loader", library);
        return MVK_NO_LOADER;
    }
#define MVK_LOAD_GLOBAL(name) vk.name = (PFN_##name)vk.vkGetInstanceProcAddr(NULL, #name);
    MVK_GLOBAL_FNS(MVK_LOAD_GLOBAL)
#undef MVK_LOAD_GLOBAL
    if (vk.vkCreateInstance == NULL || vk.vkEnumerateInstanceLayerProperties == NULL) {
        mvk_set_error(err, errlen, "the Vulkan loader %s lacks vkCreateInstance", library);
        return MVK_NO_LOADER;
    }
    uint32_t version = VK_MAKE_API_VERSION(0, 1, 0, 0);
    if (vk.vkEnumerateInstanceVersion) vk.vkEnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_1) {
        mvk_set_error(err, errlen, "the Vulkan loader %s speaks Vulkan %u.%u; mnn-vulkan needs 1.1", library,
                      VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
        return MVK_NO_INSTANCE;
    }
    return MVK_OK;
}

int mvk_init(const char *library, int validation, char *err, size_t errlen) {
    static int status = -1;
    static char saved[512];
    if (status >= 0) { /* once per process: the same answer every time */
        mvk_set_error(err, errlen, "%s", saved);
        return status;
    }
    saved[0] = 0;
    status = load_loader(library, saved, sizeof saved);
    if (status != MVK_OK) goto done;

    const char *layers[1];
    const char *exts[1];
    uint32_t n_layers = 0, n_exts = 0;
    if (validation && has_layer(VALIDATION_LAYER)) {
        layers[n_layers++] = VALIDATION_LAYER;
        if (has_extension(NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
            has_extension(VALIDATION_LAYER, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
            exts[n_exts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    }
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "mnn", 1, "mnn-vulkan", 1, VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, n_layers, layers, n_exts, exts};
    VkResult r = vk.vkCreateInstance(&ci, NULL, &mvk_instance);
    if (r != VK_SUCCESS) {
        mvk_set_error(saved, sizeof saved, "vkCreateInstance failed: %s", mvk_result_name(r));
        status = MVK_NO_INSTANCE;
        goto done;
    }
#define MVK_LOAD_INSTANCE(name)                                                        \
    vk.name = (PFN_##name)vk.vkGetInstanceProcAddr(mvk_instance, #name);               \
    if (vk.name == NULL) {                                                             \
        mvk_set_error(saved, sizeof saved, "the Vulkan loader lacks %s", #name);       \
        status = MVK_NO_INSTANCE;                                                      \
        goto done;                                                                     \
    }
    MVK_INSTANCE_FNS(MVK_LOAD_INSTANCE)
#undef MVK_LOAD_INSTANCE
    vk.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)
        vk.vkGetInstanceProcAddr(mvk_instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
    if (n_exts) {
        vk.vkCreateDebugUtilsMessengerEXT = (PFN_vkCreateDebugUtilsMessengerEXT)vk.vkGetInstanceProcAddr(
            mvk_instance, "vkCreateDebugUtilsMessengerEXT");
        vk.vkDestroyDebugUtilsMessengerEXT = (PFN_vkDestroyDebugUtilsMessengerEXT)vk.vkGetInstanceProcAddr(
            mvk_instance, "vkDestroyDebugUtilsMessengerEXT");
        VkDebugUtilsMessengerCreateInfoEXT mi = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT, NULL, 0,
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
            VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
            on_message, NULL};
        if (vk.vkCreateDebugUtilsMessengerEXT &&
            vk.vkCreateDebugUtilsMessengerEXT(mvk_instance, &mi, NULL, &g_messenger) == VK_SUCCESS)
            g_validation = 1;
    }
    r = vk.vkEnumeratePhysicalDevices(mvk_instance, &g_n_phys, NULL);
    if (r == VK_SUCCESS && g_n_phys) {
        g_phys = calloc(g_n_phys, sizeof *g_phys);
        r = g_phys ? vk.vkEnumeratePhysicalDevices(mvk_instance, &g_n_phys, g_phys) : VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        mvk_set_error(saved, sizeof saved, "vkEnumeratePhysicalDevices failed: %s", mvk_result_name(r));
        g_n_phys = 0;
    }
    status = MVK_OK;
done:
    mvk_set_error(err, errlen, "%s", saved);
    return status;
}

int mvk_device_count(void) { return (int)g_n_phys; }

int mvk_validation_active(void) { return g_validation; }

uint64_t mvk_validation_errors(char *last, size_t lastlen) {
    pthread_mutex_lock(&g_msg_lock);
    mvk_set_error(last, lastlen, "%s", g_last_message);
    pthread_mutex_unlock(&g_msg_lock);
    return atomic_load(&g_errors);
}

#define COOPMAT_EXTENSION "VK_NV_cooperative_matrix"

static int device_has_extension(VkPhysicalDevice phys, const char *name) {
    uint32_t n = 0;
    if (vk.vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkExtensionProperties *props = calloc(n, sizeof *props);
    int found = 0;
    if (props && vk.vkEnumerateDeviceExtensionProperties(phys, NULL, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; ++i) found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

/* Whether the device multiplies 16x16x16 float16 matrices into float32 per subgroup
 * (the only shape gemm_coop.comp uses), with the memory model those shaders need. */
static int coopmat_supported(VkPhysicalDevice phys, int v12) {
    if (!v12 || vk.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV == NULL ||
        !device_has_extension(phys, COOPMAT_EXTENSION))
        return 0;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceVulkanMemoryModelFeatures mm = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, &cm};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &mm};
    vk.vkGetPhysicalDeviceFeatures2(phys, &f2);
    if (!cm.cooperativeMatrix || !mm.vulkanMemoryModel) return 0;
    uint32_t n = 0;
    if (vk.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(phys, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkCooperativeMatrixPropertiesNV *props = calloc(n, sizeof *props);
    int found = 0;
    if (props) {
        for (uint32_t i = 0; i < n; ++i) props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
        if (vk.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(phys, &n, props) == VK_SUCCESS)
            for (uint32_t i = 0; i < n && !found; ++i)
                found = props[i].MSize == 16 && props[i].NSize == 16 && props[i].KSize == 16 &&
                        props[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV && props[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                        props[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV && props[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                        props[i].scope == VK_SCOPE_SUBGROUP_NV;
    }
    free(props);
    return found;
}

int mvk_device_desc_get(int index, mvk_device_desc *d) {
    if (index < 0 || (uint32_t)index >= g_n_phys) return MVK_ERROR;
    VkPhysicalDevice phys = g_phys[index];
    memset(d, 0, sizeof *d);
    VkPhysicalDeviceSubgroupProperties sub = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub};
    /* the SM count, where NVIDIA's driver tells it: how many work groups fill the GPU */
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sms = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    vk.vkGetPhysicalDeviceProperties(phys, &p2.properties);
    int v11 = p2.properties.apiVersion >= VK_API_VERSION_1_1; /* the *2 queries are Vulkan 1.1 */
    if (v11 && device_has_extension(phys, "VK_NV_shader_sm_builtins")) sub.pNext = &sms;
    if (v11) vk.vkGetPhysicalDeviceProperties2(phys, &p2);
    const VkPhysicalDeviceProperties *p = &p2.properties;
    snprintf(d->name, sizeof d->name, "%s", p->deviceName);
    d->type = (uint32_t)p->deviceType;
    d->vendor_id = p->vendorID;
    d->device_id = p->deviceID;
    d->api_version = p->apiVersion;
    d->driver_version = p->driverVersion;
    d->subgroup_size = sub.subgroupSize;
    d->sm_count = sms.shaderSMCount;
    d->max_shared_bytes = p->limits.maxComputeSharedMemorySize;
    d->max_invocations = p->limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; ++i) {
        d->max_group_count[i] = p->limits.maxComputeWorkGroupCount[i];
        d->max_group_size[i] = p->limits.maxComputeWorkGroupSize[i];
    }
    d->max_storage_range = p->limits.maxStorageBufferRange;
    d->min_storage_align = (uint32_t)p->limits.minStorageBufferOffsetAlignment;
    d->max_push_bytes = p->limits.maxPushConstantsSize;
    d->timestamp_period_ns = p->limits.timestampPeriod;

    VkPhysicalDeviceMemoryProperties mem;
    vk.vkGetPhysicalDeviceMemoryProperties(phys, &mem);
    for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
        if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) d->device_local_bytes += mem.memoryHeaps[i].size;

    uint32_t nq = 0;
    vk.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, NULL);
    VkQueueFamilyProperties *q = calloc(nq ? nq : 1, sizeof *q);
    d->compute_family = -1;
    if (q) {
        vk.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, q);
        for (uint32_t i = 0; i < nq; ++i)
            if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].queueCount > 0) {
                d->compute_family = (int32_t)i;
                d->timestamp_bits = q[i].timestampValidBits;
                break;
            }
        free(q);
    }
    VkPhysicalDevice16BitStorageFeatures s16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, &s16};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f16};
    if (v11) vk.vkGetPhysicalDeviceFeatures2(phys, &f2);
    /* shaderFloat16 is core only from Vulkan 1.2 (an extension before): require 1.2 */
    d->fp16 = p2.properties.apiVersion >= VK_API_VERSION_1_2 && f16.shaderFloat16 && s16.storageBuffer16BitAccess;
    d->coopmat = d->fp16 && coopmat_supported(phys, p2.properties.apiVersion >= VK_API_VERSION_1_2);
    return MVK_OK;
}

/* -- contexts ------------------------------------------------------------------ */

mvk_context *mvk_context_create(int index, char *err, size_t errlen) {
    if (mvk_instance == NULL) {
        mvk_set_error(err, errlen, "Vulkan is not initialized");
        return NULL;
    }
    mvk_device_desc desc;
    if (mvk_device_desc_get(index, &desc) != MVK_OK) {
        mvk_set_error(err, errlen, "no Vulkan device %d (there are %u)", index, g_n_phys);
        return NULL;
    }
    if (desc.compute_family < 0) {
        mvk_set_error(err, errlen, "device %s has no compute queue", desc.name);
        return NULL;
    }
    mvk_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) return NULL;
    pthread_mutex_init(&ctx->queue_lock, NULL);
    pthread_mutex_init(&ctx->copy_lock, NULL);
    ctx->phys = g_phys[index];
    ctx->family = (uint32_t)desc.compute_family;
    vk.vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->memory);
    vk.vkGetPhysicalDeviceProperties(ctx->phys, &ctx->props);

    float priority = 1.0f;
    VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, ctx->family, 1, &priority};
    VkDeviceCreateInfo di = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qi, 0, NULL, 0, NULL, NULL};
    /* half-precision weights (precision="low") need 16-bit storage buffers and float16 in shaders */
    VkPhysicalDevice16BitStorageFeatures en16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features enf16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
                                                       &en16};
    VkPhysicalDeviceFeatures2 enf2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &enf16};
    if (desc.fp16) {
        en16.storageBuffer16BitAccess = VK_TRUE;
        enf16.shaderFloat16 = VK_TRUE;
        di.pNext = &enf2;
    }
    VkPhysicalDeviceCooperativeMatrixFeaturesNV encm = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceVulkanMemoryModelFeatures enmm = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, &encm};
    const char *coopmat_ext = COOPMAT_EXTENSION;
    if (desc.coopmat) {
        encm.cooperativeMatrix = VK_TRUE;
        enmm.vulkanMemoryModel = VK_TRUE;
        en16.pNext = &enmm;
        di.enabledExtensionCount = 1;
        di.ppEnabledExtensionNames = &coopmat_ext;
    }
    MVK_CHECK(vk.vkCreateDevice(ctx->phys, &di, NULL, &ctx->device), "vkCreateDevice");
    vk.vkGetDeviceQueue(ctx->device, ctx->family, 0, &ctx->queue);

    VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                  VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, ctx->family};
    MVK_CHECK(vk.vkCreateCommandPool(ctx->device, &pi, NULL, &ctx->pool), "vkCreateCommandPool");
    VkPipelineCacheCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, NULL, 0, 0, NULL};
    MVK_CHECK(vk.vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->cache), "vkCreatePipelineCache");

    VkDescriptorSetLayoutBinding bindings[MVK_MAX_BINDINGS];
    for (uint32_t i = 0; i < MVK_MAX_BINDINGS; ++i) {
        VkDescriptorSetLayoutBinding b = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
        bindings[i] = b;
    }
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, MVK_MAX_PUSH};
    for (uint32_t n = 0; n <= MVK_MAX_BINDINGS; ++n) {
        VkDescriptorSetLayoutCreateInfo li = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, n, bindings};
        MVK_CHECK(vk.vkCreateDescriptorSetLayout(ctx->device, &li, NULL, &ctx->set_layouts[n]),
                  "vkCreateDescriptorSetLayout");
        VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1,
                                          &ctx->set_layouts[n], 1, &push};
        MVK_CHECK(vk.vkCreatePipelineLayout(ctx->device, &pli, NULL, &ctx->layouts[n]), "vkCreatePipelineLayout");
    }
    if (mvk_copies_init(ctx, err, errlen) != MVK_OK) goto fail;
    /* What a discrete GPU's first run would otherwise pay, paid here (the thread that opens the
     * device while a session plans, device.py): the queue's first submission (an empty one, with
     * the fence), and a staging buffer of the full size, which a plan's weights fill. */
    if (ctx->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
        MVK_CHECK(vk.vkQueueSubmit(ctx->queue, 0, NULL, ctx->copy_fence[0]), "vkQueueSubmit");
        MVK_CHECK(vk.vkWaitForFences(ctx->device, 1, &ctx->copy_fence[0], VK_TRUE, MVK_WAIT_NS), "vkWaitForFences");
        MVK_CHECK(vk.vkResetFences(ctx->device, 1, &ctx->copy_fence[0]), "vkResetFences");
        if (mvk_staging_reserve(ctx, MVK_STAGING_CAP, err, errlen) != MVK_OK) goto fail;
    }
    return ctx;
fail:
    mvk_context_destroy(ctx);
    return NULL;
}

void mvk_context_destroy(mvk_context *ctx) {
    if (ctx == NULL) return;
    if (ctx->device) {
        vk.vkDeviceWaitIdle(ctx->device);
        mvk_copies_destroy(ctx);
        for (uint32_t n = 0; n <= MVK_MAX_BINDINGS; ++n) {
            if (ctx->layouts[n]) vk.vkDestroyPipelineLayout(ctx->device, ctx->layouts[n], NULL);
            if (ctx->set_layouts[n]) vk.vkDestroyDescriptorSetLayout(ctx->device, ctx->set_layouts[n], NULL);
        }
        if (ctx->cache) vk.vkDestroyPipelineCache(ctx->device, ctx->cache, NULL);
        if (ctx->pool) vk.vkDestroyCommandPool(ctx->device, ctx->pool, NULL);
        vk.vkDestroyDevice(ctx->device, NULL);
    }
    pthread_mutex_destroy(&ctx->queue_lock);
    pthread_mutex_destroy(&ctx->copy_lock);
    free(ctx);
}

/* -- the pipeline cache ---------------------------------------------------------- */

/* Data from disk reaches the driver only when its header (VkPipelineCacheHeaderVersionOne:
 * length 32, version 1, vendor, device, pipelineCacheUUID) names this very device and
 * driver build: drivers are meant to check it themselves, but not all do it safely. */
int mvk_context_cache_load(mvk_context *ctx, const void *data, size_t size, char *err, size_t errlen) {
    const uint8_t *b = data;
    uint32_t header_len, version, vendor, device;
    if (size < 32) {
        mvk_set_error(err, errlen, "is %zu bytes, shorter than a pipeline cache header", size);
        return MVK_ERROR;
    }
    memcpy(&header_len, b, 4);
    memcpy(&version, b + 4, 4);
    memcpy(&vendor, b + 8, 4);
    memcpy(&device, b + 12, 4);
    if (header_len != 32 || version != 1) {
        mvk_set_error(err, errlen, "has no version-one pipeline cache header (length %u, version %u)", header_len,
                      version);
        return MVK_ERROR;
    }
    if (vendor != ctx->props.vendorID || device != ctx->props.deviceID ||
        memcmp(b + 16, ctx->props.pipelineCacheUUID, VK_UUID_SIZE) != 0) {
        mvk_set_error(err, errlen, "was written for another device or driver (vendor 0x%x device 0x%x)", vendor,
                      device);
        return MVK_ERROR;
    }
    VkPipelineCacheCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, NULL, 0, size, data};
    VkPipelineCache cache = 0;
    VkResult r = vk.vkCreatePipelineCache(ctx->device, &ci, NULL, &cache);
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "was refused by the driver: %s", mvk_result_name(r));
        return MVK_ERROR;
    }
    vk.vkDestroyPipelineCache(ctx->device, ctx->cache, NULL); /* pipelines made from it stay valid */
    ctx->cache = cache;
    return MVK_OK;
}

int mvk_context_cache_data(mvk_context *ctx, void *dst, size_t *size, char *err, size_t errlen) {
    VkResult r = vk.vkGetPipelineCacheData(ctx->device, ctx->cache, size, dst);
    if (r != VK_SUCCESS && !(r == VK_INCOMPLETE && dst == NULL)) {
        mvk_set_error(err, errlen, "vkGetPipelineCacheData failed: %s", mvk_result_name(r));
        return MVK_ERROR;
    }
    return MVK_OK;
}

int mvk_submit_and_wait(mvk_context *ctx, VkCommandBuffer cb, VkFence fence, char *err, size_t errlen) {
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL};
    pthread_mutex_lock(&ctx->queue_lock);
    VkResult r = vk.vkQueueSubmit(ctx->queue, 1, &si, fence);
    pthread_mutex_unlock(&ctx->queue_lock);
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "vkQueueSubmit failed: %s", mvk_result_name(r));
        return MVK_ERROR;
    }
    r = vk.vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, MVK_WAIT_NS);
    if (r != VK_SUCCESS) {
        mvk_set_error(err, errlen, "waiting for the GPU failed: %s%s", mvk_result_name(r),
                      r == VK_TIMEOUT ? " (the device did not finish within 120 s)" : "");
        return MVK_ERROR;
    }
    vk.vkResetFences(ctx->device, 1, &fence);
    return MVK_OK;
}

void mvk_global_barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                        VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, src_access, dst_access};
    vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}
