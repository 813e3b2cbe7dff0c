"""Generate mnn_vulkan/csrc/vk_min.h: the few Vulkan declarations the runtime needs.

The plugin must build where no Vulkan SDK or libvulkan-dev is installed (the
H200 machine has neither), and it loads libvulkan.so.1 with dlopen, so it
vendors the declarations it uses. They are copied verbatim from the Khronos
header (Apache-2.0 OR MIT) by this script:

    python tools/gen_vk_min.py /usr/include/vulkan/vulkan_core.h > mnn_vulkan/csrc/vk_min.h

tests/test_vk_min.py compiles both headers and compares every struct's size
and field offsets, so a mistake here cannot go unnoticed.
"""

from __future__ import annotations

import re
import sys

HANDLES = ["VkInstance", "VkPhysicalDevice", "VkDevice", "VkQueue", "VkCommandBuffer"]
ND_HANDLES = [
    "VkBuffer",
    "VkDeviceMemory",
    "VkShaderModule",
    "VkPipeline",
    "VkPipelineLayout",
    "VkDescriptorSetLayout",
    "VkDescriptorPool",
    "VkDescriptorSet",
    "VkCommandPool",
    "VkFence",
    "VkPipelineCache",
    "VkQueryPool",
    "VkSemaphore",
    "VkDebugUtilsMessengerEXT",
    "VkRenderPass",
    "VkSampler",
    "VkImageView",
    "VkBufferView",
    "VkFramebuffer",
]
FLAGS = [
    "VkInstanceCreateFlags",
    "VkDeviceCreateFlags",
    "VkDeviceQueueCreateFlags",
    "VkQueueFlags",
    "VkMemoryPropertyFlags",
    "VkMemoryHeapFlags",
    "VkBufferCreateFlags",
    "VkBufferUsageFlags",
    "VkShaderModuleCreateFlags",
    "VkDescriptorSetLayoutCreateFlags",
    "VkPipelineLayoutCreateFlags",
    "VkShaderStageFlags",
    "VkPipelineShaderStageCreateFlags",
    "VkPipelineCreateFlags",
    "VkDescriptorPoolCreateFlags",
    "VkDescriptorPoolResetFlags",
    "VkCommandPoolCreateFlags",
    "VkCommandBufferUsageFlags",
    "VkQueryControlFlags",
    "VkQueryPipelineStatisticFlags",
    "VkAccessFlags",
    "VkPipelineStageFlags",
    "VkDependencyFlags",
    "VkFenceCreateFlags",
    "VkMemoryMapFlags",
    "VkQueryPoolCreateFlags",
    "VkQueryResultFlags",
    "VkSampleCountFlags",
    "VkSubgroupFeatureFlags",
    "VkCommandBufferResetFlags",
    "VkPipelineCacheCreateFlags",
    "VkDebugUtilsMessengerCreateFlagsEXT",
    "VkDebugUtilsMessageSeverityFlagsEXT",
    "VkDebugUtilsMessageTypeFlagsEXT",
    "VkDebugUtilsMessengerCallbackDataFlagsEXT",
]
# enum type -> the values we use (all values when empty)
ENUMS = {
    "VkResult": [],
    "VkImageLayout": ["VK_IMAGE_LAYOUT_UNDEFINED"],
    "VkStructureType": [
        "VK_STRUCTURE_TYPE_APPLICATION_INFO",
        "VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_SUBMIT_INFO",
        "VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO",
        "VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE",
        "VK_STRUCTURE_TYPE_FENCE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO",
        "VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO",
        "VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO",
        "VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO",
        "VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO",
        "VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO",
        "VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO",
        "VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET",
        "VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO",
        "VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO",
        "VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO",
        "VK_STRUCTURE_TYPE_MEMORY_BARRIER",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES",
        "VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT",
        "VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV",
        "VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV",
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV",
    ],
    "VkPhysicalDeviceType": [],
    "VkSharingMode": ["VK_SHARING_MODE_EXCLUSIVE"],
    "VkDescriptorType": ["VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"],
    "VkShaderStageFlagBits": ["VK_SHADER_STAGE_COMPUTE_BIT"],
    "VkCommandBufferLevel": ["VK_COMMAND_BUFFER_LEVEL_PRIMARY"],
    "VkPipelineBindPoint": ["VK_PIPELINE_BIND_POINT_COMPUTE"],
    "VkQueryType": ["VK_QUERY_TYPE_TIMESTAMP"],
    "VkQueueFlagBits": ["VK_QUEUE_GRAPHICS_BIT", "VK_QUEUE_COMPUTE_BIT", "VK_QUEUE_TRANSFER_BIT"],
    "VkMemoryPropertyFlagBits": [
        "VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT",
        "VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT",
        "VK_MEMORY_PROPERTY_HOST_COHERENT_BIT",
        "VK_MEMORY_PROPERTY_HOST_CACHED_BIT",
    ],
    "VkMemoryHeapFlagBits": ["VK_MEMORY_HEAP_DEVICE_LOCAL_BIT"],
    "VkBufferUsageFlagBits": [
        "VK_BUFFER_USAGE_TRANSFER_SRC_BIT",
        "VK_BUFFER_USAGE_TRANSFER_DST_BIT",
        "VK_BUFFER_USAGE_STORAGE_BUFFER_BIT",
    ],
    "VkAccessFlagBits": [
        "VK_ACCESS_SHADER_READ_BIT",
        "VK_ACCESS_SHADER_WRITE_BIT",
        "VK_ACCESS_HOST_READ_BIT",
        "VK_ACCESS_HOST_WRITE_BIT",
        "VK_ACCESS_TRANSFER_READ_BIT",
        "VK_ACCESS_TRANSFER_WRITE_BIT",
    ],
    "VkPipelineStageFlagBits": [
        "VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT",
        "VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT",
        "VK_PIPELINE_STAGE_TRANSFER_BIT",
        "VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT",
        "VK_PIPELINE_STAGE_HOST_BIT",
    ],
    "VkCommandPoolCreateFlagBits": ["VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT"],
    "VkCommandBufferUsageFlagBits": ["VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT"],
    "VkQueryResultFlagBits": ["VK_QUERY_RESULT_64_BIT", "VK_QUERY_RESULT_WAIT_BIT"],
    "VkDebugUtilsMessageSeverityFlagBitsEXT": [],
    "VkDebugUtilsMessageTypeFlagBitsEXT": [],
    "VkComponentTypeNV": ["VK_COMPONENT_TYPE_FLOAT16_NV", "VK_COMPONENT_TYPE_FLOAT32_NV"],
    "VkScopeNV": ["VK_SCOPE_SUBGROUP_NV"],
}
STRUCTS = [
    "VkApplicationInfo",
    "VkInstanceCreateInfo",
    "VkLayerProperties",
    "VkExtensionProperties",
    "VkPhysicalDeviceLimits",
    "VkPhysicalDeviceSparseProperties",
    "VkPhysicalDeviceProperties",
    "VkExtent3D",
    "VkQueueFamilyProperties",
    "VkMemoryType",
    "VkMemoryHeap",
    "VkPhysicalDeviceMemoryProperties",
    "VkPhysicalDeviceFeatures",
    "VkDeviceQueueCreateInfo",
    "VkDeviceCreateInfo",
    "VkBufferCreateInfo",
    "VkMemoryRequirements",
    "VkMemoryAllocateInfo",
    "VkPipelineCacheCreateInfo",
    "VkMappedMemoryRange",
    "VkShaderModuleCreateInfo",
    "VkDescriptorSetLayoutBinding",
    "VkDescriptorSetLayoutCreateInfo",
    "VkPushConstantRange",
    "VkPipelineLayoutCreateInfo",
    "VkSpecializationMapEntry",
    "VkSpecializationInfo",
    "VkPipelineShaderStageCreateInfo",
    "VkComputePipelineCreateInfo",
    "VkDescriptorPoolSize",
    "VkDescriptorPoolCreateInfo",
    "VkDescriptorSetAllocateInfo",
    "VkDescriptorBufferInfo",
    "VkDescriptorImageInfo",
    "VkWriteDescriptorSet",
    "VkCommandPoolCreateInfo",
    "VkCommandBufferAllocateInfo",
    "VkCommandBufferInheritanceInfo",
    "VkCommandBufferBeginInfo",
    "VkMemoryBarrier",
    "VkBufferCopy",
    "VkSubmitInfo",
    "VkFenceCreateInfo",
    "VkQueryPoolCreateInfo",
    "VkPhysicalDeviceProperties2",
    "VkPhysicalDeviceSubgroupProperties",
    "VkPhysicalDeviceFeatures2",
    "VkPhysicalDevice16BitStorageFeatures",
    "VkPhysicalDeviceShaderFloat16Int8Features",
    "VkDebugUtilsMessengerCallbackDataEXT",
    "VkDebugUtilsMessengerCreateInfoEXT",
    "VkPhysicalDeviceVulkanMemoryModelFeatures",
    "VkPhysicalDeviceCooperativeMatrixFeaturesNV",
    "VkCooperativeMatrixPropertiesNV",
    "VkPhysicalDeviceShaderSMBuiltinsPropertiesNV",
]
OPAQUE = [
    "VkAllocationCallbacks",
    "VkDebugUtilsLabelEXT",
    "VkDebugUtilsObjectNameInfoEXT",
    "VkBufferMemoryBarrier",
    "VkImageMemoryBarrier",
    "VkCopyDescriptorSet",
    "VkDebugUtilsMessengerCallbackDataEXT",
]
FUNCTIONS = [
    "vkGetInstanceProcAddr",
    "vkGetDeviceProcAddr",
    "vkEnumerateInstanceVersion",
    "vkEnumerateInstanceLayerProperties",
    "vkEnumerateInstanceExtensionProperties",
    "vkCreateInstance",
    "vkDestroyInstance",
    "vkEnumeratePhysicalDevices",
    "vkGetPhysicalDeviceProperties",
    "vkGetPhysicalDeviceProperties2",
    "vkGetPhysicalDeviceFeatures2",
    "vkGetPhysicalDeviceQueueFamilyProperties",
    "vkGetPhysicalDeviceMemoryProperties",
    "vkEnumerateDeviceExtensionProperties",
    "vkCreateDevice",
    "vkDestroyDevice",
    "vkGetDeviceQueue",
    "vkDeviceWaitIdle",
    "vkQueueSubmit",
    "vkQueueWaitIdle",
    "vkCreateBuffer",
    "vkDestroyBuffer",
    "vkGetBufferMemoryRequirements",
    "vkAllocateMemory",
    "vkFreeMemory",
    "vkBindBufferMemory",
    "vkMapMemory",
    "vkUnmapMemory",
    "vkFlushMappedMemoryRanges",
    "vkInvalidateMappedMemoryRanges",
    "vkCreateShaderModule",
    "vkDestroyShaderModule",
    "vkCreatePipelineCache",
    "vkDestroyPipelineCache",
    "vkGetPipelineCacheData",
    "vkCreateDescriptorSetLayout",
    "vkDestroyDescriptorSetLayout",
    "vkCreatePipelineLayout",
    "vkDestroyPipelineLayout",
    "vkCreateComputePipelines",
    "vkDestroyPipeline",
    "vkCreateDescriptorPool",
    "vkDestroyDescriptorPool",
    "vkAllocateDescriptorSets",
    "vkUpdateDescriptorSets",
    "vkCreateCommandPool",
    "vkDestroyCommandPool",
    "vkAllocateCommandBuffers",
    "vkFreeCommandBuffers",
    "vkBeginCommandBuffer",
    "vkEndCommandBuffer",
    "vkResetCommandBuffer",
    "vkCmdBindPipeline",
    "vkCmdBindDescriptorSets",
    "vkCmdPushConstants",
    "vkCmdDispatch",
    "vkCmdPipelineBarrier",
    "vkCmdCopyBuffer",
    "vkCmdFillBuffer",
    "vkCmdWriteTimestamp",
    "vkCmdResetQueryPool",
    "vkCreateQueryPool",
    "vkDestroyQueryPool",
    "vkGetQueryPoolResults",
    "vkCreateFence",
    "vkDestroyFence",
    "vkWaitForFences",
    "vkResetFences",
    "vkCreateDebugUtilsMessengerEXT",
    "vkDestroyDebugUtilsMessengerEXT",
    "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
]


