#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _30_tmp [[function_constant(0)]];
constant uint _30 = is_function_constant_defined(_30_tmp) ? _30_tmp : 1u;
constant uint _31_tmp [[function_constant(1)]];
constant uint _31 = is_function_constant_defined(_31_tmp) ? _31_tmp : 1u;
constant uint _32_tmp [[function_constant(2)]];
constant uint _32 = is_function_constant_defined(_32_tmp) ? _32_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_30, _31, _32);

struct _47
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
    uint _m6;
    uint _m7;
    uint _m8[8];
    uint _m9[8];
};

struct _100
{
    int _m0[1];
};

struct _163
{
    uint _m0[1];
};

struct _168
{
    uint _m0[1];
};

kernel void gather_nd(const device _168& _170 [[buffer(0)]], const device _100& _102 [[buffer(1)]], device _163& _165 [[buffer(2)]], constant _47& _49 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _255 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_49._m6 == 0u)
        {
            if (_255 < _49._m0)
            {
                uint _272 = _255 / _49._m1;
                uint _435;
                _435 = (_272 / _49._m3) * _49._m4;
                uint _330;
                for (uint _434 = 0u; _434 < _49._m2; _435 = _330, _434++)
                {
                    uint _292 = (_272 * _49._m2) + _434;
                    int _436;
                    if (_49._m5 != 0u)
                    {
                        _436 = _102._m0[2u * _292];
                    }
                    else
                    {
                        _436 = _102._m0[_292];
                    }
                    int _438;
                    if (_436 < 0)
                    {
                        _438 = _436 + int(_49._m8[_434]);
                    }
                    else
                    {
                        _438 = _436;
                    }
                    _330 = _435 + (uint(clamp(_438, 0, int(_49._m8[_434]) - 1)) * _49._m9[_434]);
                }
                _165._m0[_255] = _170._m0[_435 + (_255 % _49._m1)];
            }
            break;
        }
        uint _181 = _255 * 4u;
        if (_181 >= _49._m0)
        {
            break;
        }
        uint _422;
        _422 = 0u;
        uint _229;
        uint _420 = 0u;
        for (;;)
        {
            bool _196 = _420 < 4u;
            bool _206;
            if (_196)
            {
                _206 = (_181 + _420) < _49._m0;
            }
            else
            {
                _206 = _196;
            }
            if (_206)
            {
                uint _211 = _181 + _420;
                uint _354 = _211 / _49._m1;
                uint _425;
                _425 = (_354 / _49._m3) * _49._m4;
                uint _412;
                for (uint _424 = 0u; _424 < _49._m2; _425 = _412, _424++)
                {
                    uint _374 = (_354 * _49._m2) + _424;
                    int _428;
                    if (_49._m5 != 0u)
                    {
                        _428 = _102._m0[2u * _374];
                    }
                    else
                    {
                        _428 = _102._m0[_374];
                    }
                    int _430;
                    if (_428 < 0)
                    {
                        _430 = _428 + int(_49._m8[_424]);
                    }
                    else
                    {
                        _430 = _428;
                    }
                    _412 = _425 + (uint(clamp(_430, 0, int(_49._m8[_424]) - 1)) * _49._m9[_424]);
                }
                uint _419 = _425 + (_211 % _49._m1);
                _229 = _422 | (((_170._m0[_419 >> uint(2)] >> (8u * (_419 & 3u))) & 255u) << (8u * _420));
                _422 = _229;
                _420++;
                continue;
            }
            else
            {
                break;
            }
        }
        _165._m0[_255] = _422;
        break;
    } while(false);
}

