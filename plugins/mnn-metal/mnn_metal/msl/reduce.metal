#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

struct _22
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
    uint _m6;
    uint _m7;
    uint _m8[4];
    uint _m9[4];
    uint _m10[4];
    uint _m11[4];
};

struct _199
{
    float _m0[1];
};

constant uint _223_tmp [[function_constant(0)]];
constant uint _223 = is_function_constant_defined(_223_tmp) ? _223_tmp : 1u;
constant uint _224_tmp [[function_constant(1)]];
constant uint _224 = is_function_constant_defined(_224_tmp) ? _224_tmp : 1u;
constant uint _225_tmp [[function_constant(2)]];
constant uint _225 = is_function_constant_defined(_225_tmp) ? _225_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_223, _224, _225);
constant uint _230 = gl_WorkGroupSize.x;
constant uint _240 = gl_WorkGroupSize.x;
constant uint _241 = (_240 / 2u);

struct _284
{
    float _m0[1];
};

kernel void reduce(const device _199& _201 [[buffer(0)]], device _284& _286 [[buffer(1)]], constant _22& _24 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    threadgroup float _233[_230];
    uint _98 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
    float _402;
    if (_24._m2 == 2u)
    {
        _402 = as_type<float>(0xff800000u /* -inf */);
    }
    else
    {
        float _401;
        if (_24._m2 == 3u)
        {
            _401 = as_type<float>(0x7f800000u /* inf */);
        }
        else
        {
            _401 = float(_24._m2 == 4u);
        }
        _402 = _401;
    }
    bool _109 = _98 < _24._m0;
    float _405;
    if (_109)
    {
        int _122 = int(_24._m3) - 1;
        uint _418;
        _418 = 0u;
        int _403 = _122;
        uint _432 = _98;
        for (; _403 >= 0; )
        {
            uint _135 = _432 % _24._m8[_403];
            _432 /= _24._m8[_403];
            _418 += (_135 * _24._m9[_403]);
            _403--;
            continue;
        }
        float _406;
        _406 = _402;
        float _426;
        for (uint _404 = gl_LocalInvocationID.x; _404 < _24._m1; _406 = _426, _404 += gl_WorkGroupSize.x)
        {
            int _169 = int(_24._m4) - 1;
            uint _420;
            _420 = _418;
            int _419 = _169;
            uint _431 = _404;
            for (; _419 >= 0; )
            {
                uint _182 = _431 % _24._m10[_419];
                _431 /= _24._m10[_419];
                _420 += (_182 * _24._m11[_419]);
                _419--;
                continue;
            }
            float _423;
            if (_24._m2 == 5u)
            {
                _423 = _201._m0[_420] * _201._m0[_420];
            }
            else
            {
                _423 = _201._m0[_420];
            }
            switch (_24._m2)
            {
                case 2u:
                {
                    _426 = fast::max(_406, _423);
                    break;
                }
                case 3u:
                {
                    _426 = fast::min(_406, _423);
                    break;
                }
                case 4u:
                {
                    _426 = _406 * _423;
                    break;
                }
                default:
                {
                    _426 = _406 + _423;
                    break;
                }
            }
        }
        _405 = _406;
    }
    else
    {
        _405 = _402;
    }
    _233[gl_LocalInvocationID.x] = _405;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint _408 = _241; _408 > 0u; _408 = _408 >> uint(1))
    {
        if (gl_LocalInvocationID.x < _408)
        {
            uint _258 = gl_LocalInvocationID.x + _408;
            float _413;
            switch (_24._m2)
            {
                case 2u:
                {
                    _413 = fast::max(_233[gl_LocalInvocationID.x], _233[_258]);
                    break;
                }
                case 3u:
                {
                    _413 = fast::min(_233[gl_LocalInvocationID.x], _233[_258]);
                    break;
                }
                case 4u:
                {
                    _413 = _233[gl_LocalInvocationID.x] * _233[_258];
                    break;
                }
                default:
                {
                    _413 = _233[gl_LocalInvocationID.x] + _233[_258];
                    break;
                }
            }
            _233[gl_LocalInvocationID.x] = _413;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    bool _270 = gl_LocalInvocationID.x == 0u;
    if (_270 ? _109 : _270)
    {
        float _410;
        if (_24._m2 == 1u)
        {
            _410 = _233[0] / float(_24._m1);
        }
        else
        {
            float _409;
            if (_24._m2 == 5u)
            {
                _409 = sqrt(_233[0]);
            }
            else
            {
                _409 = _233[0];
            }
            _410 = _409;
        }
        _286._m0[_98] = _410;
    }
}

