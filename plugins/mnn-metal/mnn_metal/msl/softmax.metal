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

struct _154
{
    float _m0[1];
};

struct _243
{
    float _m0[1];
};

kernel void softmax(const device _154& _156 [[buffer(0)]], device _243& _245 [[buffer(1)]], constant _106& _108 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]])
{
    threadgroup float _34[_31];
    do
    {
        uint _100 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
        bool _112 = _100 < _108._m0;
        uint _377;
        if (_112)
        {
            _377 = (((_100 / _108._m2) * _108._m1) * _108._m2) + (_100 % _108._m2);
        }
        else
        {
            _377 = 0u;
        }
        float _379;
        if (_112)
        {
            float _380;
            _380 = as_type<float>(0xff800000u /* -inf */);
            for (uint _378 = gl_LocalInvocationID.x; _378 < _108._m1; )
            {
                _380 = fast::max(_380, _156._m0[_377 + (_378 * _108._m2)]);
                _378 += gl_WorkGroupSize.x;
                continue;
            }
            _379 = _380;
        }
        else
        {
            _379 = as_type<float>(0xff800000u /* -inf */);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _34[gl_LocalInvocationID.x] = _379;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _381 = _41; _381 > 0u; _381 = _381 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _381)
            {
                _34[gl_LocalInvocationID.x] = fast::max(_34[gl_LocalInvocationID.x], _34[gl_LocalInvocationID.x + _381]);
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        float _325 = _34[0];
        float _383;
        if (_112)
        {
            float _384;
            _384 = 0.0;
            for (uint _382 = gl_LocalInvocationID.x; _382 < _108._m1; )
            {
                _384 += exp(_156._m0[_377 + (_382 * _108._m2)] - _325);
                _382 += gl_WorkGroupSize.x;
                continue;
            }
            _383 = _384;
        }
        else
        {
            _383 = 0.0;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        _34[gl_LocalInvocationID.x] = _383;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _385 = _41; _385 > 0u; _385 = _385 >> uint(1))
        {
            if (gl_LocalInvocationID.x < _385)
            {
                _34[gl_LocalInvocationID.x] += _34[gl_LocalInvocationID.x + _385];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        if (!_112)
        {
            break;
        }
        float _219 = log(_34[0]);
        for (uint _386 = gl_LocalInvocationID.x; _386 < _108._m1; _386 += gl_WorkGroupSize.x)
        {
            uint _237 = _377 + (_386 * _108._m2);
            float _241 = _156._m0[_237] - _325;
            float _392;
            if (_108._m3 != 0u)
            {
                _392 = _241 - _219;
            }
            else
            {
                _392 = exp(_241) / _34[0];
            }
            _245._m0[_237] = _392;
        }
        break;
    } while(false);
}

