#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _35_tmp [[function_constant(0)]];
constant uint _35 = is_function_constant_defined(_35_tmp) ? _35_tmp : 1u;
constant uint _36_tmp [[function_constant(1)]];
constant uint _36 = is_function_constant_defined(_36_tmp) ? _36_tmp : 1u;
constant uint _37_tmp [[function_constant(2)]];
constant uint _37 = is_function_constant_defined(_37_tmp) ? _37_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_35, _36, _37);

struct _76
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
    uint _m6;
};

struct _119
{
    float _m0[1];
};

struct _138
{
    uint _m0[1];
};

struct _185
{
    float _m0[1];
};

struct _209
{
    uint _m0[1];
};

struct _240
{
    float _m0[1];
};

struct _248
{
    float _m0[1];
};

kernel void dq_lstm_x(const device _185& _187 [[buffer(0)]], const device _209& _211 [[buffer(1)]], const device _248& _250 [[buffer(2)]], const device _138& _140 [[buffer(3)]], const device _119& _121 [[buffer(4)]], device _240& _242 [[buffer(5)]], constant _76& _78 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _286 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_286 >= _78._m0)
        {
            break;
        }
        uint _92 = _286 % _78._m3;
        uint _97 = _286 / _78._m3;
        uint _103 = _97 % _78._m1;
        uint _108 = _97 / _78._m1;
        bool _114 = (_78._m4 & 1u) != 0u;
        int _330;
        if ((_78._m4 & 2u) != 0u)
        {
            uint _145 = _108 * _78._m6;
            uint _296 = (_140._m0[_145 >> 2u] >> ((_145 & 3u) * 8u)) & 255u;
            int _329;
            if (_114)
            {
                _329 = int(_296 << uint(24)) >> 24;
            }
            else
            {
                _329 = int(_296);
            }
            _330 = _329;
        }
        else
        {
            _330 = 0;
        }
        uint _172 = ((_108 * _78._m2) * _78._m3) + _92;
        int _332;
        _332 = 0;
        int _236;
        for (uint _331 = 0u; _331 < _78._m2; _332 = _236, _331++)
        {
            uint _217 = _172 + (_331 * _78._m3);
            uint _317 = (_211._m0[_217 >> 2u] >> ((_217 & 3u) * 8u)) & 255u;
            int _333;
            if (_114)
            {
                _333 = int(_317 << uint(24)) >> 24;
            }
            else
            {
                _333 = int(_317);
            }
            _236 = _332 + (int(fast::clamp(rint(_187._m0[(_103 * _78._m2) + _331] / _121._m0[0]) + _121._m0[1], 0.0, 255.0) - _121._m0[1]) * (_333 - _330));
        }
        _242._m0[_286] = float(_332) * (_121._m0[0] * _250._m0[(_108 * _78._m5) + ((_78._m5 == 1u) ? 0u : _92)]);
        break;
    } while(false);
}