def block(text: str, kind: str, name: str) -> str:
    m = re.search(rf"^typedef {kind} {name} \{{.*?^\}} {name};$", text, re.S | re.M)
    if not m:
        raise SystemExit(f"{kind} {name} not found")
    return m.group(0)


def enum(text: str, name: str, wanted: list) -> str:
    body = block(text, "enum", name)
    if not wanted:
        return body
    lines = [ln for ln in body.splitlines()[1:-1] if ln.strip().split(" ")[0] in wanted]
    found = {ln.strip().split(" ")[0] for ln in lines}
    missing = set(wanted) - found
    if missing:
        raise SystemExit(f"{name}: values {sorted(missing)} not found")
    max_name = re.search(r"(\w+_MAX_ENUM\w*) = 0x7FFFFFFF", body).group(1)
    lines.append(f"    {max_name} = 0x7FFFFFFF")
    return f"typedef enum {name} {{\n" + "\n".join(lines) + f"\n}} {name};"


def main(path: str) -> None:
    text = open(path).read()
    out = [
        "/* Minimal Vulkan declarations for mnn-vulkan, generated by tools/gen_vk_min.py",
        " * from the Khronos vulkan_core.h (Copyright 2015-2023 The Khronos Group Inc.,",
        " * SPDX-License-Identifier: Apache-2.0 OR MIT). Do not edit: regenerate. */",
        "#ifndef MNN_VK_MIN_H",
        "#define MNN_VK_MIN_H",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "#define VKAPI_ATTR",
        "#define VKAPI_CALL",
        "#define VKAPI_PTR",
        "#define VK_MAKE_API_VERSION(variant, major, minor, patch) \\",
        "    ((((uint32_t)(variant)) << 29U) | (((uint32_t)(major)) << 22U) | "
        "(((uint32_t)(minor)) << 12U) | ((uint32_t)(patch)))",
        "#define VK_API_VERSION_MAJOR(version) (((uint32_t)(version) >> 22U) & 0x7FU)",
        "#define VK_API_VERSION_MINOR(version) (((uint32_t)(version) >> 12U) & 0x3FFU)",
        "#define VK_API_VERSION_PATCH(version) ((uint32_t)(version) & 0xFFFU)",
        "#define VK_API_VERSION_1_1 VK_MAKE_API_VERSION(0, 1, 1, 0)",
        "#define VK_API_VERSION_1_2 VK_MAKE_API_VERSION(0, 1, 2, 0)",
        "#define VK_TRUE 1U",
        "#define VK_FALSE 0U",
        "#define VK_WHOLE_SIZE (~0ULL)",
        "#define VK_QUEUE_FAMILY_IGNORED (~0U)",
        "#define VK_MAX_PHYSICAL_DEVICE_NAME_SIZE 256U",
        "#define VK_UUID_SIZE 16U",
        "#define VK_MAX_EXTENSION_NAME_SIZE 256U",
        "#define VK_MAX_DESCRIPTION_SIZE 256U",
        "#define VK_MAX_MEMORY_TYPES 32U",
        "#define VK_MAX_MEMORY_HEAPS 16U",
        '#define VK_EXT_DEBUG_UTILS_EXTENSION_NAME "VK_EXT_debug_utils"',
        "typedef uint32_t VkBool32;",
        "typedef uint64_t VkDeviceAddress;",
        "typedef uint64_t VkDeviceSize;",
        "typedef uint32_t VkFlags;",
        "typedef uint32_t VkSampleMask;",
    ]
    out += [f"typedef struct {h}_T* {h};" for h in HANDLES]
    out += [f"typedef struct {h}_T* {h};" for h in ND_HANDLES]  # 64-bit builds only (see setup.py)
    out += [f"typedef struct {s} {s};" for s in OPAQUE]
    out += [f"typedef VkFlags {f};" for f in FLAGS]
    out += [enum(text, name, wanted) for name, wanted in ENUMS.items()]
    out.append(re.search(r"^typedef void \(VKAPI_PTR \*PFN_vkVoidFunction\)\(void\);$", text, re.M).group(0))
    out.append(
        re.search(
            r"^typedef VkBool32 \(VKAPI_PTR \*PFN_vkDebugUtilsMessengerCallbackEXT\)\(.*?\);$", text, re.S | re.M
        ).group(0)
    )
    out += [block(text, "struct", s) for s in STRUCTS]
    for fn in FUNCTIONS:
        m = re.search(rf"^typedef \w+\*? \(VKAPI_PTR \*PFN_{fn}\)\(.*?\);$", text, re.M)
        if not m:
            raise SystemExit(f"PFN_{fn} not found")
        out.append(m.group(0))
    out.append("#endif")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/usr/include/vulkan/vulkan_core.h")
