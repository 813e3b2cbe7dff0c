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
    uint _m1;
    uint _m2;
};

struct _71
{
    float _m0[1];
};

struct _76
{
    float _m0[1];
};

struct _84
{
    float _m0[1];
};

kernel void ml_scaler(const device _76& _78 [[buffer(0)]], const device _84& _86 [[buffer(1)]], device _71& _73 [[buffer(2)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _119 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_119 >= _43._m0)
        {
            break;
        }
        uint _120;
        if (_43._m2 == 1u)
        {
            _120 = 0u;
        }
        else
        {
            _120 = _119 % _43._m1;
        }
        _73._m0[_119] = (_78._m0[_119] - _86._m0[_120]) * _86._m0[_43._m2 + _120];
        break;
    } while(false);
}

