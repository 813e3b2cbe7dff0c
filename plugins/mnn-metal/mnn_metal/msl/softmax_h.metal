#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _27_tmp [[function_constant(0)]];
constant uint _27 = is_function_constant_defined(_27_tmp) ? _27_tmp : 1u;
constant uint _28_tmp [[function_constant(1)]];
constant uint _28 = is_function_constant_defined(_28_tmp) ? _28_tmp : 1u;
constant uint _29_tmp [[function_constant(2)]];
constant uint _29 = is_function_constant_defined(_29_tmp) ? _29_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_27, _28, _29);
constant uint _31 = gl_WorkGroupSize.x;
constant uint _40 = gl_WorkGroupSize.x;
constant uint _41 = (_40 / 2u);

struct _106
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
};

struct _155
{
    half _m0[1];
};

struct _247
{
    half _m0[1];
};

kernel void softmax_h(const device _155& _157 [[buffer(0)]], device _247& _249 [[buffer(1)]], constant _106& _108 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]])
{
    threadgroup float _34[_31];
    do
    {
        uint _100 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
        bool _112 = _100 < _108._m0;
        uint _382;
        if (_112)
        {
            _382 = (((_100 / _108._m2) * _108._m1) * _108._m2) + (_100 % _108._m2);
        }
        else
        {
            _382 = 0u;
        }
        float _384;
        if (_112)
        {
            float _385;
            _385 = as_type<float>(0xff800000u /* -inf */);
            for (uint _383 = gl_LocalInvocationID.x; _383 < _108._m1; )
            {
                _385 = fast::max(_385, float(_157._m0[_382 + (_383 * _108._m2)]));
                _383 += gl_WorkGroupSize.x;
                continue;
            }
            _384 = _385;
        }
        else
        {
            _384 = as_type<float>(0xff800000u /* -inf */);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _34[gl_LocalInvocationID.x] = _384;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _386 = _41; _386 > 0u; _386 = _386 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _386)
            {
                _34[gl_LocalInvocationID.x] = fast::max(_34[gl_LocalInvocationID.x], _34[gl_LocalInvocationID.x + _386]);
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        float _330 = _34[0];
        float _388;
        if (_112)
        {
            float _389;
            _389 = 0.0;
            for (uint _387 = gl_LocalInvocationID.x; _387 < _108._m1; )
            {
                _389 += exp(float(_157._m0[_382 + (_387 * _108._m2)]) - _330);
                _387 += gl_WorkGroupSize.x;
                continue;
            }
            _388 = _389;
        }
        else
        {
            _388 = 0.0;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _34[gl_LocalInvocationID.x] = _388;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _390 = _41; _390 > 0u; _390 = _390 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _390)
            {
                _34[gl_LocalInvocationID.x] += _34[gl_LocalInvocationID.x + _390];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        if (!_112)
        {
            break;
        }
        float _222 = log(_34[0]);
        for (uint _391 = gl_LocalInvocationID.x; _391 < _108._m1; _391 += gl_WorkGroupSize.x)
        {
            uint _240 = _382 + (_391 * _108._m2);
            float _245 = float(_157._m0[_240]) - _330;
            float _397;
            if (_108._m3 != 0u)
            {
                _397 = _245 - _222;
            }
            else
            {
                _397 = exp(_245) / _34[0];
            }
            _249._m0[_240] = half(_397);
        }
        break;
    } while(false);
}

