#pragma clang diagnostic ignored "-Wmissing-prototypes"
#pragma clang diagnostic ignored "-Wmissing-braces"

#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

template<typename T, size_t Num>
struct spvUnsafeArray
{
    T elements[Num ? Num : 1];
    
    thread T& operator [] (size_t pos) thread
    {
        return elements[pos];
    }
    constexpr const thread T& operator [] (size_t pos) const thread
    {
        return elements[pos];
    }
    
    device T& operator [] (size_t pos) device
    {
        return elements[pos];
    }
    constexpr const device T& operator [] (size_t pos) const device
    {
        return elements[pos];
    }
    
    constexpr const constant T& operator [] (size_t pos) const constant
    {
        return elements[pos];
    }
    
    threadgroup T& operator [] (size_t pos) threadgroup
    {
        return elements[pos];
    }
    constexpr const threadgroup T& operator [] (size_t pos) const threadgroup
    {
        return elements[pos];
    }
};

constant uint _635_tmp [[function_constant(0)]];
constant uint _635 = is_function_constant_defined(_635_tmp) ? _635_tmp : 1u;
constant uint _636_tmp [[function_constant(1)]];
constant uint _636 = is_function_constant_defined(_636_tmp) ? _636_tmp : 1u;
constant uint _637_tmp [[function_constant(2)]];
constant uint _637 = is_function_constant_defined(_637_tmp) ? _637_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_635, _636, _637);
constant uint _639 = gl_WorkGroupSize.x;

struct _648
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
    int _m15;
    uint _m16;
    uint _m17;
    uint _m18;
    uint _m19;
    float _m20;
    float _m21;
    float _m22;
    float _m23;
};

constant uint _688 = gl_WorkGroupSize.y;
#ifndef SPIRV_CROSS_CONSTANT_ID_3
#define SPIRV_CROSS_CONSTANT_ID_3 4u
#endif
constant uint _689 = SPIRV_CROSS_CONSTANT_ID_3;
constant uint _690 = (_688 * _689);
#ifndef SPIRV_CROSS_CONSTANT_ID_4
#define SPIRV_CROSS_CONSTANT_ID_4 4u
#endif
constant uint _695 = SPIRV_CROSS_CONSTANT_ID_4;
constant uint _696 = (_639 * _695);
constant uint _705 = (_689 * _695);
constant uint _707 = (_689 * _695);
#ifndef SPIRV_CROSS_CONSTANT_ID_5
#define SPIRV_CROSS_CONSTANT_ID_5 16u
#endif
constant uint _733 = SPIRV_CROSS_CONSTANT_ID_5;
constant uint _734 = (_733 * _690);
constant uint _772 = (_690 + 1u);
constant uint _773 = (_733 * _772);

struct _796
{
    half _m0[1];
};

constant uint _820 = (_639 * _688);
constant uint _831 = (_733 * _696);
constant uint _868 = (_696 + 1u);
constant uint _869 = (_733 * _868);

struct _892
{
    half _m0[1];
};

struct _1107
{
    half _m0[1];
};

struct _1130
{
    half _m0[1];
};

