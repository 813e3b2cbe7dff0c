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

struct _141
{
    uint _m0[1];
};

struct _163
{
    uint _m0[1];
};

struct _328
{
    uint _m0[1];
};

struct _363
{
    uint _m0[1];
};

struct _402
{
    int _m0[1];
};

kernel void conv_int(const device _328& _330 [[buffer(0)]], const device _363& _365 [[buffer(1)]], const device _141& _143 [[buffer(2)]], const device _163& _165 [[buffer(3)]], device _402& _404 [[buffer(4)]], constant _76& _78 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _428 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_428 >= _78._m0)
        {
            break;
        }
        uint _92 = _428 % _78._m7;
        uint _97 = _428 / _78._m7;
        uint _103 = _97 % _78._m6;
        uint _107 = _97 / _78._m6;
        uint _113 = _107 % _78._m5;
        uint _118 = _107 / _78._m5;
        bool _124 = (_78._m1 & 1u) != 0u;
        bool _130 = (_78._m1 & 2u) != 0u;
        int _514;
        if ((_78._m1 & 4u) != 0u)
        {
            uint _438 = (_143._m0[0] >> 0u) & 255u;
            int _513;
            if (_124)
            {
                _513 = int(_438 << uint(24)) >> 24;
            }
            else
            {
                _513 = int(_438);
            }
            _514 = _513;
        }
        else
        {
            _514 = 0;
        }
        int _516;
        if ((_78._m1 & 8u) != 0u)
        {
            uint _172 = ((_78._m1 & 16u) != 0u) ? _113 : 0u;
            uint _459 = (_165._m0[_172 >> 2u] >> ((_172 & 3u) * 8u)) & 255u;
            int _515;
            if (_130)
            {
                _515 = int(_459 << uint(24)) >> 24;
            }
            else
            {
                _515 = int(_459);
            }
            _516 = _515;
        }
        else
        {
            _516 = 0;
        }
        uint _196 = _78._m2 / _78._m16;
        uint _204 = _113 / (_78._m5 / _78._m16);
        int _518;
        _518 = 0;
        int _535;
        for (uint _517 = 0u; _517 < _196; _518 = _535, _517++)
        {
            uint _229 = (((_118 * _78._m2) + (_204 * _196)) + _517) * _78._m3;
            uint _239 = ((_113 * _196) + _517) * _78._m8;
            _535 = _518;
            int _548;
            for (uint _519 = 0u; _519 < _78._m8; _535 = _548, _519++)
            {
                int _267 = int((_103 * _78._m10) + (_519 * _78._m14)) - int(_78._m12);
                bool _269 = _267 < 0;
                bool _278;
                if (!_269)
                {
                    _278 = _267 >= int(_78._m3);
                }
                else
                {
                    _278 = _269;
                }
                if (_278)
                {
                    _548 = _535;
                    continue;
                }
                int _533;
                _533 = _535;
                int _549;
                for (uint _521 = 0u; _521 < _78._m9; _533 = _549, _521++)
                {
                    int _310 = int((_92 * _78._m11) + (_521 * _78._m15)) - int(_78._m13);
                    bool _312 = _310 < 0;
                    bool _322;
                    if (!_312)
                    {
                        _322 = _310 >= int(_78._m4);
                    }
                    else
                    {
                        _322 = _312;
                    }
                    if (_322)
                    {
                        _549 = _533;
                        continue;
                    }
                    uint _340 = ((_229 + uint(_267)) * _78._m4) + uint(_310);
                    uint _480 = (_330._m0[_340 >> 2u] >> ((_340 & 3u) * 8u)) & 255u;
                    int _522;
                    if (_124)
                    {
                        _522 = int(_480 << uint(24)) >> 24;
                    }
                    else
                    {
                        _522 = int(_480);
                    }
                    uint _373 = ((_239 + _519) * _78._m9) + _521;
                    uint _501 = (_365._m0[_373 >> 2u] >> ((_373 & 3u) * 8u)) & 255u;
                    int _529;
                    if (_130)
                    {
                        _529 = int(_501 << uint(24)) >> 24;
                    }
                    else
                    {
                        _529 = int(_501);
                    }
                    _549 = _533 + ((_522 - _514) * (_529 - _516));
                }
                _548 = _533;
            }
        }
        _404._m0[_428] = _518;
        break;
    } while(false);
}

