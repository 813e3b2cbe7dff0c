#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _25_tmp [[function_constant(0)]];
constant uint _25 = is_function_constant_defined(_25_tmp) ? _25_tmp : 1u;
constant uint _26_tmp [[function_constant(1)]];
constant uint _26 = is_function_constant_defined(_26_tmp) ? _26_tmp : 1u;
constant uint _27_tmp [[function_constant(2)]];
constant uint _27 = is_function_constant_defined(_27_tmp) ? _27_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_25, _26, _27);

struct _41
{
    uint _m0;
};

struct _56
{
    float _m0[1];
};

struct _62
{
    half _m0[1];
};

kernel void widen(const device _62& _64 [[buffer(0)]], device _56& _58 [[buffer(1)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _92 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_92 >= _43._m0)
        {
            break;
        }
        _58._m0[_92] = float(_64._m0[_92]);
        break;
    } while(false);
}

