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

struct _208
{
    half _m0[1];
};

struct _270
{
    half _m0[1];
};

kernel void pool2d_h(const device _208& _210 [[buffer(0)]], device _270& _272 [[buffer(1)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _309 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_309 >= _43._m0)
        {
            break;
        }
        uint _64 = _309 / _43._m4;
        uint _81 = (_64 / _43._m3) * _43._m1;
        int _97 = int(_43._m9);
        int _98 = int((_64 % _43._m3) * _43._m7) - _97;
        int _109 = int(_43._m10);
        int _110 = int((_309 % _43._m4) * _43._m8) - _109;
        float _311;
        uint _312;
        float _313;
        _313 = as_type<float>(0xff800000u /* -inf */);
        _312 = 0u;
        _311 = 0.0;
        uint _322;
        float _326;
        float _330;
        for (uint _310 = 0u; _310 < _43._m5; _313 = _326, _312 = _322, _311 = _330, _310++)
        {
            int _137 = _98 + int(_310 * _43._m13);
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
            _330 = _311;
            _326 = _313;
            _322 = _312;
            uint _343;
            float _345;
            float _349;
            for (uint _315 = 0u; _315 < _43._m6; _330 = _349, _326 = _345, _322 = _343, _315++)
            {
                int _188 = _110 + int(_315 * _43._m14);
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
                    float _224 = float(_210._m0[(_43._m2 * (_81 + uint(_137))) + uint(_188)]);
                    _349 = _330 + _224;
                    _345 = fast::max(_326, _224);
                    _343 = _322 + 1u;
                }
                else
                {
                    bool _239 = (_43._m16 != 0u) && _168;
                    bool _248;
                    if (_239)
                    {
                        _248 = _188 >= (-_109);
                    }
                    else
                    {
                        _248 = _239;
                    }
                    bool _260;
                    if (_248)
                    {
                        _260 = _188 < int(_43._m2 + _43._m12);
                    }
                    else
                    {
                        _260 = _248;
                    }
                    uint _344;
                    if (_260)
                    {
                        _344 = _322 + 1u;
                    }
                    else
                    {
                        _344 = _322;
                    }
                    _349 = _330;
                    _345 = _326;
                    _343 = _344;
                }
            }
        }
        float _314;
        if (_43._m15 == 0u)
        {
            _314 = _313;
        }
        else
        {
            _314 = _311 / float(_312);
        }
        _272._m0[_309] = half(_314);
        break;
    } while(false);
}

