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

struct _200
{
    half _m0[1];
};

constant uint _225_tmp [[function_constant(0)]];
constant uint _225 = is_function_constant_defined(_225_tmp) ? _225_tmp : 1u;
constant uint _226_tmp [[function_constant(1)]];
constant uint _226 = is_function_constant_defined(_226_tmp) ? _226_tmp : 1u;
constant uint _227_tmp [[function_constant(2)]];
constant uint _227 = is_function_constant_defined(_227_tmp) ? _227_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_225, _226, _227);
constant uint _232 = gl_WorkGroupSize.x;
constant uint _242 = gl_WorkGroupSize.x;
constant uint _243 = (_242 / 2u);

struct _286
{
    half _m0[1];
};

kernel void reduce_h(const device _200& _202 [[buffer(0)]], device _286& _288 [[buffer(1)]], constant _22& _24 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    threadgroup float _235[_232];
    uint _98 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
    float _405;
    if (_24._m2 == 2u)
    {
        _405 = as_type<float>(0xff800000u /* -inf */);
    }
    else
    {
        float _404;
        if (_24._m2 == 3u)
        {
            _404 = as_type<float>(0x7f800000u /* inf */);
        }
        else
        {
            _404 = float(_24._m2 == 4u);
        }
        _405 = _404;
    }
    bool _109 = _98 < _24._m0;
    float _408;
    if (_109)
    {
        int _122 = int(_24._m3) - 1;
        uint _421;
        _421 = 0u;
        int _406 = _122;
        uint _435 = _98;
        for (; _406 >= 0; )
        {
            uint _135 = _435 % _24._m8[_406];
            _435 /= _24._m8[_406];
            _421 += (_135 * _24._m9[_406]);
            _406--;
            continue;
        }
        float _409;
        _409 = _405;
        float _429;
        for (uint _407 = gl_LocalInvocationID.x; _407 < _24._m1; _409 = _429, _407 += gl_WorkGroupSize.x)
        {
            int _169 = int(_24._m4) - 1;
            uint _423;
            _423 = _421;
            int _422 = _169;
            uint _434 = _407;
            for (; _422 >= 0; )
            {
                uint _182 = _434 % _24._m10[_422];
                _434 /= _24._m10[_422];
                _423 += (_182 * _24._m11[_422]);
                _422--;
                continue;
            }
            float _207 = float(_202._m0[_423]);
            float _426;
            if (_24._m2 == 5u)
            {
                _426 = _207 * _207;
            }
            else
            {
                _426 = _207;
            }
            switch (_24._m2)
            {
                case 2u:
                {
                    _429 = fast::max(_409, _426);
                    break;
                }
                case 3u:
                {
                    _429 = fast::min(_409, _426);
                    break;
                }
                case 4u:
                {
                    _429 = _409 * _426;
                    break;
                }
                default:
                {
                    _429 = _409 + _426;
                    break;
                }
            }
        }
        _408 = _409;
    }
    else
    {
        _408 = _405;
    }
    _235[gl_LocalInvocationID.x] = _408;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint _411 = _243; _411 > 0u; _411 = _411 >> uint(1))
    {
        if (gl_LocalInvocationID.x < _411)
        {
            uint _260 = gl_LocalInvocationID.x + _411;
            float _416;
            switch (_24._m2)
            {
                case 2u:
                {
                    _416 = fast::max(_235[gl_LocalInvocationID.x], _235[_260]);
                    break;
                }
                case 3u:
                {
                    _416 = fast::min(_235[gl_LocalInvocationID.x], _235[_260]);
                    break;
                }
                case 4u:
                {
                    _416 = _235[gl_LocalInvocationID.x] * _235[_260];
                    break;
                }
                default:
                {
                    _416 = _235[gl_LocalInvocationID.x] + _235[_260];
                    break;
                }
            }
            _235[gl_LocalInvocationID.x] = _416;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    bool _272 = gl_LocalInvocationID.x == 0u;
    if (_272 ? _109 : _272)
    {
        float _413;
        if (_24._m2 == 1u)
        {
            _413 = _235[0] / float(_24._m1);
        }
        else
        {
            float _412;
            if (_24._m2 == 5u)
            {
                _412 = sqrt(_235[0]);
            }
            else
            {
                _412 = _235[0];
            }
            _413 = _412;
        }
        _288._m0[_98] = half(_413);
    }
}

