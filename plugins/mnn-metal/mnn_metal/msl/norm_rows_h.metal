#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _24_tmp [[function_constant(0)]];
constant uint _24 = is_function_constant_defined(_24_tmp) ? _24_tmp : 1u;
constant uint _25_tmp [[function_constant(1)]];
constant uint _25 = is_function_constant_defined(_25_tmp) ? _25_tmp : 1u;
constant uint _26_tmp [[function_constant(2)]];
constant uint _26 = is_function_constant_defined(_26_tmp) ? _26_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_24, _25, _26);
constant uint _28 = gl_WorkGroupSize.x;
constant uint _37 = gl_WorkGroupSize.x;
constant uint _38 = (_37 / 2u);

struct _89
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    float _m4;
    uint _m5;
    uint _m6;
};

struct _125
{
    half _m0[1];
};

struct _249
{
    half _m0[1];
};

struct _259
{
    half _m0[1];
};

struct _274
{
    half _m0[1];
};

kernel void norm_rows_h(const device _125& _127 [[buffer(0)]], const device _249& _251 [[buffer(1)]], const device _274& _276 [[buffer(2)]], device _259& _261 [[buffer(3)]], constant _89& _91 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]])
{
    threadgroup float _31[_28];
    do
    {
        uint _82 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
        bool _95 = _82 < _91._m0;
        uint _365;
        if (_95)
        {
            _365 = _82 * _91._m1;
        }
        else
        {
            _365 = 0u;
        }
        float _367;
        if (_95)
        {
            float _368;
            _368 = 0.0;
            for (uint _366 = gl_LocalInvocationID.x; _366 < _91._m1; )
            {
                _368 += float(_127._m0[_365 + _366]);
                _366 += gl_WorkGroupSize.x;
                continue;
            }
            _367 = _368;
        }
        else
        {
            _367 = 0.0;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _31[gl_LocalInvocationID.x] = _367;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _369 = _38; _369 > 0u; _369 = _369 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _369)
            {
                _31[gl_LocalInvocationID.x] += _31[gl_LocalInvocationID.x + _369];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        float _329 = _31[0];
        float _146 = float(_91._m1);
        float _147 = _329 / _146;
        float _371;
        if (_95)
        {
            float _372;
            _372 = 0.0;
            for (uint _370 = gl_LocalInvocationID.x; _370 < _91._m1; )
            {
                float _171 = float(_127._m0[_365 + _370]) - _147;
                _372 = fma(_171, _171, _372);
                _370 += gl_WorkGroupSize.x;
                continue;
            }
            _371 = _372;
        }
        else
        {
            _371 = 0.0;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _31[gl_LocalInvocationID.x] = _371;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _373 = _38; _373 > 0u; _373 = _373 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _373)
            {
                _31[gl_LocalInvocationID.x] += _31[gl_LocalInvocationID.x + _373];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        float _195 = 1.0 / sqrt((_31[0] / _146) + _91._m4);
        if (!_95)
        {
            break;
        }
        for (uint _374 = gl_LocalInvocationID.x; _374 < _91._m1; _374 += gl_WorkGroupSize.x)
        {
            uint _375;
            if (_91._m2 == 0u)
            {
                _375 = _374 % _91._m3;
            }
            else
            {
                _375 = _82 % _91._m3;
            }
            uint _234 = _365 + _374;
            float _241 = (float(_127._m0[_234]) - _147) * _195;
            float _378;
            if (_91._m5 != 0u)
            {
                _378 = _241 * float(_251._m0[_375]);
            }
            else
            {
                _378 = _241;
            }
            float _379;
            if (_91._m6 != 0u)
            {
                _379 = _378 + float(_276._m0[_375]);
            }
            else
            {
                _379 = _378;
            }
            _261._m0[_234] = half(_379);
        }
        break;
    } while(false);
}

