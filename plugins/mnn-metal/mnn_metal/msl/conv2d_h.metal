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

struct _895
{
    half _m0[1];
};

constant uint _913 = (_639 * _710);

struct _941
{
    int _m0[1];
};

struct _984
{
    float _m0[1];
};

constant uint _996 = (_718 + 1u);
constant uint _997 = (_857 * _996);
constant uint _1007 = (_913 / _718);

struct _1153
{
    float _m0[1];
};

struct _1203
{
    float _m0[1];
};

struct _1220
{
    float _m0[1];
};

kernel void conv2d_h(const device _984& _986 [[buffer(0)]], const device _895& _897 [[buffer(1)]], const device _1153& _1155 [[buffer(2)]], device _1220& _1222 [[buffer(3)]], device _1203& _1205 [[buffer(4)]], const device _941& _943 [[buffer(5)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup float _878[_875];
    threadgroup float _1000[_997];
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
    uint _2143;
    if (_731)
    {
        _2143 = _726 / _695;
    }
    else
    {
        _2143 = 0u;
    }
    uint _2144;
    if (_731)
    {
        _2144 = _726 % _695;
    }
    else
    {
        _2144 = 0u;
    }
    int _767 = (int(_2144 / _650._m6) * int(_650._m10)) - int(_650._m12);
    int _783 = (int(_2144 % _650._m6) * int(_650._m11)) - int(_650._m13);
    int _799 = int(_650._m3);
    int _803 = (int(((_2143 * _650._m1) + (_655 * _675)) * (_650._m2 * _650._m3)) + (_767 * _799)) + _783;
    uint _807 = _655 * _669;
    spvUnsafeArray<float, _819> _822;
    for (uint _2145 = 0u; _2145 < _817; )
    {
        _822[_2145] = 0.0;
        _2145++;
        continue;
    }
    uint _835 = min(_687, ((_661 + 1u) * _650._m21));
    uint _840 = _661 * _650._m21;
    spvUnsafeArray<float, _711> _1029;
    spvUnsafeArray<float, _717> _1053;
    for (uint _2146 = _840; _2146 < _835; _2146 += _857)
    {
        for (uint _2196 = _642; _2196 < _858; _2196 += _913)
        {
            uint _862 = _2196 % _857;
            uint _865 = _2196 / _857;
            uint _869 = _713 + _865;
            uint _873 = _2146 + _862;
            float _2218;
            if ((_869 < _669) && (_873 < _835))
            {
                _2218 = float(_897._m0[(_687 * (_807 + _869)) + _873]);
            }
            else
            {
                _2218 = 0.0;
            }
            _878[(_862 * _874) + _865] = _2218;
        }
        uint _918 = _642 / _718;
        for (uint _2197 = _918; _2197 < _857; _2197 += _1007)
        {
            uint _929 = _2146 + _2197;
            float _2214;
            if (_731 && (_929 < _835))
            {
                uint _946 = 3u * _929;
                int _951 = _767 + _943._m0[_946 + 1u];
                int _959 = _783 + _943._m0[_946 + 2u];
                bool _961 = _951 >= 0;
                bool _969;
                if (_961)
                {
                    _969 = _951 < int(_650._m2);
                }
                else
                {
                    _969 = _961;
                }
                bool _972 = _969 && (_959 >= 0);
                bool _980;
                if (_972)
                {
                    _980 = _959 < _799;
                }
                else
                {
                    _980 = _972;
                }
                float _2215;
                if (_980)
                {
                    _2215 = _986._m0[_803 + _943._m0[_946]];
                }
                else
                {
                    _2215 = 0.0;
                }
                _2214 = _2215;
            }
            else
            {
                _2214 = 0.0;
            }
            _1000[(_2197 * _996) + _722] = _2214;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint _2198;
        _2198 = 0u;
        for (; _2198 < _857; _2198++)
        {
            for (uint _2202 = 0u; _2202 < _711; )
            {
                _1029[_2202] = _878[((_2198 * _874) + gl_LocalInvocationID.y) + (_2202 * _710)];
                _2202++;
                continue;
            }
            for (uint _2203 = 0u; _2203 < _717; )
            {
                _1053[_2203] = _1000[((_2198 * _996) + gl_LocalInvocationID.x) + (_2203 * _639)];
                _2203++;
                continue;
            }
            uint _2204;
            _2204 = 0u;
            for (; _2204 < _711; _2204++)
            {
                for (uint _2208 = 0u; _2208 < _717; )
                {
                    uint _1086 = (_2204 * _717) + _2208;
                    _822[_1086] = fma(_1029[_2204], _1053[_2208], _822[_1086]);
                    _2208++;
                    continue;
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1116 = (_650._m0 * _650._m4) * _695;
    for (uint _2147 = 0u; _2147 < _711; _2147++)
    {
        uint _1131 = (_713 + gl_LocalInvocationID.y) + (_2147 * _710);
        if (_1131 >= _669)
        {
            continue;
        }
        uint _1143 = _807 + _1131;
        float _2148;
        if (_650._m17 != 0u)
        {
            _2148 = _1155._m0[_1143];
        }
        else
        {
            _2148 = 0.0;
        }
        for (uint _2149 = 0u; _2149 < _717; _2149++)
        {
            uint _1175 = (_719 + gl_LocalInvocationID.x) + (_2149 * _639);
            if (_1175 >= _700)
            {
                continue;
            }
            uint _1196 = ((((_1175 / _695) * _650._m4) + _1143) * _695) + (_1175 % _695);
            if (_650._m20 > 1u)
            {
                _1205._m0[(_661 * _1116) + _1196] = _822[(_2147 * _717) + _2149];
            }
            else
            {
                float _1231 = _822[(_2147 * _717) + _2149] + _2148;
                float _2172;
                switch (_650._m16)
                {
                    case 1:
                    {
                        _2172 = fast::max(_1231, 0.0);
                        break;
                    }
                    case 2:
                    {
                        _2172 = fast::min(fast::max(_1231, _650._m18), _650._m19);
                        break;
                    }
                    case 3:
                    {
                        float _2169;
                        if (_1231 >= 0.0)
                        {
                            _2169 = _1231;
                        }
                        else
                        {
                            _2169 = _1231 * _650._m18;
                        }
                        _2172 = _2169;
                        break;
                    }
                    case 4:
                    {
                        _2172 = 1.0 / (1.0 + exp(-_1231));
                        break;
                    }
                    case 5:
                    {
                        _2172 = _1231 * (1.0 / (1.0 + exp(-_1231)));
                        break;
                    }
                    case 6:
                    {
                        float _1331 = _1231 * 0.707106769084930419921875;
                        float _1508 = abs(_1331);
                        float _1511 = fma(0.3275910913944244384765625, _1508, 1.0);
                        float _1512 = 1.0 / _1511;
                        _2172 = (0.5 * _1231) * fma(sign(_1331), fma(-(fma(fma(fma((1.0614054203033447265625 / _1511) - 1.45315206050872802734375, _1512, 1.42141377925872802734375), _1512, -0.284496724605560302734375), _1512, 0.254829585552215576171875) * _1512), exp((-_1508) * _1508), 1.0), 1.0);
                        break;
                    }
                    case 7:
                    {
                        float _2168;
                        do
                        {
                            float _1547 = abs(_1231);
                            if (_1547 < 0.0625)
                            {
                                float _1553 = _1231 * _1231;
                                _2168 = _1231 * fma(_1553, fma(_1553, fma(_1553, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1568 = exp((-2.0) * _1547);
                            _2168 = (sign(_1231) * (1.0 - _1568)) / (1.0 + _1568);
                            break;
                        } while(false);
                        _2172 = _2168;
                        break;
                    }
                    case 8:
                    {
                        _2172 = fast::clamp(fma(_1231, _650._m18, _650._m19), 0.0, 1.0);
                        break;
                    }
                    case 9:
                    {
                        _2172 = _1231 * fast::clamp(fma(_1231, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                        break;
                    }
                    case 16:
                    {
                        _2172 = exp(_1231);
                        break;
                    }
                    case 17:
                    {
                        _2172 = log(_1231);
                        break;
                    }
                    case 18:
                    {
                        _2172 = sqrt(_1231);
                        break;
                    }
                    case 19:
                    {
                        _2172 = -_1231;
                        break;
                    }
                    case 20:
                    {
                        _2172 = abs(_1231);
                        break;
                    }
                    case 21:
                    {
                        _2172 = 1.0 / _1231;
                        break;
                    }
                    case 22:
                    {
                        float _1585 = abs(_1231);
                        float _1588 = fma(0.3275910913944244384765625, _1585, 1.0);
                        float _1589 = 1.0 / _1588;
                        _2172 = sign(_1231) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1588) - 1.45315206050872802734375, _1589, 1.42141377925872802734375), _1589, -0.284496724605560302734375), _1589, 0.254829585552215576171875) * _1589), exp((-_1585) * _1585), 1.0);
                        break;
                    }
                    case 23:
                    {
                        _2172 = floor(_1231);
                        break;
                    }
                    case 24:
                    {
                        _2172 = ceil(_1231);
                        break;
                    }
                    case 25:
                    {
                        float _1655 = floor(fma(_1231, 0.636619746685028076171875, 0.5));
                        int _1658 = int(_1655) & 3;
                        float _2267 = -_1655;
                        float _1668 = fma(_2267, 7.5497901264043321134522557258606e-08, fma(_2267, 0.0004837512969970703125, fma(_2267, 1.5703125, _1231)));
                        float _2166;
                        if ((_1658 & 1) == 0)
                        {
                            float _1674 = _1668 * _1668;
                            _2166 = fma(_1668 * _1674, fma(_1674, fma(_1674, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1668);
                        }
                        else
                        {
                            float _1692 = _1668 * _1668;
                            _2166 = fma(_1692 * _1692, fma(_1692, fma(_1692, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1692, 1.0));
                        }
                        float _2167;
                        if (_1658 >= 2)
                        {
                            _2167 = -_2166;
                        }
                        else
                        {
                            _2167 = _2166;
                        }
                        _2172 = _2167;
                        break;
                    }
                    case 26:
                    {
                        float _1750 = floor(fma(_1231, 0.636619746685028076171875, 0.5));
                        int _1753 = int(_1750) & 3;
                        float _2263 = -_1750;
                        float _1763 = fma(_2263, 7.5497901264043321134522557258606e-08, fma(_2263, 0.0004837512969970703125, fma(_2263, 1.5703125, _1231)));
                        float _2164;
                        if ((_1753 & 1) == 0)
                        {
                            float _1769 = _1763 * _1763;
                            _2164 = fma(_1769 * _1769, fma(_1769, fma(_1769, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1769, 1.0));
                        }
                        else
                        {
                            float _1789 = _1763 * _1763;
                            _2164 = fma(_1763 * _1789, fma(_1789, fma(_1789, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1763);
                        }
                        float _2165;
                        if ((_1753 == 1) || (_1753 == 2))
                        {
                            _2165 = -_2164;
                        }
                        else
                        {
                            _2165 = _2164;
                        }
                        _2172 = _2165;
                        break;
                    }
                    case 27:
                    {
                        float _1810 = exp(-abs(_1231));
                        float _2163;
                        if (_1810 < 0.015625)
                        {
                            float _2260 = -_1810;
                            _2163 = _1810 * fma(_2260, fma(_2260, fma(_2260, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2163 = log(1.0 + _1810);
                        }
                        _2172 = fast::max(_1231, 0.0) + _2163;
                        break;
                    }
                    case 29:
                    {
                        _2172 = rint(_1231);
                        break;
                    }
                    case 30:
                    {
                        _2172 = sign(_1231);
                        break;
                    }
                    case 31:
                    {
                        _2172 = _1231 / (1.0 + abs(_1231));
                        break;
                    }
                    case 32:
                    {
                        float _1843 = exp(-abs(_1231));
                        float _2161;
                        if (_1843 < 0.015625)
                        {
                            float _2257 = -_1843;
                            _2161 = _1843 * fma(_2257, fma(_2257, fma(_2257, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2161 = log(1.0 + _1843);
                        }
                        float _1867 = fast::max(_1231, 0.0) + _2161;
                        float _2162;
                        do
                        {
                            float _1877 = abs(_1867);
                            if (_1877 < 0.0625)
                            {
                                float _1883 = _1867 * _1867;
                                _2162 = _1867 * fma(_1883, fma(_1883, fma(_1883, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1898 = exp((-2.0) * _1877);
                            _2162 = (sign(_1867) * (1.0 - _1898)) / (1.0 + _1898);
                            break;
                        } while(false);
                        _2172 = _1231 * _2162;
                        break;
                    }
                    case 33:
                    {
                        float _2160;
                        if (_1231 < 0.0)
                        {
                            _2160 = _650._m18 * (exp(_1231) - 1.0);
                        }
                        else
                        {
                            _2160 = _1231;
                        }
                        _2172 = _2160;
                        break;
                    }
                    case 34:
                    {
                        _2172 = fast::max(_1231, 0.0) + fast::min(0.0, _650._m18 * (exp(fast::min(_1231, 0.0) / _650._m18) - 1.0));
                        break;
                    }
                    case 35:
                    {
                        float _2159;
                        if (_1231 <= 0.0)
                        {
                            _2159 = _650._m18 * (exp(_1231) - 1.0);
                        }
                        else
                        {
                            _2159 = _1231;
                        }
                        _2172 = _650._m19 * _2159;
                        break;
                    }
                    case 36:
                    {
                        _2172 = (_1231 > _650._m18) ? _1231 : 0.0;
                        break;
                    }
                    case 37:
                    {
                        float _2158;
                        if (_1231 < (-_650._m19))
                        {
                            _2158 = _1231 + _650._m18;
                        }
                        else
                        {
                            float _2157;
                            if (_1231 > _650._m19)
                            {
                                _2157 = _1231 - _650._m18;
                            }
                            else
                            {
                                _2157 = 0.0;
                            }
                            _2158 = _2157;
                        }
                        _2172 = _2158;
                        break;
                    }
                    case 38:
                    {
                        float _1964 = floor(fma(_1231, 0.636619746685028076171875, 0.5));
                        int _1967 = int(_1964) & 3;
                        float _2252 = -_1964;
                        float _1977 = fma(_2252, 7.5497901264043321134522557258606e-08, fma(_2252, 0.0004837512969970703125, fma(_2252, 1.5703125, _1231)));
                        bool _1940 = (_1967 & 1) == 0;
                        float _2153;
                        if (_1940)
                        {
                            float _1983 = _1977 * _1977;
                            _2153 = fma(_1977 * _1983, fma(_1983, fma(_1983, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1977);
                        }
                        else
                        {
                            float _2001 = _1977 * _1977;
                            _2153 = fma(_2001 * _2001, fma(_2001, fma(_2001, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2001, 1.0));
                        }
                        float _2154;
                        if (_1967 >= 2)
                        {
                            _2154 = -_2153;
                        }
                        else
                        {
                            _2154 = _2153;
                        }
                        float _2155;
                        if (_1940)
                        {
                            float _2078 = _1977 * _1977;
                            _2155 = fma(_2078 * _2078, fma(_2078, fma(_2078, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2078, 1.0));
                        }
                        else
                        {
                            float _2098 = _1977 * _1977;
                            _2155 = fma(_1977 * _2098, fma(_2098, fma(_2098, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1977);
                        }
                        float _2156;
                        if ((_1967 == 1) || (_1967 == 2))
                        {
                            _2156 = -_2155;
                        }
                        else
                        {
                            _2156 = _2155;
                        }
                        _2172 = _2154 / _2156;
                        break;
                    }
                    case 39:
                    {
                        float _2152;
                        do
                        {
                            if (abs(_1231) < 0.0625)
                            {
                                float _2124 = _1231 * _1231;
                                _2152 = _1231 * fma(_2124, fma(_2124, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                                break;
                            }
                            float _2135 = exp(_1231);
                            _2152 = 0.5 * (_2135 - (1.0 / _2135));
                            break;
                        } while(false);
                        _2172 = _2152;
                        break;
                    }
                    case 40:
                    {
                        _2172 = 0.5 * (exp(_1231) + exp(-_1231));
                        break;
                    }
                    default:
                    {
                        _2172 = _1231;
                        break;
                    }
                }
                _1222._m0[_1196] = _2172;
            }
        }
    }
}

