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
constant uint _875 = (_712 + 1u);
constant uint _876 = (_857 * _875);

struct _895
{
    half _m0[1];
};

constant uint _914 = (_639 * _710);

struct _942
{
    int _m0[1];
};

struct _985
{
    half _m0[1];
};

constant uint _997 = (_718 + 1u);
constant uint _998 = (_857 * _997);
constant uint _1009 = (_914 / _718);
constant uint _1020 = (_711 * _717);
constant uint _1022 = (_711 * _717);
constant uint _1135 = (_711 * _717);

struct _1194
{
    half _m0[1];
};

struct _1245
{
    float _m0[1];
};

struct _1263
{
    half _m0[1];
};

kernel void conv2d_hf(const device _985& _987 [[buffer(0)]], const device _895& _897 [[buffer(1)]], const device _1194& _1196 [[buffer(2)]], device _1263& _1265 [[buffer(3)]], device _1245& _1247 [[buffer(4)]], const device _942& _944 [[buffer(5)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup half _879[_876];
    threadgroup half _1001[_998];
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
    uint _2187;
    if (_731)
    {
        _2187 = _726 / _695;
    }
    else
    {
        _2187 = 0u;
    }
    uint _2188;
    if (_731)
    {
        _2188 = _726 % _695;
    }
    else
    {
        _2188 = 0u;
    }
    int _767 = (int(_2188 / _650._m6) * int(_650._m10)) - int(_650._m12);
    int _783 = (int(_2188 % _650._m6) * int(_650._m11)) - int(_650._m13);
    int _799 = int(_650._m3);
    int _803 = (int(((_2187 * _650._m1) + (_655 * _675)) * (_650._m2 * _650._m3)) + (_767 * _799)) + _783;
    uint _807 = _655 * _669;
    spvUnsafeArray<float, _819> _822;
    for (uint _2189 = 0u; _2189 < _817; )
    {
        _822[_2189] = 0.0;
        _2189++;
        continue;
    }
    uint _835 = min(_687, ((_661 + 1u) * _650._m21));
    uint _840 = _661 * _650._m21;
    spvUnsafeArray<half, _1022> _1025;
    spvUnsafeArray<half, _711> _1050;
    spvUnsafeArray<half, _717> _1074;
    for (uint _2190 = _840; _2190 < _835; _2190 += _857)
    {
        for (uint _2240 = _642; _2240 < _858; _2240 += _914)
        {
            uint _862 = _2240 % _857;
            uint _865 = _2240 / _857;
            uint _869 = _713 + _865;
            uint _873 = _2190 + _862;
            float _2266;
            if ((_869 < _669) && (_873 < _835))
            {
                _2266 = float(_897._m0[(_687 * (_807 + _869)) + _873]);
            }
            else
            {
                _2266 = 0.0;
            }
            _879[(_862 * _875) + _865] = half(_2266);
        }
        uint _919 = _642 / _718;
        for (uint _2241 = _919; _2241 < _857; _2241 += _1009)
        {
            uint _930 = _2190 + _2241;
            float _2262;
            if (_731 && (_930 < _835))
            {
                uint _947 = 3u * _930;
                int _952 = _767 + _944._m0[_947 + 1u];
                int _960 = _783 + _944._m0[_947 + 2u];
                bool _962 = _952 >= 0;
                bool _970;
                if (_962)
                {
                    _970 = _952 < int(_650._m2);
                }
                else
                {
                    _970 = _962;
                }
                bool _973 = _970 && (_960 >= 0);
                bool _981;
                if (_973)
                {
                    _981 = _960 < _799;
                }
                else
                {
                    _981 = _973;
                }
                float _2263;
                if (_981)
                {
                    _2263 = float(_987._m0[_803 + _944._m0[_947]]);
                }
                else
                {
                    _2263 = 0.0;
                }
                _2262 = _2263;
            }
            else
            {
                _2262 = 0.0;
            }
            _1001[(_2241 * _997) + _722] = half(_2262);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _2242 = 0u; _2242 < _1020; )
        {
            _1025[_2242] = half(0.0);
            _2242++;
            continue;
        }
        uint _2243;
        _2243 = 0u;
        for (; _2243 < _857; _2243++)
        {
            for (uint _2250 = 0u; _2250 < _711; )
            {
                _1050[_2250] = _879[((_2243 * _875) + gl_LocalInvocationID.y) + (_2250 * _710)];
                _2250++;
                continue;
            }
            for (uint _2251 = 0u; _2251 < _717; )
            {
                _1074[_2251] = _1001[((_2243 * _997) + gl_LocalInvocationID.x) + (_2251 * _639)];
                _2251++;
                continue;
            }
            uint _2252;
            _2252 = 0u;
            for (; _2252 < _711; _2252++)
            {
                for (uint _2256 = 0u; _2256 < _717; )
                {
                    uint _1107 = (_2252 * _717) + _2256;
                    _1025[_1107] = fma(_1050[_2252], _1074[_2256], _1025[_1107]);
                    _2256++;
                    continue;
                }
            }
        }
        for (uint _2244 = 0u; _2244 < _1135; )
        {
            _822[_2244] += float(_1025[_2244]);
            _2244++;
            continue;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1157 = (_650._m0 * _650._m4) * _695;
    for (uint _2191 = 0u; _2191 < _711; _2191++)
    {
        uint _1172 = (_713 + gl_LocalInvocationID.y) + (_2191 * _710);
        if (_1172 >= _669)
        {
            continue;
        }
        uint _1184 = _807 + _1172;
        float _2192;
        if (_650._m17 != 0u)
        {
            _2192 = float(_1196._m0[_1184]);
        }
        else
        {
            _2192 = 0.0;
        }
        for (uint _2193 = 0u; _2193 < _717; _2193++)
        {
            uint _1217 = (_719 + gl_LocalInvocationID.x) + (_2193 * _639);
            if (_1217 >= _700)
            {
                continue;
            }
            uint _1238 = ((((_1217 / _695) * _650._m4) + _1184) * _695) + (_1217 % _695);
            if (_650._m20 > 1u)
            {
                _1247._m0[(_661 * _1157) + _1238] = _822[(_2191 * _717) + _2193];
            }
            else
            {
                float _1274 = _822[(_2191 * _717) + _2193] + _2192;
                float _2216;
                switch (_650._m16)
                {
                    case 1:
                    {
                        _2216 = fast::max(_1274, 0.0);
                        break;
                    }
                    case 2:
                    {
                        _2216 = fast::min(fast::max(_1274, _650._m18), _650._m19);
                        break;
                    }
                    case 3:
                    {
                        float _2213;
                        if (_1274 >= 0.0)
                        {
                            _2213 = _1274;
                        }
                        else
                        {
                            _2213 = _1274 * _650._m18;
                        }
                        _2216 = _2213;
                        break;
                    }
                    case 4:
                    {
                        _2216 = 1.0 / (1.0 + exp(-_1274));
                        break;
                    }
                    case 5:
                    {
                        _2216 = _1274 * (1.0 / (1.0 + exp(-_1274)));
                        break;
                    }
                    case 6:
                    {
                        float _1375 = _1274 * 0.707106769084930419921875;
                        float _1552 = abs(_1375);
                        float _1555 = fma(0.3275910913944244384765625, _1552, 1.0);
                        float _1556 = 1.0 / _1555;
                        _2216 = (0.5 * _1274) * fma(sign(_1375), fma(-(fma(fma(fma((1.0614054203033447265625 / _1555) - 1.45315206050872802734375, _1556, 1.42141377925872802734375), _1556, -0.284496724605560302734375), _1556, 0.254829585552215576171875) * _1556), exp((-_1552) * _1552), 1.0), 1.0);
                        break;
                    }
                    case 7:
                    {
                        float _2212;
                        do
                        {
                            float _1591 = abs(_1274);
                            if (_1591 < 0.0625)
                            {
                                float _1597 = _1274 * _1274;
                                _2212 = _1274 * fma(_1597, fma(_1597, fma(_1597, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1612 = exp((-2.0) * _1591);
                            _2212 = (sign(_1274) * (1.0 - _1612)) / (1.0 + _1612);
                            break;
                        } while(false);
                        _2216 = _2212;
                        break;
                    }
                    case 8:
                    {
                        _2216 = fast::clamp(fma(_1274, _650._m18, _650._m19), 0.0, 1.0);
                        break;
                    }
                    case 9:
                    {
                        _2216 = _1274 * fast::clamp(fma(_1274, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                        break;
                    }
                    case 16:
                    {
                        _2216 = exp(_1274);
                        break;
                    }
                    case 17:
                    {
                        _2216 = log(_1274);
                        break;
                    }
                    case 18:
                    {
                        _2216 = sqrt(_1274);
                        break;
                    }
                    case 19:
                    {
                        _2216 = -_1274;
                        break;
                    }
                    case 20:
                    {
                        _2216 = abs(_1274);
                        break;
                    }
                    case 21:
                    {
                        _2216 = 1.0 / _1274;
                        break;
                    }
                    case 22:
                    {
                        float _1629 = abs(_1274);
                        float _1632 = fma(0.3275910913944244384765625, _1629, 1.0);
                        float _1633 = 1.0 / _1632;
                        _2216 = sign(_1274) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1632) - 1.45315206050872802734375, _1633, 1.42141377925872802734375), _1633, -0.284496724605560302734375), _1633, 0.254829585552215576171875) * _1633), exp((-_1629) * _1629), 1.0);
                        break;
                    }
                    case 23:
                    {
                        _2216 = floor(_1274);
                        break;
                    }
                    case 24:
                    {
                        _2216 = ceil(_1274);
                        break;
                    }
                    case 25:
                    {
                        float _1699 = floor(fma(_1274, 0.636619746685028076171875, 0.5));
                        int _1702 = int(_1699) & 3;
                        float _2315 = -_1699;
                        float _1712 = fma(_2315, 7.5497901264043321134522557258606e-08, fma(_2315, 0.0004837512969970703125, fma(_2315, 1.5703125, _1274)));
                        float _2210;
                        if ((_1702 & 1) == 0)
                        {
                            float _1718 = _1712 * _1712;
                            _2210 = fma(_1712 * _1718, fma(_1718, fma(_1718, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1712);
                        }
                        else
                        {
                            float _1736 = _1712 * _1712;
                            _2210 = fma(_1736 * _1736, fma(_1736, fma(_1736, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1736, 1.0));
                        }
                        float _2211;
                        if (_1702 >= 2)
                        {
                            _2211 = -_2210;
                        }
                        else
                        {
                            _2211 = _2210;
                        }
                        _2216 = _2211;
                        break;
                    }
                    case 26:
                    {
                        float _1794 = floor(fma(_1274, 0.636619746685028076171875, 0.5));
                        int _1797 = int(_1794) & 3;
                        float _2311 = -_1794;
                        float _1807 = fma(_2311, 7.5497901264043321134522557258606e-08, fma(_2311, 0.0004837512969970703125, fma(_2311, 1.5703125, _1274)));
                        float _2208;
                        if ((_1797 & 1) == 0)
                        {
                            float _1813 = _1807 * _1807;
                            _2208 = fma(_1813 * _1813, fma(_1813, fma(_1813, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1813, 1.0));
                        }
                        else
                        {
                            float _1833 = _1807 * _1807;
                            _2208 = fma(_1807 * _1833, fma(_1833, fma(_1833, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1807);
                        }
                        float _2209;
                        if ((_1797 == 1) || (_1797 == 2))
                        {
                            _2209 = -_2208;
                        }
                        else
                        {
                            _2209 = _2208;
                        }
                        _2216 = _2209;
                        break;
                    }
                    case 27:
                    {
                        float _1854 = exp(-abs(_1274));
                        float _2207;
                        if (_1854 < 0.015625)
                        {
                            float _2308 = -_1854;
                            _2207 = _1854 * fma(_2308, fma(_2308, fma(_2308, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2207 = log(1.0 + _1854);
                        }
                        _2216 = fast::max(_1274, 0.0) + _2207;
                        break;
                    }
                    case 29:
                    {
                        _2216 = rint(_1274);
                        break;
                    }
                    case 30:
                    {
                        _2216 = sign(_1274);
                        break;
                    }
                    case 31:
                    {
                        _2216 = _1274 / (1.0 + abs(_1274));
                        break;
                    }
                    case 32:
                    {
                        float _1887 = exp(-abs(_1274));
                        float _2205;
                        if (_1887 < 0.015625)
                        {
                            float _2305 = -_1887;
                            _2205 = _1887 * fma(_2305, fma(_2305, fma(_2305, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2205 = log(1.0 + _1887);
                        }
                        float _1911 = fast::max(_1274, 0.0) + _2205;
                        float _2206;
                        do
                        {
                            float _1921 = abs(_1911);
                            if (_1921 < 0.0625)
                            {
                                float _1927 = _1911 * _1911;
                                _2206 = _1911 * fma(_1927, fma(_1927, fma(_1927, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1942 = exp((-2.0) * _1921);
                            _2206 = (sign(_1911) * (1.0 - _1942)) / (1.0 + _1942);
                            break;
                        } while(false);
                        _2216 = _1274 * _2206;
                        break;
                    }
                    case 33:
                    {
                        float _2204;
                        if (_1274 < 0.0)
                        {
                            _2204 = _650._m18 * (exp(_1274) - 1.0);
                        }
                        else
                        {
                            _2204 = _1274;
                        }
                        _2216 = _2204;
                        break;
                    }
                    case 34:
                    {
                        _2216 = fast::max(_1274, 0.0) + fast::min(0.0, _650._m18 * (exp(fast::min(_1274, 0.0) / _650._m18) - 1.0));
                        break;
                    }
                    case 35:
                    {
                        float _2203;
                        if (_1274 <= 0.0)
                        {
                            _2203 = _650._m18 * (exp(_1274) - 1.0);
                        }
                        else
                        {
                            _2203 = _1274;
                        }
                        _2216 = _650._m19 * _2203;
                        break;
                    }
                    case 36:
                    {
                        _2216 = (_1274 > _650._m18) ? _1274 : 0.0;
                        break;
                    }
                    case 37:
                    {
                        float _2202;
                        if (_1274 < (-_650._m19))
                        {
                            _2202 = _1274 + _650._m18;
                        }
                        else
                        {
                            float _2201;
                            if (_1274 > _650._m19)
                            {
                                _2201 = _1274 - _650._m18;
                            }
                            else
                            {
                                _2201 = 0.0;
                            }
                            _2202 = _2201;
                        }
                        _2216 = _2202;
                        break;
                    }
                    case 38:
                    {
                        float _2008 = floor(fma(_1274, 0.636619746685028076171875, 0.5));
                        int _2011 = int(_2008) & 3;
                        float _2300 = -_2008;
                        float _2021 = fma(_2300, 7.5497901264043321134522557258606e-08, fma(_2300, 0.0004837512969970703125, fma(_2300, 1.5703125, _1274)));
                        bool _1984 = (_2011 & 1) == 0;
                        float _2197;
                        if (_1984)
                        {
                            float _2027 = _2021 * _2021;
                            _2197 = fma(_2021 * _2027, fma(_2027, fma(_2027, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _2021);
                        }
                        else
                        {
                            float _2045 = _2021 * _2021;
                            _2197 = fma(_2045 * _2045, fma(_2045, fma(_2045, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2045, 1.0));
                        }
                        float _2198;
                        if (_2011 >= 2)
                        {
                            _2198 = -_2197;
                        }
                        else
                        {
                            _2198 = _2197;
                        }
                        float _2199;
                        if (_1984)
                        {
                            float _2122 = _2021 * _2021;
                            _2199 = fma(_2122 * _2122, fma(_2122, fma(_2122, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2122, 1.0));
                        }
                        else
                        {
                            float _2142 = _2021 * _2021;
                            _2199 = fma(_2021 * _2142, fma(_2142, fma(_2142, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _2021);
                        }
                        float _2200;
                        if ((_2011 == 1) || (_2011 == 2))
                        {
                            _2200 = -_2199;
                        }
                        else
                        {
                            _2200 = _2199;
                        }
                        _2216 = _2198 / _2200;
                        break;
                    }
                    case 39:
                    {
                        float _2196;
                        do
                        {
                            if (abs(_1274) < 0.0625)
                            {
                                float _2168 = _1274 * _1274;
                                _2196 = _1274 * fma(_2168, fma(_2168, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                                break;
                            }
                            float _2179 = exp(_1274);
                            _2196 = 0.5 * (_2179 - (1.0 / _2179));
                            break;
                        } while(false);
                        _2216 = _2196;
                        break;
                    }
                    case 40:
                    {
                        _2216 = 0.5 * (exp(_1274) + exp(-_1274));
                        break;
                    }
                    default:
                    {
                        _2216 = _1274;
                        break;
                    }
                }
                _1265._m0[_1238] = half(_2216);
            }
        }
    }
}

