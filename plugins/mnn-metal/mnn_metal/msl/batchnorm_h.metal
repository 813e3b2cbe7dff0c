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

struct _42
{
    uint _m0;
    uint _m1;
    uint _m2;
    float _m3;
};

struct _67
{
    half _m0[1];
};

struct _72
{
    half _m0[1];
};

struct _81
{
    half _m0[1];
};

struct _90
{
    half _m0[1];
};

struct _105
{
    half _m0[1];
};

struct _114
{
    half _m0[1];
};

kernel void batchnorm_h(const device _72& _74 [[buffer(0)]], const device _105& _107 [[buffer(1)]], const device _114& _116 [[buffer(2)]], const device _81& _83 [[buffer(3)]], const device _90& _92 [[buffer(4)]], device _67& _69 [[buffer(5)]], constant _42& _44 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _144 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_144 >= _44._m0)
        {
            break;
        }
        uint _64 = (_144 / _44._m1) % _44._m2;
        _69._m0[_144] = half(fma((float(_74._m0[_144]) - float(_83._m0[_64])) / sqrt(float(_92._m0[_64]) + _44._m3), float(_107._m0[_64]), float(_116._m0[_64])));
        break;
    } while(false);
}