kernel void gemm_h(const device _796& _798 [[buffer(0)]], const device _892& _894 [[buffer(1)]], const device _1107& _1109 [[buffer(2)]], device _1130& _1132 [[buffer(3)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup half _776[_773];
    threadgroup half _872[_869];
    uint _642 = (gl_LocalInvocationID.y * _639) + gl_LocalInvocationID.x;
    uint _654 = gl_WorkGroupID.z / _650._m3;
    uint _660 = gl_WorkGroupID.z % _650._m3;
    uint _672 = (_654 * _650._m6) + (_660 * _650._m7);
    uint _684 = (_654 * _650._m10) + (_660 * _650._m11);
    uint _691 = gl_WorkGroupID.y * _690;
    uint _697 = gl_WorkGroupID.x * _696;
    spvUnsafeArray<float, _707> _710;
    for (uint _2054 = 0u; _2054 < _705; )
    {
        _710[_2054] = 0.0;
        _2054++;
        continue;
    }
    spvUnsafeArray<float, _689> _935;
    spvUnsafeArray<float, _695> _960;
    for (uint _2055 = 0u; _2055 < _650._m2; _2055 += _733)
    {
        for (uint _2104 = _642; _2104 < _734; _2104 += _820)
        {
            bool _740 = _650._m5 == 1u;
            uint _2127;
            if (_740)
            {
                _2127 = _2104 % _733;
            }
            else
            {
                _2127 = _2104 / _690;
            }
            uint _2129;
            if (_740)
            {
                _2129 = _2104 / _733;
            }
            else
            {
                _2129 = _2104 % _690;
            }
            uint _766 = _691 + _2129;
            uint _770 = _2055 + _2127;
            bool _784 = _766 < _650._m0;
            bool _791;
            if (_784)
            {
                _791 = _770 < _650._m2;
            }
            else
            {
                _791 = _784;
            }
            float _2132;
            if (_791)
            {
                _2132 = float(_798._m0[(_672 + (_766 * _650._m4)) + (_770 * _650._m5)]);
            }
            else
            {
                _2132 = 0.0;
            }
            _776[(_2127 * _772) + _2129] = half(_2132);
        }
        for (uint _2105 = _642; _2105 < _831; _2105 += _820)
        {
            bool _837 = _650._m9 == 1u;
            uint _2118;
            if (_837)
            {
                _2118 = _2105 % _696;
            }
            else
            {
                _2118 = _2105 / _733;
            }
            uint _2120;
            if (_837)
            {
                _2120 = _2105 / _696;
            }
            else
            {
                _2120 = _2105 % _733;
            }
            uint _863 = _697 + _2118;
            uint _867 = _2055 + _2120;
            bool _880 = _863 < _650._m1;
            bool _887;
            if (_880)
            {
                _887 = _867 < _650._m2;
            }
            else
            {
                _887 = _880;
            }
            float _2123;
            if (_887)
            {
                _2123 = float(_894._m0[(_684 + (_867 * _650._m8)) + (_863 * _650._m9)]);
            }
            else
            {
                _2123 = 0.0;
            }
            _872[(_2120 * _868) + _2118] = half(_2123);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint _2106;
        _2106 = 0u;
        for (; _2106 < _733; _2106++)
        {
            for (uint _2110 = 0u; _2110 < _689; )
            {
                _935[_2110] = float(_776[((_2106 * _772) + gl_LocalInvocationID.y) + (_2110 * _688)]);
                _2110++;
                continue;
            }
            for (uint _2111 = 0u; _2111 < _695; )
            {
                _960[_2111] = float(_872[((_2106 * _868) + gl_LocalInvocationID.x) + (_2111 * _639)]);
                _2111++;
                continue;
            }
            uint _2112;
            _2112 = 0u;
            for (; _2112 < _689; _2112++)
            {
                for (uint _2116 = 0u; _2116 < _695; )
                {
                    uint _994 = (_2112 * _695) + _2116;
                    _710[_994] = fma(_935[_2112], _960[_2116], _710[_994]);
                    _2116++;
                    continue;
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1028 = (_654 * _650._m12) + (_660 * _650._m13);
    uint _1040 = (_654 * _650._m18) + (_660 * _650._m19);
    for (uint _2056 = 0u; _2056 < _689; _2056++)
    {
        uint _1055 = (_691 + gl_LocalInvocationID.y) + (_2056 * _688);
        if (_1055 >= _650._m0)
        {
            continue;
        }
        for (uint _2057 = 0u; _2057 < _695; _2057++)
        {
            uint _1077 = (_697 + gl_LocalInvocationID.x) + (_2057 * _639);
            if (_1077 >= _650._m1)
            {
                continue;
            }
            uint _1093 = (_2056 * _695) + _2057;
            float _2059;
            if (_650._m14 != 0u)
            {
                _2059 = fma(_650._m20, _710[_1093], _650._m21 * float(_1109._m0[(_1040 + (_1055 * _650._m16)) + (_1077 * _650._m17)]));
            }
            else
            {
                _2059 = _650._m20 * _710[_1093];
            }
            float _2080;
            switch (_650._m15)
            {
                case 1:
                {
                    _2080 = fast::max(_2059, 0.0);
                    break;
                }
                case 2:
                {
                    _2080 = fast::min(fast::max(_2059, _650._m22), _650._m23);
                    break;
                }
                case 3:
                {
                    float _2077;
                    if (_2059 >= 0.0)
                    {
                        _2077 = _2059;
                    }
                    else
                    {
                        _2077 = _2059 * _650._m22;
                    }
                    _2080 = _2077;
                    break;
                }
                case 4:
                {
                    _2080 = 1.0 / (1.0 + exp(-_2059));
                    break;
                }
                case 5:
                {
                    _2080 = _2059 * (1.0 / (1.0 + exp(-_2059)));
                    break;
                }
                case 6:
                {
                    float _1242 = _2059 * 0.707106769084930419921875;
                    float _1419 = abs(_1242);
                    float _1422 = fma(0.3275910913944244384765625, _1419, 1.0);
                    float _1423 = 1.0 / _1422;
                    _2080 = (0.5 * _2059) * fma(sign(_1242), fma(-(fma(fma(fma((1.0614054203033447265625 / _1422) - 1.45315206050872802734375, _1423, 1.42141377925872802734375), _1423, -0.284496724605560302734375), _1423, 0.254829585552215576171875) * _1423), exp((-_1419) * _1419), 1.0), 1.0);
                    break;
                }
                case 7:
                {
                    float _2076;
                    do
                    {
                        float _1458 = abs(_2059);
                        if (_1458 < 0.0625)
                        {
                            float _1464 = _2059 * _2059;
                            _2076 = _2059 * fma(_1464, fma(_1464, fma(_1464, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1479 = exp((-2.0) * _1458);
                        _2076 = (sign(_2059) * (1.0 - _1479)) / (1.0 + _1479);
                        break;
                    } while(false);
                    _2080 = _2076;
                    break;
                }
                case 8:
                {
                    _2080 = fast::clamp(fma(_2059, _650._m22, _650._m23), 0.0, 1.0);
                    break;
                }
                case 9:
                {
                    _2080 = _2059 * fast::clamp(fma(_2059, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                    break;
                }
                case 16:
                {
                    _2080 = exp(_2059);
                    break;
                }
                case 17:
                {
                    _2080 = log(_2059);
                    break;
                }
                case 18:
                {
                    _2080 = sqrt(_2059);
                    break;
                }
                case 19:
                {
                    _2080 = -_2059;
                    break;
                }
                case 20:
                {
                    _2080 = abs(_2059);
                    break;
                }
                case 21:
                {
                    _2080 = 1.0 / _2059;
                    break;
                }
                case 22:
                {
                    float _1496 = abs(_2059);
                    float _1499 = fma(0.3275910913944244384765625, _1496, 1.0);
                    float _1500 = 1.0 / _1499;
                    _2080 = sign(_2059) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1499) - 1.45315206050872802734375, _1500, 1.42141377925872802734375), _1500, -0.284496724605560302734375), _1500, 0.254829585552215576171875) * _1500), exp((-_1496) * _1496), 1.0);
                    break;
                }
                case 23:
                {
                    _2080 = floor(_2059);
                    break;
                }
                case 24:
                {
                    _2080 = ceil(_2059);
                    break;
                }
                case 25:
                {
                    float _1566 = floor(fma(_2059, 0.636619746685028076171875, 0.5));
                    int _1569 = int(_1566) & 3;
                    float _2182 = -_1566;
                    float _1579 = fma(_2182, 7.5497901264043321134522557258606e-08, fma(_2182, 0.0004837512969970703125, fma(_2182, 1.5703125, _2059)));
                    float _2074;
                    if ((_1569 & 1) == 0)
                    {
                        float _1585 = _1579 * _1579;
                        _2074 = fma(_1579 * _1585, fma(_1585, fma(_1585, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1579);
                    }
                    else
                    {
                        float _1603 = _1579 * _1579;
                        _2074 = fma(_1603 * _1603, fma(_1603, fma(_1603, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1603, 1.0));
                    }
                    float _2075;
                    if (_1569 >= 2)
                    {
                        _2075 = -_2074;
                    }
                    else
                    {
                        _2075 = _2074;
                    }
                    _2080 = _2075;
                    break;
                }
                case 26:
                {
                    float _1661 = floor(fma(_2059, 0.636619746685028076171875, 0.5));
                    int _1664 = int(_1661) & 3;
                    float _2178 = -_1661;
                    float _1674 = fma(_2178, 7.5497901264043321134522557258606e-08, fma(_2178, 0.0004837512969970703125, fma(_2178, 1.5703125, _2059)));
                    float _2072;
                    if ((_1664 & 1) == 0)
                    {
                        float _1680 = _1674 * _1674;
                        _2072 = fma(_1680 * _1680, fma(_1680, fma(_1680, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1680, 1.0));
                    }
                    else
                    {
                        float _1700 = _1674 * _1674;
                        _2072 = fma(_1674 * _1700, fma(_1700, fma(_1700, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1674);
                    }
                    float _2073;
                    if ((_1664 == 1) || (_1664 == 2))
                    {
                        _2073 = -_2072;
                    }
                    else
                    {
                        _2073 = _2072;
                    }
                    _2080 = _2073;
                    break;
                }
                case 27:
                {
                    float _1721 = exp(-abs(_2059));
                    float _2071;
                    if (_1721 < 0.015625)
                    {
                        float _2175 = -_1721;
                        _2071 = _1721 * fma(_2175, fma(_2175, fma(_2175, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2071 = log(1.0 + _1721);
                    }
                    _2080 = fast::max(_2059, 0.0) + _2071;
                    break;
                }
                case 29:
                {
                    _2080 = rint(_2059);
                    break;
                }
                case 30:
                {
                    _2080 = sign(_2059);
                    break;
                }
                case 31:
                {
                    _2080 = _2059 / (1.0 + abs(_2059));
                    break;
                }
                case 32:
                {
                    float _1754 = exp(-abs(_2059));
                    float _2069;
                    if (_1754 < 0.015625)
                    {
                        float _2172 = -_1754;
                        _2069 = _1754 * fma(_2172, fma(_2172, fma(_2172, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2069 = log(1.0 + _1754);
                    }
                    float _1778 = fast::max(_2059, 0.0) + _2069;
                    float _2070;
                    do
                    {
                        float _1788 = abs(_1778);
                        if (_1788 < 0.0625)
                        {
                            float _1794 = _1778 * _1778;
                            _2070 = _1778 * fma(_1794, fma(_1794, fma(_1794, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1809 = exp((-2.0) * _1788);
                        _2070 = (sign(_1778) * (1.0 - _1809)) / (1.0 + _1809);
                        break;
                    } while(false);
                    _2080 = _2059 * _2070;
                    break;
                }
                case 33:
                {
                    float _2068;
                    if (_2059 < 0.0)
                    {
                        _2068 = _650._m22 * (exp(_2059) - 1.0);
                    }
                    else
                    {
                        _2068 = _2059;
                    }
                    _2080 = _2068;
                    break;
                }
                case 34:
                {
                    _2080 = fast::max(_2059, 0.0) + fast::min(0.0, _650._m22 * (exp(fast::min(_2059, 0.0) / _650._m22) - 1.0));
                    break;
                }
                case 35:
                {
                    float _2067;
                    if (_2059 <= 0.0)
                    {
                        _2067 = _650._m22 * (exp(_2059) - 1.0);
                    }
                    else
                    {
                        _2067 = _2059;
                    }
                    _2080 = _650._m23 * _2067;
                    break;
                }
                case 36:
                {
                    _2080 = (_2059 > _650._m22) ? _2059 : 0.0;
                    break;
                }
                case 37:
                {
                    float _2066;
                    if (_2059 < (-_650._m23))
                    {
                        _2066 = _2059 + _650._m22;
                    }
                    else
                    {
                        float _2065;
                        if (_2059 > _650._m23)
                        {
                            _2065 = _2059 - _650._m22;
                        }
                        else
                        {
                            _2065 = 0.0;
                        }
                        _2066 = _2065;
                    }
                    _2080 = _2066;
                    break;
                }
                case 38:
                {
                    float _1875 = floor(fma(_2059, 0.636619746685028076171875, 0.5));
                    int _1878 = int(_1875) & 3;
                    float _2167 = -_1875;
                    float _1888 = fma(_2167, 7.5497901264043321134522557258606e-08, fma(_2167, 0.0004837512969970703125, fma(_2167, 1.5703125, _2059)));
                    bool _1851 = (_1878 & 1) == 0;
                    float _2061;
                    if (_1851)
                    {
                        float _1894 = _1888 * _1888;
                        _2061 = fma(_1888 * _1894, fma(_1894, fma(_1894, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1888);
                    }
                    else
                    {
                        float _1912 = _1888 * _1888;
                        _2061 = fma(_1912 * _1912, fma(_1912, fma(_1912, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1912, 1.0));
                    }
                    float _2062;
                    if (_1878 >= 2)
                    {
                        _2062 = -_2061;
                    }
                    else
                    {
                        _2062 = _2061;
                    }
                    float _2063;
                    if (_1851)
                    {
                        float _1989 = _1888 * _1888;
                        _2063 = fma(_1989 * _1989, fma(_1989, fma(_1989, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1989, 1.0));
                    }
                    else
                    {
                        float _2009 = _1888 * _1888;
                        _2063 = fma(_1888 * _2009, fma(_2009, fma(_2009, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1888);
                    }
                    float _2064;
                    if ((_1878 == 1) || (_1878 == 2))
                    {
                        _2064 = -_2063;
                    }
                    else
                    {
                        _2064 = _2063;
                    }
                    _2080 = _2062 / _2064;
                    break;
                }
                case 39:
                {
                    float _2060;
                    do
                    {
                        if (abs(_2059) < 0.0625)
                        {
                            float _2035 = _2059 * _2059;
                            _2060 = _2059 * fma(_2035, fma(_2035, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                            break;
                        }
                        float _2046 = exp(_2059);
                        _2060 = 0.5 * (_2046 - (1.0 / _2046));
                        break;
                    } while(false);
                    _2080 = _2060;
                    break;
                }
                case 40:
                {
                    _2080 = 0.5 * (exp(_2059) + exp(-_2059));
                    break;
                }
                default:
                {
                    _2080 = _2059;
                    break;
                }
            }
            _1132._m0[(_1028 + (_1055 * _650._m1)) + _1077] = half(_2080);
        }
    }
}

