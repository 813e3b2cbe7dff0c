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

struct _66
{
    float _m0[1];
};

struct _71
{
    float _m0[1];
};

struct _79
{
    float _m0[1];
};

struct _87
{
    float _m0[1];
};

struct _101
{
    float _m0[1];
};

struct _109
{
    float _m0[1];
};

kernel void batchnorm(const device _71& _73 [[buffer(0)]], const device _101& _103 [[buffer(1)]], const device _109& _111 [[buffer(2)]], const device _79& _81 [[buffer(3)]], const device _87& _89 [[buffer(4)]], device _66& _68 [[buffer(5)]], constant _42& _44 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _137 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_137 >= _44._m0)
        {
            break;
        }
        uint _64 = (_137 / _44._m1) % _44._m2;
        _68._m0[_137] = fma((_73._m0[_137] - _81._m0[_64]) / sqrt(_89._m0[_64] + _44._m3), _103._m0[_64], _111._m0[_64]);
        break;
    } while(false);
}

