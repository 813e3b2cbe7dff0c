#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _31_tmp [[function_constant(0)]];
constant uint _31 = is_function_constant_defined(_31_tmp) ? _31_tmp : 1u;
constant uint _32_tmp [[function_constant(1)]];
constant uint _32 = is_function_constant_defined(_32_tmp) ? _32_tmp : 1u;
constant uint _33_tmp [[function_constant(2)]];
constant uint _33 = is_function_constant_defined(_33_tmp) ? _33_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_31, _32, _33);

struct _62
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4[6];
    uint _m5[6];
    uint _m6[6];
    uint _m7[6];
};

struct _135
{
    uint _m0[1];
};

struct _161
{
    uint _m0[1];
};

struct _175
{
    uint _m0[1];
};

struct _188
{
    uint _m0[1];
};

kernel void where(const device _135& _137 [[buffer(0)]], const device _175& _177 [[buffer(1)]], const device _188& _190 [[buffer(2)]], device _161& _163 [[buffer(3)]], constant _62& _64 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _222 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_222 >= _64._m0)
        {
            break;
        }
        int _86 = int(_64._m1) - 1;
        uint _232;
        uint _235;
        uint _237;
        _237 = 0u;
        _235 = 0u;
        _232 = 0u;
        int _231 = _86;
        uint _240 = _222;
        for (; _231 >= 0; )
        {
            uint _100 = _240 % _64._m4[_231];
            _240 /= _64._m4[_231];
            _237 += (_100 * _64._m6[_231]);
            _235 += (_100 * _64._m7[_231]);
            _232 += (_100 * _64._m5[_231]);
            _231--;
            continue;
        }
        bool _148 = ((_137._m0[_232 >> 2u] >> ((_232 & 3u) * 8u)) & 255u) != 0u;
        for (uint _233 = 0u; _233 < _64._m2; _233++)
        {
            uint _238;
            if (_148)
            {
                _238 = _177._m0[(_237 * _64._m2) + _233];
            }
            else
            {
                _238 = _190._m0[(_235 * _64._m2) + _233];
            }
            _163._m0[(_222 * _64._m2) + _233] = _238;
        }
        break;
    } while(false);
}

