#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _50_tmp [[function_constant(0)]];
constant uint _50 = is_function_constant_defined(_50_tmp) ? _50_tmp : 1u;
constant uint _51_tmp [[function_constant(1)]];
constant uint _51 = is_function_constant_defined(_51_tmp) ? _51_tmp : 1u;
constant uint _52_tmp [[function_constant(2)]];
constant uint _52 = is_function_constant_defined(_52_tmp) ? _52_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_50, _51, _52);

struct _96
{
    uint _m0;
    uint _m1;
    int _m2;
    uint _m3;
    uint _m4[6];
    uint _m5[6];
    uint _m6[6];
};

struct _108
{
    uint _m0[1];
};

struct _118
{
    uint _m0[1];
};

struct _528
{
    uint _m0[1];
};

kernel void compare(const device _108& _110 [[buffer(0)]], const device _118& _120 [[buffer(1)]], device _528& _530 [[buffer(2)]], constant _96& _98 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _564 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        uint _441 = _564 * 4u;
        if (_441 >= _98._m0)
        {
            break;
        }
        uint _942;
        _942 = 0u;
        uint _997;
        uint _940 = 0u;
        for (;;)
        {
            bool _457 = _940 < 4u;
            bool _466;
            if (_457)
            {
                _466 = (_441 + _940) < _98._m0;
            }
            else
            {
                _466 = _457;
            }
            if (_466)
            {
                uint _472 = _441 + _940;
                int _477 = int(_98._m1) - 1;
                uint _945;
                uint _946;
                _946 = 0u;
                _945 = 0u;
                int _944 = _477;
                uint _996 = _472;
                for (; _944 >= 0; )
                {
                    uint _491 = _996 % _98._m4[_944];
                    _996 /= _98._m4[_944];
                    _946 += (_491 * _98._m6[_944]);
                    _945 += (_491 * _98._m5[_944]);
                    _944--;
                    continue;
                }
                bool _957;
                do
                {
                    if (_98._m2 == 13)
                    {
                        _957 = false;
                        break;
                    }
                    if (_98._m2 >= 9)
                    {
                        bool _956;
                        if (_98._m2 == 9)
                        {
                            bool _713 = (_110._m0[_945] & 2139095040u) == 2139095040u;
                            bool _719;
                            if (_713)
                            {
                                _719 = (_110._m0[_945] & 8388607u) != 0u;
                            }
                            else
                            {
                                _719 = _713;
                            }
                            _956 = _719;
                        }
                        else
                        {
                            bool _724 = (_110._m0[_945] & 2147483647u) == 2139095040u;
                            bool _625;
                            if (_724)
                            {
                                bool _614 = _98._m2 == 12;
                                bool _623;
                                if (!_614)
                                {
                                    _623 = (_98._m2 == 11) == ((_110._m0[_945] & 2147483648u) != 0u);
                                }
                                else
                                {
                                    _623 = _614;
                                }
                                _625 = _623;
                            }
                            else
                            {
                                _625 = _724;
                            }
                            _956 = _625;
                        }
                        _957 = _956;
                        break;
                    }
                    if (_98._m2 >= 5)
                    {
                        bool _639 = ((_110._m0[_945 >> 2u] >> ((_945 & 3u) * 8u)) & 255u) != 0u;
                        bool _646 = ((_120._m0[_946 >> 2u] >> ((_946 & 3u) * 8u)) & 255u) != 0u;
                        bool _955;
                        if (_98._m2 == 5)
                        {
                            _955 = _639 && _646;
                        }
                        else
                        {
                            bool _954;
                            if (_98._m2 == 6)
                            {
                                _954 = _639 || _646;
                            }
                            else
                            {
                                bool _953;
                                if (_98._m2 == 7)
                                {
                                    _953 = _639 != _646;
                                }
                                else
                                {
                                    _953 = !_639;
                                }
                                _954 = _953;
                            }
                            _955 = _954;
                        }
                        _957 = _955;
                        break;
                    }
                    int _951;
                    do
                    {
                        if (_98._m3 == 0u)
                        {
                            bool _906 = (_110._m0[_945] & 2139095040u) == 2139095040u;
                            bool _912;
                            if (_906)
                            {
                                _912 = (_110._m0[_945] & 8388607u) != 0u;
                            }
                            else
                            {
                                _912 = _906;
                            }
                            bool _785;
                            if (!_912)
                            {
                                bool _917 = (_120._m0[_946] & 2139095040u) == 2139095040u;
                                bool _923;
                                if (_917)
                                {
                                    _923 = (_120._m0[_946] & 8388607u) != 0u;
                                }
                                else
                                {
                                    _923 = _917;
                                }
                                _785 = _923;
                            }
                            else
                            {
                                _785 = _912;
                            }
                            if (_785)
                            {
                                _951 = 2;
                                break;
                            }
                            float _789 = as_type<float>(_110._m0[_945]);
                            float _791 = as_type<float>(_120._m0[_946]);
                            int _950;
                            if (_789 < _791)
                            {
                                _950 = -1;
                            }
                            else
                            {
                                _950 = int(_789 > _791);
                            }
                            _951 = _950;
                            break;
                        }
                        if (_98._m3 == 1u)
                        {
                            int _811 = int(_110._m0[_945]);
                            int _815 = int(_120._m0[_946]);
                            int _949;
                            if (_811 < _815)
                            {
                                _949 = -1;
                            }
                            else
                            {
                                _949 = int(_811 > _815);
                            }
                            _951 = _949;
                            break;
                        }
                        if (_98._m3 == 2u)
                        {
                            uint _833 = 2u * _945;
                            int _837 = int(_110._m0[_833 + 1u]);
                            uint _839 = 2u * _946;
                            int _843 = int(_120._m0[_839 + 1u]);
                            if (_837 != _843)
                            {
                                _951 = (_837 < _843) ? (-1) : 1;
                                break;
                            }
                            int _948;
                            if (_110._m0[_833] < _120._m0[_839])
                            {
                                _948 = -1;
                            }
                            else
                            {
                                _948 = int(_110._m0[_833] > _120._m0[_839]);
                            }
                            _951 = _948;
                            break;
                        }
                        uint _880 = uint(((_110._m0[_945 >> 2u] >> ((_945 & 3u) * 8u)) & 255u) != 0u);
                        uint _888 = uint(((_120._m0[_946 >> 2u] >> ((_946 & 3u) * 8u)) & 255u) != 0u);
                        int _947;
                        if (_880 < _888)
                        {
                            _947 = -1;
                        }
                        else
                        {
                            _947 = int(_880 > _888);
                        }
                        _951 = _947;
                        break;
                    } while(false);
                    if (_951 == 2)
                    {
                        _957 = false;
                        break;
                    }
                    bool _958;
                    switch (_98._m2)
                    {
                        case 0:
                        {
                            _958 = _951 == 0;
                            break;
                        }
                        case 1:
                        {
                            _958 = _951 < 0;
                            break;
                        }
                        case 2:
                        {
                            _958 = _951 > 0;
                            break;
                        }
                        case 3:
                        {
                            _958 = _951 <= 0;
                            break;
                        }
                        default:
                        {
                            _958 = _951 >= 0;
                            break;
                        }
                    }
                    _957 = _958;
                    break;
                } while(false);
                if (_957)
                {
                    _997 = _942 | (1u << (_940 * 8u));
                }
                else
                {
                    _997 = _942;
                }
                _942 = _997;
                _940++;
                continue;
            }
            else
            {
                break;
            }
        }
        _530._m0[_564] = _942;
        break;
    } while(false);
}

