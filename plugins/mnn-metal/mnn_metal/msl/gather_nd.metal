#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _25_tmp [[function_constant(0)]];
constant uint _25 = is_function_constant_defined(_25_tmp) ? _25_tmp : 1u;
constant uint _26_tmp [[function_constant(1)]];
constant uint _26 = is_function_constant_defined(_26_tmp) ? _26_tmp : 1u;
constant uint _27_tmp [[function_constant(2)]];
constant uint _27 = is_function_constant_defined(_27_tmp) ? _27_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_25, _26, _27);

struct _44
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

struct _106
{
    int _m0[1];
};

struct _149
{
    uint _m0[1];
};

struct _154
{
    uint _m0[1];
};

kernel void gather_nd(const device _154& _156 [[buffer(0)]], const device _106& _108 [[buffer(1)]], device _149& _151 [[buffer(2)]], constant _44& _46 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _184 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_184 >= _46._m0)
        {
            break;
        }
        uint _67 = _184 / _46._m1;
        uint _186;
        _186 = (_67 / _46._m3) * _46._m4;
        uint _145;
        for (uint _185 = 0u; _185 < _46._m2; _186 = _145, _185++)
        {
            uint _95 = (_67 * _46._m2) + _185;
            int _187;
            if (_46._m5 != 0u)
            {
                _187 = _108._m0[2u * _95];
            }
            else
            {
                _187 = _108._m0[_95];
            }
            int _189;
            if (_187 < 0)
            {
                _189 = _187 + int(_46._m8[_185]);
            }
            else
            {
                _189 = _187;
            }
            _145 = _186 + (uint(clamp(_189, 0, int(_46._m8[_185]) - 1)) * _46._m9[_185]);
        }
        _151._m0[_184] = _156._m0[_186 + (_184 % _46._m1)];
        break;
    } while(false);
}

