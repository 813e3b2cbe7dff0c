#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

struct _21
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
};

struct _55
{
    float _m0[1];
};

struct _151
{
    float _m0[1];
};

constant uint _175_tmp [[function_constant(0)]];
constant uint _175 = is_function_constant_defined(_175_tmp) ? _175_tmp : 1u;
constant uint _176_tmp [[function_constant(1)]];
constant uint _176 = is_function_constant_defined(_176_tmp) ? _176_tmp : 1u;
constant uint _177_tmp [[function_constant(2)]];
constant uint _177 = is_function_constant_defined(_177_tmp) ? _177_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_175, _176, _177);

kernel void dq_range(const device _55& _57 [[buffer(0)]], device _151& _153 [[buffer(1)]], constant _21& _23 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup float _75[256];
    threadgroup float _80[256];
    uint _34 = _23._m0 + (gl_WorkGroupID.x * _23._m1);
    float _180;
    float _181;
    _181 = 0.0;
    _180 = 0.0;
    for (uint _179 = gl_LocalInvocationID.x; _179 < _23._m2; )
    {
        uint _60 = _34 + _179;
        _181 = fast::max(_181, _57._m0[_60]);
        _180 = fast::min(_180, _57._m0[_60]);
        _179 += 256u;
        continue;
    }
    _75[gl_LocalInvocationID.x] = _180;
    _80[gl_LocalInvocationID.x] = _181;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint _182 = 128u; _182 > 0u; _182 = _182 >> 1u)
    {
        if (gl_LocalInvocationID.x < _182)
        {
            uint _106 = gl_LocalInvocationID.x + _182;
            _75[gl_LocalInvocationID.x] = fast::min(_75[gl_LocalInvocationID.x], _75[_106]);
            _80[gl_LocalInvocationID.x] = fast::max(_80[gl_LocalInvocationID.x], _80[_106]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (gl_LocalInvocationID.x == 0u)
    {
        float _183;
        if (_75[0] == _80[0])
        {
            _183 = 1.0;
        }
        else
        {
            _183 = (_80[0] - _75[0]) * 0.0039215688593685626983642578125;
        }
        uint _159 = _23._m3 + (2u * gl_WorkGroupID.x);
        _153._m0[_159] = _183;
        _153._m0[_159 + 1u] = fast::clamp(rint((-_75[0]) / _183), 0.0, 255.0);
    }
}

