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

struct _46
{
    uint _m0;
    uint _m1;
    int _m2;
    int _m3;
    uint _m4[6];
    int _m5[6];
    int _m6[6];
};

struct _116
{
    half _m0[1];
};

struct _121
{
    half _m0[1];
};

kernel void copy_h(const device _121& _123 [[buffer(0)]], device _116& _118 [[buffer(1)]], constant _46& _48 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _149 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_149 >= _48._m0)
        {
            break;
        }
        int _75 = int(_48._m1) - 1;
        int _151;
        int _152;
        _152 = _48._m2;
        _151 = _48._m3;
        int _150 = _75;
        uint _153 = _149;
        for (; _150 >= 0; )
        {
            uint _89 = _153 % _48._m4[_150];
            int _90 = int(_89);
            _153 /= _48._m4[_150];
            _152 += (_90 * _48._m5[_150]);
            _151 += (_90 * _48._m6[_150]);
            _150--;
            continue;
        }
        _118._m0[_151] = _123._m0[_152];
        break;
    } while(false);
}

