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
    uint _m15;
    int _m16;
    uint _m17;
    float _m18;
    float _m19;
    uint _m20;
    uint _m21;
};

constant uint _710 = gl_WorkGroupSize.y;
#ifndef SPIRV_CROSS_CONSTANT_ID_3
#define SPIRV_CROSS_CONSTANT_ID_3 4u
#endif
constant uint _711 = SPIRV_CROSS_CONSTANT_ID_3;
constant uint _712 = (_710 * _711);
#ifndef SPIRV_CROSS_CONSTANT_ID_4
#define SPIRV_CROSS_CONSTANT_ID_4 4u
#endif
constant uint _717 = SPIRV_CROSS_CONSTANT_ID_4;
constant uint _718 = (_639 * _717);
constant uint _817 = (_711 * _717);
constant uint _819 = (_711 * _717);
#ifndef SPIRV_CROSS_CONSTANT_ID_5
#define SPIRV_CROSS_CONSTANT_ID_5 16u
#endif
constant uint _857 = SPIRV_CROSS_CONSTANT_ID_5;
constant uint _858 = (_857 * _712);
constant uint _874 = (_712 + 1u);
constant uint _875 = (_857 * _874);

struct _894
{
    float _m0[1];
};

constant uint _911 = (_639 * _710);

struct _939
{
    int _m0[1];
};

struct _982
{
    float _m0[1];
};

constant uint _993 = (_718 + 1u);
constant uint _994 = (_857 * _993);
constant uint _1004 = (_911 / _718);

struct _1150
{
    float _m0[1];
};

struct _1200
{
    float _m0[1];
};

struct _1217
{
    float _m0[1];
};

