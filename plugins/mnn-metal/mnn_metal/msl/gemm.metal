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
constant uint _771 = (_690 + 1u);
constant uint _772 = (_733 * _771);

struct _795
{
    float _m0[1];
};

constant uint _817 = (_639 * _688);
constant uint _828 = (_733 * _696);
constant uint _865 = (_696 + 1u);
constant uint _866 = (_733 * _865);

struct _889
{
    float _m0[1];
};

struct _1100
{
    float _m0[1];
};

struct _1122
{
    float _m0[1];
};

kernel void gemm(const device _795& _797 [[buffer(0)]], const device _889& _891 [[buffer(1)]], const device _1100& _1102 [[buffer(2)]], device _1122& _1124 [[buffer(3)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup float _775[_772];
    threadgroup float _869[_866];
    uint _642 = (gl_LocalInvocationID.y * _639) + gl_LocalInvocationID.x;
    uint _654 = gl_WorkGroupID.z / _650._m3;
    uint _660 = gl_WorkGroupID.z % _650._m3;
    uint _672 = (_654 * _650._m6) + (_660 * _650._m7);
    uint _684 = (_654 * _650._m10) + (_660 * _650._m11);
    uint _691 = gl_WorkGroupID.y * _690;
    uint _697 = gl_WorkGroupID.x * _696;
    spvUnsafeArray<float, _707> _710;
    for (uint _2045 = 0u; _2045 < _705; )
    {
        _710[_2045] = 0.0;
        _2045++;
        continue;
    }
    spvUnsafeArray<float, _689> _930;
    spvUnsafeArray<float, _695> _954;
    for (uint _2046 = 0u; _2046 < _650._m2; _2046 += _733)
    {
        for (uint _2095 = _642; _2095 < _734; _2095 += _817)
        {
            bool _740 = _650._m5 == 1u;
            uint _2118;
            if (_740)
            {
                _2118 = _2095 % _733;
            }
            else
            {
                _2118 = _2095 / _690;
            }
            uint _2120;
            if (_740)
            {
                _2120 = _2095 / _733;
            }
            else
            {
                _2120 = _2095 % _690;
            }
            uint _766 = _691 + _2120;
            uint _770 = _2046 + _2118;
            bool _783 = _766 < _650._m0;
            bool _790;
            if (_783)
            {
                _790 = _770 < _650._m2;
            }
            else
            {
                _790 = _783;
            }
            float _2123;
            if (_790)
            {
                _2123 = _797._m0[(_672 + (_766 * _650._m4)) + (_770 * _650._m5)];
            }
            else
            {
                _2123 = 0.0;
            }
            _775[(_2118 * _771) + _2120] = _2123;
        }
        for (uint _2096 = _642; _2096 < _828; _2096 += _817)
        {
            bool _834 = _650._m9 == 1u;
            uint _2109;
            if (_834)
            {
                _2109 = _2096 % _696;
            }
            else
            {
                _2109 = _2096 / _733;
            }
            uint _2111;
            if (_834)
            {
                _2111 = _2096 / _696;
            }
            else
            {
                _2111 = _2096 % _733;
            }
            uint _860 = _697 + _2109;
            uint _864 = _2046 + _2111;
            bool _877 = _860 < _650._m1;
            bool _884;
            if (_877)
            {
                _884 = _864 < _650._m2;
            }
            else
            {
                _884 = _877;
            }
            float _2114;
            if (_884)
            {
                _2114 = _891._m0[(_684 + (_864 * _650._m8)) + (_860 * _650._m9)];
            }
            else
            {
                _2114 = 0.0;
            }
            _869[(_2111 * _865) + _2109] = _2114;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint _2097;
        _2097 = 0u;
        for (; _2097 < _733; _2097++)
        {
            for (uint _2101 = 0u; _2101 < _689; )
            {
                _930[_2101] = _775[((_2097 * _771) + gl_LocalInvocationID.y) + (_2101 * _688)];
                _2101++;
                continue;
            }
            for (uint _2102 = 0u; _2102 < _695; )
            {
                _954[_2102] = _869[((_2097 * _865) + gl_LocalInvocationID.x) + (_2102 * _639)];
                _2102++;
                continue;
            }
            uint _2103;
            _2103 = 0u;
            for (; _2103 < _689; _2103++)
            {
                for (uint _2107 = 0u; _2107 < _695; )
                {
                    uint _987 = (_2103 * _695) + _2107;
                    _710[_987] = fma(_930[_2103], _954[_2107], _710[_987]);
                    _2107++;
                    continue;
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1021 = (_654 * _650._m12) + (_660 * _650._m13);
    uint _1033 = (_654 * _650._m18) + (_660 * _650._m19);
    for (uint _2047 = 0u; _2047 < _689; _2047++)
    {
        uint _1048 = (_691 + gl_LocalInvocationID.y) + (_2047 * _688);
        if (_1048 >= _650._m0)
        {
            continue;
        }
        for (uint _2048 = 0u; _2048 < _695; _2048++)
        {
            uint _1070 = (_697 + gl_LocalInvocationID.x) + (_2048 * _639);
            if (_1070 >= _650._m1)
            {
                continue;
            }
            uint _1086 = (_2047 * _695) + _2048;
            float _2050;
            if (_650._m14 != 0u)
            {
                _2050 = fma(_650._m20, _710[_1086], _650._m21 * _1102._m0[(_1033 + (_1048 * _650._m16)) + (_1070 * _650._m17)]);
            }
            else
            {
                _2050 = _650._m20 * _710[_1086];
            }
            float _2071;
            switch (_650._m15)
            {
                case 1:
                {
                    _2071 = fast::max(_2050, 0.0);
                    break;
                }
                case 2:
                {
                    _2071 = fast::min(fast::max(_2050, _650._m22), _650._m23);
                    break;
                }
                case 3:
                {
                    float _2068;
                    if (_2050 >= 0.0)
                    {
                        _2068 = _2050;
                    }
                    else
                    {
                        _2068 = _2050 * _650._m22;
                    }
                    _2071 = _2068;
                    break;
                }
                case 4:
                {
                    _2071 = 1.0 / (1.0 + exp(-_2050));
                    break;
                }
                case 5:
                {
                    _2071 = _2050 * (1.0 / (1.0 + exp(-_2050)));
                    break;
                }
                case 6:
                {
                    float _1233 = _2050 * 0.707106769084930419921875;
                    float _1410 = abs(_1233);
                    float _1413 = fma(0.3275910913944244384765625, _1410, 1.0);
                    float _1414 = 1.0 / _1413;
                    _2071 = (0.5 * _2050) * fma(sign(_1233), fma(-(fma(fma(fma((1.0614054203033447265625 / _1413) - 1.45315206050872802734375, _1414, 1.42141377925872802734375), _1414, -0.284496724605560302734375), _1414, 0.254829585552215576171875) * _1414), exp((-_1410) * _1410), 1.0), 1.0);
                    break;
                }
                case 7:
                {
                    float _2067;
                    do
                    {
                        float _1449 = abs(_2050);
                        if (_1449 < 0.0625)
                        {
                            float _1455 = _2050 * _2050;
                            _2067 = _2050 * fma(_1455, fma(_1455, fma(_1455, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1470 = exp((-2.0) * _1449);
                        _2067 = (sign(_2050) * (1.0 - _1470)) / (1.0 + _1470);
                        break;
                    } while(false);
                    _2071 = _2067;
                    break;
                }
                case 8:
                {
                    _2071 = fast::clamp(fma(_2050, _650._m22, _650._m23), 0.0, 1.0);
                    break;
                }
                case 9:
                {
                    _2071 = _2050 * fast::clamp(fma(_2050, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                    break;
                }
                case 16:
                {
                    _2071 = exp(_2050);
                    break;
                }
                case 17:
                {
                    _2071 = log(_2050);
                    break;
                }
                case 18:
                {
                    _2071 = sqrt(_2050);
                    break;
                }
                case 19:
                {
                    _2071 = -_2050;
                    break;
                }
                case 20:
                {
                    _2071 = abs(_2050);
                    break;
                }
                case 21:
                {
                    _2071 = 1.0 / _2050;
                    break;
                }
                case 22:
                {
                    float _1487 = abs(_2050);
                    float _1490 = fma(0.3275910913944244384765625, _1487, 1.0);
                    float _1491 = 1.0 / _1490;
                    _2071 = sign(_2050) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1490) - 1.45315206050872802734375, _1491, 1.42141377925872802734375), _1491, -0.284496724605560302734375), _1491, 0.254829585552215576171875) * _1491), exp((-_1487) * _1487), 1.0);
                    break;
                }
                case 23:
                {
                    _2071 = floor(_2050);
                    break;
                }
                case 24:
                {
                    _2071 = ceil(_2050);
                    break;
                }
                case 25:
                {
                    float _1557 = floor(fma(_2050, 0.636619746685028076171875, 0.5));
                    int _1560 = int(_1557) & 3;
                    float _2173 = -_1557;
                    float _1570 = fma(_2173, 7.5497901264043321134522557258606e-08, fma(_2173, 0.0004837512969970703125, fma(_2173, 1.5703125, _2050)));
                    float _2065;
                    if ((_1560 & 1) == 0)
                    {
                        float _1576 = _1570 * _1570;
                        _2065 = fma(_1570 * _1576, fma(_1576, fma(_1576, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1570);
                    }
                    else
                    {
                        float _1594 = _1570 * _1570;
                        _2065 = fma(_1594 * _1594, fma(_1594, fma(_1594, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1594, 1.0));
                    }
                    float _2066;
                    if (_1560 >= 2)
                    {
                        _2066 = -_2065;
                    }
                    else
                    {
                        _2066 = _2065;
                    }
                    _2071 = _2066;
                    break;
                }
                case 26:
                {
                    float _1652 = floor(fma(_2050, 0.636619746685028076171875, 0.5));
                    int _1655 = int(_1652) & 3;
                    float _2169 = -_1652;
                    float _1665 = fma(_2169, 7.5497901264043321134522557258606e-08, fma(_2169, 0.0004837512969970703125, fma(_2169, 1.5703125, _2050)));
                    float _2063;
                    if ((_1655 & 1) == 0)
                    {
                        float _1671 = _1665 * _1665;
                        _2063 = fma(_1671 * _1671, fma(_1671, fma(_1671, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1671, 1.0));
                    }
                    else
                    {
                        float _1691 = _1665 * _1665;
                        _2063 = fma(_1665 * _1691, fma(_1691, fma(_1691, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1665);
                    }
                    float _2064;
                    if ((_1655 == 1) || (_1655 == 2))
                    {
                        _2064 = -_2063;
                    }
                    else
                    {
                        _2064 = _2063;
                    }
                    _2071 = _2064;
                    break;
                }
                case 27:
                {
                    float _1712 = exp(-abs(_2050));
                    float _2062;
                    if (_1712 < 0.015625)
                    {
                        float _2166 = -_1712;
                        _2062 = _1712 * fma(_2166, fma(_2166, fma(_2166, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2062 = log(1.0 + _1712);
                    }
                    _2071 = fast::max(_2050, 0.0) + _2062;
                    break;
                }
                case 29:
                {
                    _2071 = rint(_2050);
                    break;
                }
                case 30:
                {
                    _2071 = sign(_2050);
                    break;
                }
                case 31:
                {
                    _2071 = _2050 / (1.0 + abs(_2050));
                    break;
                }
                case 32:
                {
                    float _1745 = exp(-abs(_2050));
                    float _2060;
                    if (_1745 < 0.015625)
                    {
                        float _2163 = -_1745;
                        _2060 = _1745 * fma(_2163, fma(_2163, fma(_2163, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2060 = log(1.0 + _1745);
                    }
                    float _1769 = fast::max(_2050, 0.0) + _2060;
                    float _2061;
                    do
                    {
                        float _1779 = abs(_1769);
                        if (_1779 < 0.0625)
                        {
                            float _1785 = _1769 * _1769;
                            _2061 = _1769 * fma(_1785, fma(_1785, fma(_1785, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1800 = exp((-2.0) * _1779);
                        _2061 = (sign(_1769) * (1.0 - _1800)) / (1.0 + _1800);
                        break;
                    } while(false);
                    _2071 = _2050 * _2061;
                    break;
                }
                case 33:
                {
                    float _2059;
                    if (_2050 < 0.0)
                    {
                        _2059 = _650._m22 * (exp(_2050) - 1.0);
                    }
                    else
                    {
                        _2059 = _2050;
                    }
                    _2071 = _2059;
                    break;
                }
                case 34:
                {
                    _2071 = fast::max(_2050, 0.0) + fast::min(0.0, _650._m22 * (exp(fast::min(_2050, 0.0) / _650._m22) - 1.0));
                    break;
                }
                case 35:
                {
                    float _2058;
                    if (_2050 <= 0.0)
                    {
                        _2058 = _650._m22 * (exp(_2050) - 1.0);
                    }
                    else
                    {
                        _2058 = _2050;
                    }
                    _2071 = _650._m23 * _2058;
                    break;
                }
                case 36:
                {
                    _2071 = (_2050 > _650._m22) ? _2050 : 0.0;
                    break;
                }
                case 37:
                {
                    float _2057;
                    if (_2050 < (-_650._m23))
                    {
                        _2057 = _2050 + _650._m22;
                    }
                    else
                    {
                        float _2056;
                        if (_2050 > _650._m23)
                        {
                            _2056 = _2050 - _650._m22;
                        }
                        else
                        {
                            _2056 = 0.0;
                        }
                        _2057 = _2056;
                    }
                    _2071 = _2057;
                    break;
                }
                case 38:
                {
                    float _1866 = floor(fma(_2050, 0.636619746685028076171875, 0.5));
                    int _1869 = int(_1866) & 3;
                    float _2158 = -_1866;
                    float _1879 = fma(_2158, 7.5497901264043321134522557258606e-08, fma(_2158, 0.0004837512969970703125, fma(_2158, 1.5703125, _2050)));
                    bool _1842 = (_1869 & 1) == 0;
                    float _2052;
                    if (_1842)
                    {
                        float _1885 = _1879 * _1879;
                        _2052 = fma(_1879 * _1885, fma(_1885, fma(_1885, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1879);
                    }
                    else
                    {
                        float _1903 = _1879 * _1879;
                        _2052 = fma(_1903 * _1903, fma(_1903, fma(_1903, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1903, 1.0));
                    }
                    float _2053;
                    if (_1869 >= 2)
                    {
                        _2053 = -_2052;
                    }
                    else
                    {
                        _2053 = _2052;
                    }
                    float _2054;
                    if (_1842)
                    {
                        float _1980 = _1879 * _1879;
                        _2054 = fma(_1980 * _1980, fma(_1980, fma(_1980, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1980, 1.0));
                    }
                    else
                    {
                        float _2000 = _1879 * _1879;
                        _2054 = fma(_1879 * _2000, fma(_2000, fma(_2000, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1879);
                    }
                    float _2055;
                    if ((_1869 == 1) || (_1869 == 2))
                    {
                        _2055 = -_2054;
                    }
                    else
                    {
                        _2055 = _2054;
                    }
                    _2071 = _2053 / _2055;
                    break;
                }
                case 39:
                {
                    float _2051;
                    do
                    {
                        if (abs(_2050) < 0.0625)
                        {
                            float _2026 = _2050 * _2050;
                            _2051 = _2050 * fma(_2026, fma(_2026, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                            break;
                        }
                        float _2037 = exp(_2050);
                        _2051 = 0.5 * (_2037 - (1.0 / _2037));
                        break;
                    } while(false);
                    _2071 = _2051;
                    break;
                }
                case 40:
                {
                    _2071 = 0.5 * (exp(_2050) + exp(-_2050));
                    break;
                }
                default:
                {
                    _2071 = _2050;
                    break;
                }
            }
            _1124._m0[(_1021 + (_1048 * _650._m1)) + _1070] = _2071;
        }
    }
}

