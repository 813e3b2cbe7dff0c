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

struct _1157
{
    half _m0[1];
};

struct _1208
{
    float _m0[1];
};

struct _1226
{
    half _m0[1];
};

kernel void conv2d_h(const device _985& _987 [[buffer(0)]], const device _895& _897 [[buffer(1)]], const device _1157& _1159 [[buffer(2)]], device _1226& _1228 [[buffer(3)]], device _1208& _1210 [[buffer(4)]], const device _942& _944 [[buffer(5)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
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
    uint _2150;
    if (_731)
    {
        _2150 = _726 / _695;
    }
    else
    {
        _2150 = 0u;
    }
    uint _2151;
    if (_731)
    {
        _2151 = _726 % _695;
    }
    else
    {
        _2151 = 0u;
    }
    int _767 = (int(_2151 / _650._m6) * int(_650._m10)) - int(_650._m12);
    int _783 = (int(_2151 % _650._m6) * int(_650._m11)) - int(_650._m13);
    int _799 = int(_650._m3);
    int _803 = (int(((_2150 * _650._m1) + (_655 * _675)) * (_650._m2 * _650._m3)) + (_767 * _799)) + _783;
    uint _807 = _655 * _669;
    spvUnsafeArray<float, _819> _822;
    for (uint _2152 = 0u; _2152 < _817; )
    {
        _822[_2152] = 0.0;
        _2152++;
        continue;
    }
    uint _835 = min(_687, ((_661 + 1u) * _650._m21));
    uint _840 = _661 * _650._m21;
    spvUnsafeArray<float, _711> _1031;
    spvUnsafeArray<float, _717> _1056;
    for (uint _2153 = _840; _2153 < _835; _2153 += _857)
    {
        for (uint _2203 = _642; _2203 < _858; _2203 += _914)
        {
            uint _862 = _2203 % _857;
            uint _865 = _2203 / _857;
            uint _869 = _713 + _865;
            uint _873 = _2153 + _862;
            float _2225;
            if ((_869 < _669) && (_873 < _835))
            {
                _2225 = float(_897._m0[(_687 * (_807 + _869)) + _873]);
            }
            else
            {
                _2225 = 0.0;
            }
            _879[(_862 * _875) + _865] = half(_2225);
        }
        uint _919 = _642 / _718;
        for (uint _2204 = _919; _2204 < _857; _2204 += _1009)
        {
            uint _930 = _2153 + _2204;
            float _2221;
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
                float _2222;
                if (_981)
                {
                    _2222 = float(_987._m0[_803 + _944._m0[_947]]);
                }
                else
                {
                    _2222 = 0.0;
                }
                _2221 = _2222;
            }
            else
            {
                _2221 = 0.0;
            }
            _1001[(_2204 * _997) + _722] = half(_2221);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint _2205;
        _2205 = 0u;
        for (; _2205 < _857; _2205++)
        {
            for (uint _2209 = 0u; _2209 < _711; )
            {
                _1031[_2209] = float(_879[((_2205 * _875) + gl_LocalInvocationID.y) + (_2209 * _710)]);
                _2209++;
                continue;
            }
            for (uint _2210 = 0u; _2210 < _717; )
            {
                _1056[_2210] = float(_1001[((_2205 * _997) + gl_LocalInvocationID.x) + (_2210 * _639)]);
                _2210++;
                continue;
            }
            uint _2211;
            _2211 = 0u;
            for (; _2211 < _711; _2211++)
            {
                for (uint _2215 = 0u; _2215 < _717; )
                {
                    uint _1090 = (_2211 * _717) + _2215;
                    _822[_1090] = fma(_1031[_2211], _1056[_2215], _822[_1090]);
                    _2215++;
                    continue;
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1120 = (_650._m0 * _650._m4) * _695;
    for (uint _2154 = 0u; _2154 < _711; _2154++)
    {
        uint _1135 = (_713 + gl_LocalInvocationID.y) + (_2154 * _710);
        if (_1135 >= _669)
        {
            continue;
        }
        uint _1147 = _807 + _1135;
        float _2155;
        if (_650._m17 != 0u)
        {
            _2155 = float(_1159._m0[_1147]);
        }
        else
        {
            _2155 = 0.0;
        }
        for (uint _2156 = 0u; _2156 < _717; _2156++)
        {
            uint _1180 = (_719 + gl_LocalInvocationID.x) + (_2156 * _639);
            if (_1180 >= _700)
            {
                continue;
            }
            uint _1201 = ((((_1180 / _695) * _650._m4) + _1147) * _695) + (_1180 % _695);
            if (_650._m20 > 1u)
            {
                _1210._m0[(_661 * _1120) + _1201] = _822[(_2154 * _717) + _2156];
            }
            else
            {
                float _1237 = _822[(_2154 * _717) + _2156] + _2155;
                float _2179;
                switch (_650._m16)
                {
                    case 1:
                    {
                        _2179 = fast::max(_1237, 0.0);
                        break;
                    }
                    case 2:
                    {
                        _2179 = fast::min(fast::max(_1237, _650._m18), _650._m19);
                        break;
                    }
                    case 3:
                    {
                        float _2176;
                        if (_1237 >= 0.0)
                        {
                            _2176 = _1237;
                        }
                        else
                        {
                            _2176 = _1237 * _650._m18;
                        }
                        _2179 = _2176;
                        break;
                    }
                    case 4:
                    {
                        _2179 = 1.0 / (1.0 + exp(-_1237));
                        break;
                    }
                    case 5:
                    {
                        _2179 = _1237 * (1.0 / (1.0 + exp(-_1237)));
                        break;
                    }
                    case 6:
                    {
                        float _1338 = _1237 * 0.707106769084930419921875;
                        float _1515 = abs(_1338);
                        float _1518 = fma(0.3275910913944244384765625, _1515, 1.0);
                        float _1519 = 1.0 / _1518;
                        _2179 = (0.5 * _1237) * fma(sign(_1338), fma(-(fma(fma(fma((1.0614054203033447265625 / _1518) - 1.45315206050872802734375, _1519, 1.42141377925872802734375), _1519, -0.284496724605560302734375), _1519, 0.254829585552215576171875) * _1519), exp((-_1515) * _1515), 1.0), 1.0);
                        break;
                    }
                    case 7:
                    {
                        float _2175;
                        do
                        {
                            float _1554 = abs(_1237);
                            if (_1554 < 0.0625)
                            {
                                float _1560 = _1237 * _1237;
                                _2175 = _1237 * fma(_1560, fma(_1560, fma(_1560, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1575 = exp((-2.0) * _1554);
                            _2175 = (sign(_1237) * (1.0 - _1575)) / (1.0 + _1575);
                            break;
                        } while(false);
                        _2179 = _2175;
                        break;
                    }
                    case 8:
                    {
                        _2179 = fast::clamp(fma(_1237, _650._m18, _650._m19), 0.0, 1.0);
                        break;
                    }
                    case 9:
                    {
                        _2179 = _1237 * fast::clamp(fma(_1237, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                        break;
                    }
                    case 16:
                    {
                        _2179 = exp(_1237);
                        break;
                    }
                    case 17:
                    {
                        _2179 = log(_1237);
                        break;
                    }
                    case 18:
                    {
                        _2179 = sqrt(_1237);
                        break;
                    }
                    case 19:
                    {
                        _2179 = -_1237;
                        break;
                    }
                    case 20:
                    {
                        _2179 = abs(_1237);
                        break;
                    }
                    case 21:
                    {
                        _2179 = 1.0 / _1237;
                        break;
                    }
                    case 22:
                    {
                        float _1592 = abs(_1237);
                        float _1595 = fma(0.3275910913944244384765625, _1592, 1.0);
                        float _1596 = 1.0 / _1595;
                        _2179 = sign(_1237) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1595) - 1.45315206050872802734375, _1596, 1.42141377925872802734375), _1596, -0.284496724605560302734375), _1596, 0.254829585552215576171875) * _1596), exp((-_1592) * _1592), 1.0);
                        break;
                    }
                    case 23:
                    {
                        _2179 = floor(_1237);
                        break;
                    }
                    case 24:
                    {
                        _2179 = ceil(_1237);
                        break;
                    }
                    case 25:
                    {
                        float _1662 = floor(fma(_1237, 0.636619746685028076171875, 0.5));
                        int _1665 = int(_1662) & 3;
                        float _2274 = -_1662;
                        float _1675 = fma(_2274, 7.5497901264043321134522557258606e-08, fma(_2274, 0.0004837512969970703125, fma(_2274, 1.5703125, _1237)));
                        float _2173;
                        if ((_1665 & 1) == 0)
                        {
                            float _1681 = _1675 * _1675;
                            _2173 = fma(_1675 * _1681, fma(_1681, fma(_1681, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1675);
                        }
                        else
                        {
                            float _1699 = _1675 * _1675;
                            _2173 = fma(_1699 * _1699, fma(_1699, fma(_1699, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1699, 1.0));
                        }
                        float _2174;
                        if (_1665 >= 2)
                        {
                            _2174 = -_2173;
                        }
                        else
                        {
                            _2174 = _2173;
                        }
                        _2179 = _2174;
                        break;
                    }
                    case 26:
                    {
                        float _1757 = floor(fma(_1237, 0.636619746685028076171875, 0.5));
                        int _1760 = int(_1757) & 3;
                        float _2270 = -_1757;
                        float _1770 = fma(_2270, 7.5497901264043321134522557258606e-08, fma(_2270, 0.0004837512969970703125, fma(_2270, 1.5703125, _1237)));
                        float _2171;
                        if ((_1760 & 1) == 0)
                        {
                            float _1776 = _1770 * _1770;
                            _2171 = fma(_1776 * _1776, fma(_1776, fma(_1776, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1776, 1.0));
                        }
                        else
                        {
                            float _1796 = _1770 * _1770;
                            _2171 = fma(_1770 * _1796, fma(_1796, fma(_1796, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1770);
                        }
                        float _2172;
                        if ((_1760 == 1) || (_1760 == 2))
                        {
                            _2172 = -_2171;
                        }
                        else
                        {
                            _2172 = _2171;
                        }
                        _2179 = _2172;
                        break;
                    }
                    case 27:
                    {
                        float _1817 = exp(-abs(_1237));
                        float _2170;
                        if (_1817 < 0.015625)
                        {
                            float _2267 = -_1817;
                            _2170 = _1817 * fma(_2267, fma(_2267, fma(_2267, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2170 = log(1.0 + _1817);
                        }
                        _2179 = fast::max(_1237, 0.0) + _2170;
                        break;
                    }
                    case 29:
                    {
                        _2179 = rint(_1237);
                        break;
                    }
                    case 30:
                    {
                        _2179 = sign(_1237);
                        break;
                    }
                    case 31:
                    {
                        _2179 = _1237 / (1.0 + abs(_1237));
                        break;
                    }
                    case 32:
                    {
                        float _1850 = exp(-abs(_1237));
                        float _2168;
                        if (_1850 < 0.015625)
                        {
                            float _2264 = -_1850;
                            _2168 = _1850 * fma(_2264, fma(_2264, fma(_2264, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                        }
                        else
                        {
                            _2168 = log(1.0 + _1850);
                        }
                        float _1874 = fast::max(_1237, 0.0) + _2168;
                        float _2169;
                        do
                        {
                            float _1884 = abs(_1874);
                            if (_1884 < 0.0625)
                            {
                                float _1890 = _1874 * _1874;
                                _2169 = _1874 * fma(_1890, fma(_1890, fma(_1890, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                                break;
                            }
                            float _1905 = exp((-2.0) * _1884);
                            _2169 = (sign(_1874) * (1.0 - _1905)) / (1.0 + _1905);
                            break;
                        } while(false);
                        _2179 = _1237 * _2169;
                        break;
                    }
                    case 33:
                    {
                        float _2167;
                        if (_1237 < 0.0)
                        {
                            _2167 = _650._m18 * (exp(_1237) - 1.0);
                        }
                        else
                        {
                            _2167 = _1237;
                        }
                        _2179 = _2167;
                        break;
                    }
                    case 34:
                    {
                        _2179 = fast::max(_1237, 0.0) + fast::min(0.0, _650._m18 * (exp(fast::min(_1237, 0.0) / _650._m18) - 1.0));
                        break;
                    }
                    case 35:
                    {
                        float _2166;
                        if (_1237 <= 0.0)
                        {
                            _2166 = _650._m18 * (exp(_1237) - 1.0);
                        }
                        else
                        {
                            _2166 = _1237;
                        }
                        _2179 = _650._m19 * _2166;
                        break;
                    }
                    case 36:
                    {
                        _2179 = (_1237 > _650._m18) ? _1237 : 0.0;
                        break;
                    }
                    case 37:
                    {
                        float _2165;
                        if (_1237 < (-_650._m19))
                        {
                            _2165 = _1237 + _650._m18;
                        }
                        else
                        {
                            float _2164;
                            if (_1237 > _650._m19)
                            {
                                _2164 = _1237 - _650._m18;
                            }
                            else
                            {
                                _2164 = 0.0;
                            }
                            _2165 = _2164;
                        }
                        _2179 = _2165;
                        break;
                    }
                    case 38:
                    {
                        float _1971 = floor(fma(_1237, 0.636619746685028076171875, 0.5));
                        int _1974 = int(_1971) & 3;
                        float _2259 = -_1971;
                        float _1984 = fma(_2259, 7.5497901264043321134522557258606e-08, fma(_2259, 0.0004837512969970703125, fma(_2259, 1.5703125, _1237)));
                        bool _1947 = (_1974 & 1) == 0;
                        float _2160;
                        if (_1947)
                        {
                            float _1990 = _1984 * _1984;
                            _2160 = fma(_1984 * _1990, fma(_1990, fma(_1990, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1984);
                        }
                        else
                        {
                            float _2008 = _1984 * _1984;
                            _2160 = fma(_2008 * _2008, fma(_2008, fma(_2008, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2008, 1.0));
                        }
                        float _2161;
                        if (_1974 >= 2)
                        {
                            _2161 = -_2160;
                        }
                        else
                        {
                            _2161 = _2160;
                        }
                        float _2162;
                        if (_1947)
                        {
                            float _2085 = _1984 * _1984;
                            _2162 = fma(_2085 * _2085, fma(_2085, fma(_2085, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2085, 1.0));
                        }
                        else
                        {
                            float _2105 = _1984 * _1984;
                            _2162 = fma(_1984 * _2105, fma(_2105, fma(_2105, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1984);
                        }
                        float _2163;
                        if ((_1974 == 1) || (_1974 == 2))
                        {
                            _2163 = -_2162;
                        }
                        else
                        {
                            _2163 = _2162;
                        }
                        _2179 = _2161 / _2163;
                        break;
                    }
                    case 39:
                    {
                        float _2159;
                        do
                        {
                            if (abs(_1237) < 0.0625)
                            {
                                float _2131 = _1237 * _1237;
                                _2159 = _1237 * fma(_2131, fma(_2131, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                                break;
                            }
                            float _2142 = exp(_1237);
                            _2159 = 0.5 * (_2142 - (1.0 / _2142));
                            break;
                        } while(false);
                        _2179 = _2159;
                        break;
                    }
                    case 40:
                    {
                        _2179 = 0.5 * (exp(_1237) + exp(-_1237));
                        break;
                    }
                    default:
                    {
                        _2179 = _1237;
                        break;
                    }
                }
                _1228._m0[_1201] = half(_2179);
            }
        }
    }
}