kernel void conv2d(const device _982& _984 [[buffer(0)]], const device _894& _896 [[buffer(1)]], const device _1150& _1152 [[buffer(2)]], device _1217& _1219 [[buffer(3)]], device _1200& _1202 [[buffer(4)]], const device _939& _941 [[buffer(5)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup float _878[_875];
    threadgroup float _997[_994];
    uint _642 = (gl_LocalInvocationID.y * _639) + gl_LocalInvocationID.x;
    uint _655 = gl_WorkGroupID.z / _650._m20;
    uint _661 = gl_WorkGroupID.z % _650._m20;
    uint _669 = _650._m4 / _650._m7;
    uint _675 = _650._m1 / _650._m7;
    uint _687 = _675 * (_650._m8 * _650._m9);
    uint _695 = _650._m5 * _650._m6;
    uint _700 = _650._m0 * _695;
    uint _713 = gl_WorkGroupID.y * _712;
    uint _719 = gl_WorkGroupID.x * _718;
    uint _722 = _642 % _718;
    uint _726 = _719 + _722;
    bool _731 = _726 < _700;
    uint _2140;
    if (_731)
    {
        _2140 = _726 / _695;
    }
    else
    {
        _2140 = 0u;
    }
    uint _2141;
    if (_731)
    {
        _2141 = _726 % _695;
    }
    else
    {
        _2141 = 0u;
    }
    int _767 = (int(_2141 / _650._m6) * int(_650._m10)) - int(_650._m12);
    int _783 = (int(_2141 % _650._m6) * int(_650._m11)) - int(_650._m13);
    int _799 = int(_650._m3);
    int _803 = (int(((_2140 * _650._m1) + (_655 * _675)) * (_650._m2 * _650._m3)) + (_767 * _799)) + _783;
    uint _807 = _655 * _669;
    spvUnsafeArray<float, _819> _822;
    for (uint _2142 = 0u; _2142 < _817; )
    {
        _822[_2142] = 0.0;
        _2142++;
        continue;
    }
    uint _835 = min(_687, ((_661 + 1u) * _650._m21));
    uint _840 = _661 * _650._m21;
    spvUnsafeArray<float, _711> _1026;
    spvUnsafeArray<float, _717> _1050;
    for (uint _2143 = _840; _2143 < _835; _2143 += _857)
    {
        for (uint _2193 = _642; _2193 < _858; _2193 += _911)
        {
            uint _862 = _2193 % _857;
            uint _865 = _2193 / _857;
            uint _869 = _713 + _865;
            uint _873 = _2143 + _862;
            float _2215;
            if ((_869 < _669) && (_873 < _835))
            {
                _2215 = _896._m0[(_687 * (_807 + _869)) + _873];
            }
            else
            {
                _2215 = 0.0;
            }
            _878[(_862 * _874) + _865] = _2215;
        }
        uint _916 = _642 / _718;
        for (uint _2194 = _916; _2194 < _857; _2194 += _1004)
        {
            uint _927 = _2143 + _2194;
            float _2211;
            if (_731 && (_927 < _835))
            {
                uint _944 = 3u * _927;
                int _949 = _767 + _941._m0[_944 + 1u];
                int _957 = _783 + _941._m0[_944 + 2u];
                bool _959 = _949 >= 0;
                bool _967;
                if (_959)
                {
                    _967 = _949 < int(_650._m2);
                }
                else
                {
                    _967 = _959;
                }
                bool _970 = _967 && (_957 >= 0);
                bool _978;
                if (_970)
                {
                    _978 = _957 < _799;
                }
                else
                {
                    _978 = _970;
                }
                float _2212;
                if (_978)
                {
                    _2212 = _984._m0[_803 + _941._m0[_944]];
                }
                else
                {
                    _2212 = 0.0;
                }
                _2211 = _2212;
            }
            else
            {
                _2211 = 0.0;
            }
            _997[(_2194 * _993) + _722] = _2211;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint _2195;
        _2195 = 0u;
        for (; _2195 < _857; _2195++)
        {
            for (uint _2199 = 0u; _2199 < _711; )
            {
                _1026[_2199] = _878[((_2195 * _874) + gl_LocalInvocationID.y) + (_2199 * _710)];
                _2199++;
                continue;
            }
            for (uint _2200 = 0u; _2200 < _717; )
            {
                _1050[_2200] = _997[((_2195 * _993) + gl_LocalInvocationID.x) + (_2200 * _639)];
                _2200++;
                continue;
            }
            uint _2201;
            _2201 = 0u;
            for (; _2201 < _711; _2201++)
            {
                for (uint _2205 = 0u; _2205 < _717; )
                {
                    uint _1083 = (_2201 * _717) + _2205;
                    _822[_1083] = fma(_1026[_2201], _1050[_2205], _822[_1083]);
                    _2205++;
                    continue;
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1113 = (_650._m0 * _650._m4) * _695;
    for (uint _2144 = 0u; _2144 < _711; _2144++)
    {
        uint _1128 = (_713 + gl_LocalInvocationID.y) + (_2144 * _710);
        if (_1128 >= _669)
        {
            continue;
        }
        uint _1140 = _807 + _1128;
        float _2145;
        if (_650._m17 != 0u)
        {
            _2145 = _1152._m0[_1140];
        }
        else
        {
            _2145 = 0.0;
        }
        for (uint _2146 = 0u; _2146 < _717; _2146++)
        {
            uint _1172 = (_719 + gl_LocalInvocationID.x) + (_2146 * _639);
            if (_1172 >= _700)
            {
                continue;
            }
            uint _1193 = ((((_1172 / _695) * _650._m4) + _1140) * _695) + (_1172 % _695);
            if (_650._m20 > 1u)
            {
                _1202._m0[(_661 * _1113) + _1193] = _822[(_2144 * _717) + _2146];
            }
            else
            {
                float _1228 = _822[(_2144 * _717) + _2146] + _2145;
                float _2169;
                switch (_650._m16)
                {
                    case 1:
                    {
                        _2169 = fast::max(_1228, 0.0);
                        break;
                    }
                    case 2:
                    {
                        _2169 = fast::min(fast::max(_1228, _650._m18), _650._m19);
                        break;
                    }
                    case 3:
                    {
                        float _2166;
                        if (_1228 >= 0.0)
                        {
                            _2166 = _1228;
                        }
                        else
                        {
                            _2166 = _1228 * _650._m18;
                        }
                        _2169 = _2166;
                        break;
                    }
                    case 4:
                    {
                        _2169 = 1.0 / (1.0 + exp(-_1228));
                        break;
                    }
                    case 5:
                    {
                        _2169 = _1228 * (1.0 / (1.0 + exp(-_1228)));
                        break;
                    }
                    case 6:
                    {
                        float _1328 = _1228 * 0.707106769084930419921875;
                        float _1505 = abs(_1328);
                        float _1508 = fma(0.3275910913944244384765625, _1505, 1.0);
                        float _1509 = 1.0 / _1508;
                        _2169 = (0.5 * _1228) * fma(sign(_1328), fma(-(fma(fma(fma((1.0614054203033447265625 / _1508) - 1.45315206050872802734375, _1509, 1.42141377925872802734375), _1509, -0.284496724605560302734375), _1509, 0.254829585552215576171875) * _1509), exp((-_1505) * _1505), 1.0), 1.0);
                        break;
                    }
                    case 7:
                    {
                        float _2165;
                        do
                        {
                            float _1544 = abs(_1228);
                            if (_1544 < 0.0625)
                            {
                                float _1550 = _1228 * _1228;
                                _2165 = _1228 * fma(_1550, fma(_1550, fma(_1550, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1565 = exp((-2.0) * _1544);
                            _2165 = (sign(_1228) * (1.0 - _1565)) / (1.0 + _1565);
                            break;
                        } while(false);
                        _2169 = _2165;
                        break;
                    }
                    case 8:
                    {
                        _2169 = fast::clamp(fma(_1228, _650._m18, _650._m19), 0.0, 1.0);
                        break;
                    }
                    case 9:
                    {
                        _2169 = _1228 * fast::clamp(fma(_1228, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                        break;
                    }
                    case 16:
                    {
                        _2169 = exp(_1228);
                        break;
                    }
                    case 17:
                    {
                        _2169 = log(_1228);
                        break;
                    }
                    case 18:
                    {
                        _2169 = sqrt(_1228);
                        break;
                    }
                    case 19:
                    {
                        _2169 = -_1228;
                        break;
                    }
                    case 20:
                    {
                        _2169 = abs(_1228);
                        break;
                    }
                    case 21:
                    {
                        _2169 = 1.0 / _1228;
                        break;
                    }
                    case 22:
                    {
                        float _1582 = abs(_1228);
                        float _1585 = fma(0.3275910913944244384765625, _1582, 1.0);
                        float _1586 = 1.0 / _1585;
                        _2169 = sign(_1228) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1585) - 1.45315206050872802734375, _1586, 1.42141377925872802734375), _1586, -0.284496724605560302734375), _1586, 0.254829585552215576171875) * _1586), exp((-_1582) * _1582), 1.0);
                        break;
                    }
                    case 23:
                    {
                        _2169 = floor(_1228);
                        break;
                    }
                    case 24:
                    {
                        _2169 = ceil(_1228);
                        break;
                    }
                    case 25:
                    {
                        float _1652 = floor(fma(_1228, 0.636619746685028076171875, 0.5));
                        int _1655 = int(_1652) & 3;
                        float _2264 = -_1652;
                        float _1665 = fma(_2264, 7.5497901264043321134522557258606e-08, fma(_2264, 0.0004837512969970703125, fma(_2264, 1.5703125, _1228)));
                        float _2163;
                        if ((_1655 & 1) == 0)
                        {
                            float _1671 = _1665 * _1665;
                            _2163 = fma(_1665 * _1671, fma(_1671, fma(_1671, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1665);
                        }
                        else
                        {
                            float _1689 = _1665 * _1665;
                            _2163 = fma(_1689 * _1689, fma(_1689, fma(_1689, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1689, 1.0));
                        }
                        float _2164;
                        if (_1655 >= 2)
                        {
                            _2164 = -_2163;
                        }
                        else
                        {
                            _2164 = _2163;
                        }
                        _2169 = _2164;
                        break;
                    }
                    case 26:
                    {
                        float _1747 = floor(fma(_1228, 0.636619746685028076171875, 0.5));
                        int _1750 = int(_1747) & 3;
                        float _2260 = -_1747;
                        float _1760 = fma(_2260, 7.5497901264043321134522557258606e-08, fma(_2260, 0.0004837512969970703125, fma(_2260, 1.5703125, _1228)));
                        float _2161;
                        if ((_1750 & 1) == 0)
                        {
                            float _1766 = _1760 * _1760;
                            _2161 = fma(_1766 * _1766, fma(_1766, fma(_1766, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1766, 1.0));
                        }
                        else
                        {
                            float _1786 = _1760 * _1760;
                            _2161 = fma(_1760 * _1786, fma(_1786, fma(_1786, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1760);
                        }
                        float _2162;
                        if ((_1750 == 1) || (_1750 == 2))
                        {
                            _2162 = -_2161;
                        }
                        else
                        {
                            _2162 = _2161;
                        }
                        _2169 = _2162;
                        break;
                    }
                    case 27:
                    {
                        float _1807 = exp(-abs(_1228));
                        float _2160;
                        if (_1807 < 0.015625)
                        {
                            float _2257 = -_1807;
                            _2160 = _1807 * fma(_2257, fma(_2257, fma(_2257, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2160 = log(1.0 + _1807);
                        }
                        _2169 = fast::max(_1228, 0.0) + _2160;
                        break;
                    }
                    case 29:
                    {
                        _2169 = rint(_1228);
                        break;
                    }
                    case 30:
                    {
                        _2169 = sign(_1228);
                        break;
                    }
                    case 31:
                    {
                        _2169 = _1228 / (1.0 + abs(_1228));
                        break;
                    }
                    case 32:
                    {
                        float _1840 = exp(-abs(_1228));
                        float _2158;
                        if (_1840 < 0.015625)
                        {
                            float _2254 = -_1840;
                            _2158 = _1840 * fma(_2254, fma(_2254, fma(_2254, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2158 = log(1.0 + _1840);
                        }
                        float _1864 = fast::max(_1228, 0.0) + _2158;
                        float _2159;
                        do
                        {
                            float _1874 = abs(_1864);
                            if (_1874 < 0.0625)
                            {
                                float _1880 = _1864 * _1864;
                                _2159 = _1864 * fma(_1880, fma(_1880, fma(_1880, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1895 = exp((-2.0) * _1874);
                            _2159 = (sign(_1864) * (1.0 - _1895)) / (1.0 + _1895);
                            break;
                        } while(false);
                        _2169 = _1228 * _2159;
                        break;
                    }
                    case 33:
                    {
                        float _2157;
                        if (_1228 < 0.0)
                        {
                            _2157 = _650._m18 * (exp(_1228) - 1.0);
                        }
                        else
                        {
                            _2157 = _1228;
                        }
                        _2169 = _2157;
                        break;
                    }
                    case 34:
                    {
                        _2169 = fast::max(_1228, 0.0) + fast::min(0.0, _650._m18 * (exp(fast::min(_1228, 0.0) / _650._m18) - 1.0));
                        break;
                    }
                    case 35:
                    {
                        float _2156;
                        if (_1228 <= 0.0)
                        {
                            _2156 = _650._m18 * (exp(_1228) - 1.0);
                        }
                        else
                        {
                            _2156 = _1228;
                        }
                        _2169 = _650._m19 * _2156;
                        break;
                    }
                    case 36:
                    {
                        _2169 = (_1228 > _650._m18) ? _1228 : 0.0;
                        break;
                    }
                    case 37:
                    {
                        float _2155;
                        if (_1228 < (-_650._m19))
                        {
                            _2155 = _1228 + _650._m18;
                        }
                        else
                        {
                            float _2154;
                            if (_1228 > _650._m19)
                            {
                                _2154 = _1228 - _650._m18;
                            }
                            else
                            {
                                _2154 = 0.0;
                            }
                            _2155 = _2154;
                        }
                        _2169 = _2155;
                        break;
                    }
                    case 38:
                    {
                        float _1961 = floor(fma(_1228, 0.636619746685028076171875, 0.5));
                        int _1964 = int(_1961) & 3;
                        float _2249 = -_1961;
                        float _1974 = fma(_2249, 7.5497901264043321134522557258606e-08, fma(_2249, 0.0004837512969970703125, fma(_2249, 1.5703125, _1228)));
                        bool _1937 = (_1964 & 1) == 0;
                        float _2150;
                        if (_1937)
                        {
                            float _1980 = _1974 * _1974;
                            _2150 = fma(_1974 * _1980, fma(_1980, fma(_1980, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1974);
                        }
                        else
                        {
                            float _1998 = _1974 * _1974;
                            _2150 = fma(_1998 * _1998, fma(_1998, fma(_1998, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1998, 1.0));
                        }
                        float _2151;
                        if (_1964 >= 2)
                        {
                            _2151 = -_2150;
                        }
                        else
                        {
                            _2151 = _2150;
                        }
                        float _2152;
                        if (_1937)
                        {
                            float _2075 = _1974 * _1974;
                            _2152 = fma(_2075 * _2075, fma(_2075, fma(_2075, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2075, 1.0));
                        }
                        else
                        {
                            float _2095 = _1974 * _1974;
                            _2152 = fma(_1974 * _2095, fma(_2095, fma(_2095, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1974);
                        }
                        float _2153;
                        if ((_1964 == 1) || (_1964 == 2))
                        {
                            _2153 = -_2152;
                        }
                        else
                        {
                            _2153 = _2152;
                        }
                        _2169 = _2151 / _2153;
                        break;
                    }
                    case 39:
                    {
                        float _2149;
                        do
                        {
                            if (abs(_1228) < 0.0625)
                            {
                                float _2121 = _1228 * _1228;
                                _2149 = _1228 * fma(_2121, fma(_2121, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                                break;
                            }
                            float _2132 = exp(_1228);
                            _2149 = 0.5 * (_2132 - (1.0 / _2132));
                            break;
                        } while(false);
                        _2169 = _2149;
                        break;
                    }
                    case 40:
                    {
                        _2169 = 0.5 * (exp(_1228) + exp(-_1228));
                        break;
                    }
                    default:
                    {
                        _2169 = _1228;
                        break;
                    }
                }
                _1219._m0[_1193] = _2169;
            }
        }
    }
}

