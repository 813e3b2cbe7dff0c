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
    uint _m3;
    uint _m4;
};

struct _86
{
    int _m0[1];
};

struct _117
{
    uint _m0[1];
};

struct _122
{
    uint _m0[1];
};

kernel void gather(const device _122& _124 [[buffer(0)]], const device _86& _88 [[buffer(1)]], device _117& _119 [[buffer(2)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _161 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_161 >= _43._m0)
        {
            break;
        }
        uint _64 = _161 / _43._m1;
        uint _70 = _64 % _43._m3;
        int _162;
        if (_43._m4 != 0u)
        {
            _162 = _88._m0[2u * _70];
        }
        else
        {
            _162 = _88._m0[_70];
        }
        int _163;
        if (_162 < 0)
        {
            _163 = _162 + int(_43._m2);
        }
        else
        {
            _163 = _162;
        }
        _119._m0[_161] = _124._m0[((((_64 / _43._m3) * _43._m2) + uint(clamp(_163, 0, int(_43._m2) - 1))) * _43._m1) + (_161 % _43._m1)];
        break;
    } while(false);
}

