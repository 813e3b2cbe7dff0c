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
    uint _m5;
    uint _m6;
    uint _m7;
    uint _m8;
    uint _m9;
    uint _m10;
    uint _m11;
    uint _m12;
    uint _m13;
    uint _m14;
    uint _m15;
    uint _m16;
};

struct _207
{
    float _m0[1];
};

struct _268
{
    float _m0[1];
};

kernel void pool2d(const device _207& _209 [[buffer(0)]], device _268& _270 [[buffer(1)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _306 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_306 >= _43._m0)
        {
            break;
        }
        uint _64 = _306 / _43._m4;
        uint _81 = (_64 / _43._m3) * _43._m1;
        int _97 = int(_43._m9);
        int _98 = int((_64 % _43._m3) * _43._m7) - _97;
        int _109 = int(_43._m10);
        int _110 = int((_306 % _43._m4) * _43._m8) - _109;
        float _308;
        uint _309;
        float _310;
        _310 = as_type<float>(0xff800000u /* -inf */);
        _309 = 0u;
        _308 = 0.0;
        uint _319;
        float _323;
        float _327;
        for (uint _307 = 0u; _307 < _43._m5; _310 = _323, _309 = _319, _308 = _327, _307++)
        {
            int _137 = _98 + int(_307 * _43._m13);
            bool _141 = _137 >= 0;
            bool _149;
            if (_141)
            {
                _149 = _137 < int(_43._m1);
            }
            else
            {
                _149 = _141;
            }
            bool _156 = _137 >= (-_97);
            bool _168;
            if (_156)
            {
                _168 = _137 < int(_43._m1 + _43._m11);
            }
            else
            {
                _168 = _156;
            }
            _327 = _308;
            _323 = _310;
            _319 = _309;
            uint _340;
            float _342;
            float _346;
            for (uint _312 = 0u; _312 < _43._m6; _327 = _346, _323 = _342, _319 = _340, _312++)
            {
                int _188 = _110 + int(_312 * _43._m14);
                bool _191 = _188 >= 0;
                bool _199;
                if (_191)
                {
                    _199 = _188 < int(_43._m2);
                }
                else
                {
                    _199 = _191;
                }
                if (_149 && _199)
                {
                    uint _219 = (_43._m2 * (_81 + uint(_137))) + uint(_188);
                    _346 = _327 + _209._m0[_219];
                    _342 = fast::max(_323, _209._m0[_219]);
                    _340 = _319 + 1u;
                }
                else
                {
                    bool _237 = (_43._m16 != 0u) && _168;
                    bool _246;
                    if (_237)
                    {
                        _246 = _188 >= (-_109);
                    }
                    else
                    {
                        _246 = _237;
                    }
                    bool _258;
                    if (_246)
                    {
                        _258 = _188 < int(_43._m2 + _43._m12);
                    }
                    else
                    {
                        _258 = _246;
                    }
                    uint _341;
                    if (_258)
                    {
                        _341 = _319 + 1u;
                    }
                    else
                    {
                        _341 = _319;
                    }
                    _346 = _327;
                    _342 = _323;
                    _340 = _341;
                }
            }
        }
        float _311;
        if (_43._m15 == 0u)
        {
            _311 = _310;
        }
        else
        {
            _311 = _308 / float(_309);
        }
        _270._m0[_306] = _311;
        break;
    } while(false);
}

