#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _35_tmp [[function_constant(0)]];
constant uint _35 = is_function_constant_defined(_35_tmp) ? _35_tmp : 1u;
constant uint _36_tmp [[function_constant(1)]];
constant uint _36 = is_function_constant_defined(_36_tmp) ? _36_tmp : 1u;
constant uint _37_tmp [[function_constant(2)]];
constant uint _37 = is_function_constant_defined(_37_tmp) ? _37_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_35, _36, _37);

struct _76
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
};

struct _131
{
    uint _m0[1];
};

struct _167
{
    uint _m0[1];
};

struct _219
{
    uint _m0[1];
};

struct _239
{
    uint _m0[1];
};

struct _270
{
    int _m0[1];
};

kernel void matmul_int(const device _219& _221 [[buffer(0)]], const device _239& _241 [[buffer(1)]], const device _131& _133 [[buffer(2)]], const device _167& _169 [[buffer(3)]], device _270& _272 [[buffer(4)]], constant _76& _78 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _296 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_296 >= _78._m0)
        {
            break;
        }
        uint _92 = _296 % _78._m4;
        uint _97 = _296 / _78._m4;
        bool _114 = (_78._m1 & 1u) != 0u;
        bool _120 = (_78._m1 & 2u) != 0u;
        int _382;
        if ((_78._m1 & 4u) != 0u)
        {
            uint _140 = ((_78._m1 & 16u) != 0u) ? (_97 % _78._m2) : 0u;
            uint _306 = (_133._m0[_140 >> 2u] >> ((_140 & 3u) * 8u)) & 255u;
            int _381;
            if (_114)
            {
                _381 = int(_306 << uint(24)) >> 24;
            }
            else
            {
                _381 = int(_306);
            }
            _382 = _381;
        }
        else
        {
            _382 = 0;
        }
        int _384;
        if ((_78._m1 & 8u) != 0u)
        {
            uint _176 = ((_78._m1 & 32u) != 0u) ? _92 : 0u;
            uint _327 = (_169._m0[_176 >> 2u] >> ((_176 & 3u) * 8u)) & 255u;
            int _383;
            if (_120)
            {
                _383 = int(_327 << uint(24)) >> 24;
            }
            else
            {
                _383 = int(_327);
            }
            _384 = _383;
        }
        else
        {
            _384 = 0;
        }
        uint _198 = _97 * _78._m3;
        uint _206 = ((_97 / _78._m2) * _78._m5) + _92;
        int _386;
        _386 = 0;
        int _266;
        for (uint _385 = 0u; _385 < _78._m3; _386 = _266, _385++)
        {
            uint _224 = _198 + _385;
            uint _348 = (_221._m0[_224 >> 2u] >> ((_224 & 3u) * 8u)) & 255u;
            int _387;
            if (_114)
            {
                _387 = int(_348 << uint(24)) >> 24;
            }
            else
            {
                _387 = int(_348);
            }
            uint _247 = _206 + (_385 * _78._m4);
            uint _369 = (_241._m0[_247 >> 2u] >> ((_247 & 3u) * 8u)) & 255u;
            int _389;
            if (_120)
            {
                _389 = int(_369 << uint(24)) >> 24;
            }
            else
            {
                _389 = int(_369);
            }
            _266 = _386 + ((_387 - _382) * (_389 - _384));
        }
        _272._m0[_296] = _386;
        break;
    } while(false);
}

