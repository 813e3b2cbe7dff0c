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

struct _124
{
    float _m0[1];
};

struct _245
{
    float _m0[1];
};

struct _254
{
    float _m0[1];
};

struct _269
{
    float _m0[1];
};

kernel void norm_rows(const device _124& _126 [[buffer(0)]], const device _245& _247 [[buffer(1)]], const device _269& _271 [[buffer(2)]], device _254& _256 [[buffer(3)]], constant _89& _91 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]])
{
    threadgroup float _31[_28];
    do
    {
        uint _82 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
        bool _95 = _82 < _91._m0;
        uint _358;
        if (_95)
        {
            _358 = _82 * _91._m1;
        }
        else
        {
            _358 = 0u;
        }
        float _360;
        if (_95)
        {
            float _361;
            _361 = 0.0;
            for (uint _359 = gl_LocalInvocationID.x; _359 < _91._m1; )
            {
                _361 += _126._m0[_358 + _359];
                _359 += gl_WorkGroupSize.x;
                continue;
            }
            _360 = _361;
        }
        else
        {
            _360 = 0.0;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _31[gl_LocalInvocationID.x] = _360;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _362 = _38; _362 > 0u; _362 = _362 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _362)
            {
                _31[gl_LocalInvocationID.x] += _31[gl_LocalInvocationID.x + _362];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        float _322 = _31[0];
        float _144 = float(_91._m1);
        float _145 = _322 / _144;
        float _364;
        if (_95)
        {
            float _365;
            _365 = 0.0;
            for (uint _363 = gl_LocalInvocationID.x; _363 < _91._m1; )
            {
                float _168 = _126._m0[_358 + _363] - _145;
                _365 = fma(_168, _168, _365);
                _363 += gl_WorkGroupSize.x;
                continue;
            }
            _364 = _365;
        }
        else
        {
            _364 = 0.0;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _31[gl_LocalInvocationID.x] = _364;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _366 = _38; _366 > 0u; _366 = _366 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _366)
            {
                _31[gl_LocalInvocationID.x] += _31[gl_LocalInvocationID.x + _366];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        float _192 = 1.0 / sqrt((_31[0] / _144) + _91._m4);
        if (!_95)
        {
            break;
        }
        for (uint _367 = gl_LocalInvocationID.x; _367 < _91._m1; _367 += gl_WorkGroupSize.x)
        {
            uint _368;
            if (_91._m2 == 0u)
            {
                _368 = _367 % _91._m3;
            }
            else
            {
                _368 = _82 % _91._m3;
            }
            uint _231 = _358 + _367;
            float _237 = (_126._m0[_231] - _145) * _192;
            float _371;
            if (_91._m5 != 0u)
            {
                _371 = _237 * _247._m0[_368];
            }
            else
            {
                _371 = _237;
            }
            float _372;
            if (_91._m6 != 0u)
            {
                _372 = _371 + _271._m0[_368];
            }
            else
            {
                _372 = _371;
            }
            _256._m0[_231] = _372;
        }
        break;
    } while(false);
}

