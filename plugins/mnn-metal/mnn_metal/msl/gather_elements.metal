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
    uint _m8[6];
    uint _m9[6];
};

struct _67
{
    int _m0[1];
};

struct _160
{
    uint _m0[1];
};

struct _170
{
    uint _m0[1];
};

kernel void gather_elements(const device _170& _172 [[buffer(0)]], const device _67& _69 [[buffer(1)]], device _160& _162 [[buffer(2)]], constant _44& _46 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _205 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_205 >= _46._m0)
        {
            break;
        }
        int _206;
        if (_46._m5 != 0u)
        {
            _206 = _69._m0[2u * _205];
        }
        else
        {
            _206 = _69._m0[_205];
        }
        int _207;
        if (_206 < 0)
        {
            _207 = _206 + int(_46._m4);
        }
        else
        {
            _207 = _206;
        }
        int _97 = clamp(_207, 0, int(_46._m4) - 1);
        int _105 = int(_46._m1) - 1;
        uint _211;
        _211 = 0u;
        uint _124;
        uint _145;
        int _208 = _105;
        uint _212 = _205;
        for (; _208 >= 0; _212 = _124, _211 = _145, _208--)
        {
            _124 = _212 / _46._m8[_208];
            uint _214;
            if (uint(_208) == _46._m2)
            {
                _214 = uint(_97);
            }
            else
            {
                _214 = _212 % _46._m8[_208];
            }
            _145 = _211 + (_214 * _46._m9[_208]);
        }
        for (uint _209 = 0u; _209 < _46._m3; )
        {
            _162._m0[(_205 * _46._m3) + _209] = _172._m0[(_211 * _46._m3) + _209];
            _209++;
            continue;
        }
        break;
    } while(false);
}

