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

struct _41
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
};

struct _89
{
    float _m0[1];
};

struct _127
{
    float _m0[1];
};

struct _228
{
    float _m0[1];
};

kernel void resize(const device _127& _129 [[buffer(0)]], const device _89& _91 [[buffer(1)]], device _228& _230 [[buffer(2)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _254 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_254 >= _43._m0)
        {
            break;
        }
        uint _64 = _254 / _43._m4;
        uint _79 = (_64 % _43._m3) * 4u;
        uint _85 = (_43._m3 + (_254 % _43._m4)) * 4u;
        uint _107 = uint(_91._m0[_85]);
        uint _113 = uint(_91._m0[_85 + 1u]);
        uint _123 = ((_64 / _43._m3) * _43._m1) * _43._m2;
        uint _135 = _123 + (uint(_91._m0[_79]) * _43._m2);
        uint _137 = _135 + _107;
        uint _142 = _85 + 2u;
        uint _152 = _123 + (uint(_91._m0[_79 + 1u]) * _43._m2);
        uint _154 = _152 + _107;
        uint _164 = _85 + 3u;
        float _255;
        float _256;
        if (_91._m0[_164] != 0.0)
        {
            _256 = fma(_129._m0[_154], _91._m0[_142], _129._m0[_152 + _113] * _91._m0[_164]);
            _255 = fma(_129._m0[_137], _91._m0[_142], _129._m0[_135 + _113] * _91._m0[_164]);
        }
        else
        {
            _256 = _129._m0[_154] * _91._m0[_142];
            _255 = _129._m0[_137] * _91._m0[_142];
        }
        uint _208 = _79 + 2u;
        uint _213 = _79 + 3u;
        float _257;
        if (_91._m0[_213] != 0.0)
        {
            _257 = fma(_255, _91._m0[_208], _256 * _91._m0[_213]);
        }
        else
        {
            _257 = _255 * _91._m0[_208];
        }
        _230._m0[_254] = _257;
        break;
    } while(false);
}

