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

constant uint _924 = (_689 * _695);
constant uint _926 = (_689 * _695);
constant uint _1039 = (_689 * _695);

struct _1144
{
    half _m0[1];
};

struct _1167
{
    half _m0[1];
};

kernel void gemm_hf(const device _796& _798 [[buffer(0)]], const device _892& _894 [[buffer(1)]], const device _1144& _1146 [[buffer(2)]], device _1167& _1169 [[buffer(3)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
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
    for (uint _2091 = 0u; _2091 < _705; )
    {
        _710[_2091] = 0.0;
        _2091++;
        continue;
    }
    spvUnsafeArray<half, _926> _929;
    spvUnsafeArray<half, _689> _954;
    spvUnsafeArray<half, _695> _978;
    for (uint _2092 = 0u; _2092 < _650._m2; _2092 += _733)
    {
        for (uint _2141 = _642; _2141 < _734; _2141 += _820)
        {
            bool _740 = _650._m5 == 1u;
            uint _2168;
            if (_740)
            {
                _2168 = _2141 % _733;
            }
            else
            {
                _2168 = _2141 / _690;
            }
            uint _2170;
            if (_740)
            {
                _2170 = _2141 / _733;
            }
            else
            {
                _2170 = _2141 % _690;
            }
            uint _766 = _691 + _2170;
            uint _770 = _2092 + _2168;
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
            float _2173;
            if (_791)
            {
                _2173 = float(_798._m0[(_672 + (_766 * _650._m4)) + (_770 * _650._m5)]);
            }
            else
            {
                _2173 = 0.0;
            }
            _776[(_2168 * _772) + _2170] = half(_2173);
        }
        for (uint _2142 = _642; _2142 < _831; _2142 += _820)
        {
            bool _837 = _650._m9 == 1u;
            uint _2159;
            if (_837)
            {
                _2159 = _2142 % _696;
            }
            else
            {
                _2159 = _2142 / _733;
            }
            uint _2161;
            if (_837)
            {
                _2161 = _2142 / _696;
            }
            else
            {
                _2161 = _2142 % _733;
            }
            uint _863 = _697 + _2159;
            uint _867 = _2092 + _2161;
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
            float _2164;
            if (_887)
            {
                _2164 = float(_894._m0[(_684 + (_867 * _650._m8)) + (_863 * _650._m9)]);
            }
            else
            {
                _2164 = 0.0;
            }
            _872[(_2161 * _868) + _2159] = half(_2164);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint _2143 = 0u; _2143 < _924; )
        {
            _929[_2143] = half(0.0);
            _2143++;
            continue;
        }
        uint _2144;
        _2144 = 0u;
        for (; _2144 < _733; _2144++)
        {
            for (uint _2151 = 0u; _2151 < _689; )
            {
                _954[_2151] = _776[((_2144 * _772) + gl_LocalInvocationID.y) + (_2151 * _688)];
                _2151++;
                continue;
            }
            for (uint _2152 = 0u; _2152 < _695; )
            {
                _978[_2152] = _872[((_2144 * _868) + gl_LocalInvocationID.x) + (_2152 * _639)];
                _2152++;
                continue;
            }
            uint _2153;
            _2153 = 0u;
            for (; _2153 < _689; _2153++)
            {
                for (uint _2157 = 0u; _2157 < _695; )
                {
                    uint _1011 = (_2153 * _695) + _2157;
                    _929[_1011] = fma(_954[_2153], _978[_2157], _929[_1011]);
                    _2157++;
                    continue;
                }
            }
        }
        for (uint _2145 = 0u; _2145 < _1039; )
        {
            _710[_2145] += float(_929[_2145]);
            _2145++;
            continue;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1065 = (_654 * _650._m12) + (_660 * _650._m13);
    uint _1077 = (_654 * _650._m18) + (_660 * _650._m19);
    for (uint _2093 = 0u; _2093 < _689; _2093++)
    {
        uint _1092 = (_691 + gl_LocalInvocationID.y) + (_2093 * _688);
        if (_1092 >= _650._m0)
        {
            continue;
        }
        for (uint _2094 = 0u; _2094 < _695; _2094++)
        {
            uint _1114 = (_697 + gl_LocalInvocationID.x) + (_2094 * _639);
            if (_1114 >= _650._m1)
            {
                continue;
            }
            uint _1130 = (_2093 * _695) + _2094;
            float _2096;
            if (_650._m14 != 0u)
            {
                _2096 = fma(_650._m20, _710[_1130], _650._m21 * float(_1146._m0[(_1077 + (_1092 * _650._m16)) + (_1114 * _650._m17)]));
            }
            else
            {
                _2096 = _650._m20 * _710[_1130];
            }
            float _2117;
            switch (_650._m15)
            {
                case 1:
                {
                    _2117 = fast::max(_2096, 0.0);
                    break;
                }
                case 2:
                {
                    _2117 = fast::min(fast::max(_2096, _650._m22), _650._m23);
                    break;
                }
                case 3:
                {
                    float _2114;
                    if (_2096 >= 0.0)
                    {
                        _2114 = _2096;
                    }
                    else
                    {
                        _2114 = _2096 * _650._m22;
                    }
                    _2117 = _2114;
                    break;
                }
                case 4:
                {
                    _2117 = 1.0 / (1.0 + exp(-_2096));
                    break;
                }
                case 5:
                {
                    _2117 = _2096 * (1.0 / (1.0 + exp(-_2096)));
                    break;
                }
                case 6:
                {
                    float _1279 = _2096 * 0.707106769084930419921875;
                    float _1456 = abs(_1279);
                    float _1459 = fma(0.3275910913944244384765625, _1456, 1.0);
                    float _1460 = 1.0 / _1459;
                    _2117 = (0.5 * _2096) * fma(sign(_1279), fma(-(fma(fma(fma((1.0614054203033447265625 / _1459) - 1.45315206050872802734375, _1460, 1.42141377925872802734375), _1460, -0.284496724605560302734375), _1460, 0.254829585552215576171875) * _1460), exp((-_1456) * _1456), 1.0), 1.0);
                    break;
                }
                case 7:
                {
                    float _2113;
                    do
                    {
                        float _1495 = abs(_2096);
                        if (_1495 < 0.0625)
                        {
                            float _1501 = _2096 * _2096;
                            _2113 = _2096 * fma(_1501, fma(_1501, fma(_1501, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1516 = exp((-2.0) * _1495);
                        _2113 = (sign(_2096) * (1.0 - _1516)) / (1.0 + _1516);
                        break;
                    } while(false);
                    _2117 = _2113;
                    break;
                }
                case 8:
                {
                    _2117 = fast::clamp(fma(_2096, _650._m22, _650._m23), 0.0, 1.0);
                    break;
                }
                case 9:
                {
                    _2117 = _2096 * fast::clamp(fma(_2096, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                    break;
                }
                case 16:
                {
                    _2117 = exp(_2096);
                    break;
                }
                case 17:
                {
                    _2117 = log(_2096);
                    break;
                }
                case 18:
                {
                    _2117 = sqrt(_2096);
                    break;
                }
                case 19:
                {
                    _2117 = -_2096;
                    break;
                }
                case 20:
                {
                    _2117 = abs(_2096);
                    break;
                }
                case 21:
                {
                    _2117 = 1.0 / _2096;
                    break;
                }
                case 22:
                {
                    float _1533 = abs(_2096);
                    float _1536 = fma(0.3275910913944244384765625, _1533, 1.0);
                    float _1537 = 1.0 / _1536;
                    _2117 = sign(_2096) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1536) - 1.45315206050872802734375, _1537, 1.42141377925872802734375), _1537, -0.284496724605560302734375), _1537, 0.254829585552215576171875) * _1537), exp((-_1533) * _1533), 1.0);
                    break;
                }
                case 23:
                {
                    _2117 = floor(_2096);
                    break;
                }
                case 24:
                {
                    _2117 = ceil(_2096);
                    break;
                }
                case 25:
                {
                    float _1603 = floor(fma(_2096, 0.636619746685028076171875, 0.5));
                    int _1606 = int(_1603) & 3;
                    float _2223 = -_1603;
                    float _1616 = fma(_2223, 7.5497901264043321134522557258606e-08, fma(_2223, 0.0004837512969970703125, fma(_2223, 1.5703125, _2096)));
                    float _2111;
                    if ((_1606 & 1) == 0)
                    {
                        float _1622 = _1616 * _1616;
                        _2111 = fma(_1616 * _1622, fma(_1622, fma(_1622, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1616);
                    }
                    else
                    {
                        float _1640 = _1616 * _1616;
                        _2111 = fma(_1640 * _1640, fma(_1640, fma(_1640, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1640, 1.0));
                    }
                    float _2112;
                    if (_1606 >= 2)
                    {
                        _2112 = -_2111;
                    }
                    else
                    {
                        _2112 = _2111;
                    }
                    _2117 = _2112;
                    break;
                }
                case 26:
                {
                    float _1698 = floor(fma(_2096, 0.636619746685028076171875, 0.5));
                    int _1701 = int(_1698) & 3;
                    float _2219 = -_1698;
                    float _1711 = fma(_2219, 7.5497901264043321134522557258606e-08, fma(_2219, 0.0004837512969970703125, fma(_2219, 1.5703125, _2096)));
                    float _2109;
                    if ((_1701 & 1) == 0)
                    {
                        float _1717 = _1711 * _1711;
                        _2109 = fma(_1717 * _1717, fma(_1717, fma(_1717, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1717, 1.0));
                    }
                    else
                    {
                        float _1737 = _1711 * _1711;
                        _2109 = fma(_1711 * _1737, fma(_1737, fma(_1737, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1711);
                    }
                    float _2110;
                    if ((_1701 == 1) || (_1701 == 2))
                    {
                        _2110 = -_2109;
                    }
                    else
                    {
                        _2110 = _2109;
                    }
                    _2117 = _2110;
                    break;
                }
                case 27:
                {
                    float _1758 = exp(-abs(_2096));
                    float _2108;
                    if (_1758 < 0.015625)
                    {
                        float _2216 = -_1758;
                        _2108 = _1758 * fma(_2216, fma(_2216, fma(_2216, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2108 = log(1.0 + _1758);
                    }
                    _2117 = fast::max(_2096, 0.0) + _2108;
                    break;
                }
                case 29:
                {
                    _2117 = rint(_2096);
                    break;
                }
                case 30:
                {
                    _2117 = sign(_2096);
                    break;
                }
                case 31:
                {
                    _2117 = _2096 / (1.0 + abs(_2096));
                    break;
                }
                case 32:
                {
                    float _1791 = exp(-abs(_2096));
                    float _2106;
                    if (_1791 < 0.015625)
                    {
                        float _2213 = -_1791;
                        _2106 = _1791 * fma(_2213, fma(_2213, fma(_2213, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2106 = log(1.0 + _1791);
                    }
                    float _1815 = fast::max(_2096, 0.0) + _2106;
                    float _2107;
                    do
                    {
                        float _1825 = abs(_1815);
                        if (_1825 < 0.0625)
                        {
                            float _1831 = _1815 * _1815;
                            _2107 = _1815 * fma(_1831, fma(_1831, fma(_1831, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1846 = exp((-2.0) * _1825);
                        _2107 = (sign(_1815) * (1.0 - _1846)) / (1.0 + _1846);
                        break;
                    } while(false);
                    _2117 = _2096 * _2107;
                    break;
                }
                case 33:
                {
                    float _2105;
                    if (_2096 < 0.0)
                    {
                        _2105 = _650._m22 * (exp(_2096) - 1.0);
                    }
                    else
                    {
                        _2105 = _2096;
                    }
                    _2117 = _2105;
                    break;
                }
                case 34:
                {
                    _2117 = fast::max(_2096, 0.0) + fast::min(0.0, _650._m22 * (exp(fast::min(_2096, 0.0) / _650._m22) - 1.0));
                    break;
                }
                case 35:
                {
                    float _2104;
                    if (_2096 <= 0.0)
                    {
                        _2104 = _650._m22 * (exp(_2096) - 1.0);
                    }
                    else
                    {
                        _2104 = _2096;
                    }
                    _2117 = _650._m23 * _2104;
                    break;
                }
                case 36:
                {
                    _2117 = (_2096 > _650._m22) ? _2096 : 0.0;
                    break;
                }
                case 37:
                {
                    float _2103;
                    if (_2096 < (-_650._m23))
                    {
                        _2103 = _2096 + _650._m22;
                    }
                    else
                    {
                        float _2102;
                        if (_2096 > _650._m23)
                        {
                            _2102 = _2096 - _650._m22;
                        }
                        else
                        {
                            _2102 = 0.0;
                        }
                        _2103 = _2102;
                    }
                    _2117 = _2103;
                    break;
                }
                case 38:
                {
                    float _1912 = floor(fma(_2096, 0.636619746685028076171875, 0.5));
                    int _1915 = int(_1912) & 3;
                    float _2208 = -_1912;
                    float _1925 = fma(_2208, 7.5497901264043321134522557258606e-08, fma(_2208, 0.0004837512969970703125, fma(_2208, 1.5703125, _2096)));
                    bool _1888 = (_1915 & 1) == 0;
                    float _2098;
                    if (_1888)
                    {
                        float _1931 = _1925 * _1925;
                        _2098 = fma(_1925 * _1931, fma(_1931, fma(_1931, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1925);
                    }
                    else
                    {
                        float _1949 = _1925 * _1925;
                        _2098 = fma(_1949 * _1949, fma(_1949, fma(_1949, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1949, 1.0));
                    }
                    float _2099;
                    if (_1915 >= 2)
                    {
                        _2099 = -_2098;
                    }
                    else
                    {
                        _2099 = _2098;
                    }
                    float _2100;
                    if (_1888)
                    {
                        float _2026 = _1925 * _1925;
                        _2100 = fma(_2026 * _2026, fma(_2026, fma(_2026, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _2026, 1.0));
                    }
                    else
                    {
                        float _2046 = _1925 * _1925;
                        _2100 = fma(_1925 * _2046, fma(_2046, fma(_2046, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1925);
                    }
                    float _2101;
                    if ((_1915 == 1) || (_1915 == 2))
                    {
                        _2101 = -_2100;
                    }
                    else
                    {
                        _2101 = _2100;
                    }
                    _2117 = _2099 / _2101;
                    break;
                }
                case 39:
                {
                    float _2097;
                    do
                    {
                        if (abs(_2096) < 0.0625)
                        {
                            float _2072 = _2096 * _2096;
                            _2097 = _2096 * fma(_2072, fma(_2072, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                            break;
                        }
                        float _2083 = exp(_2096);
                        _2097 = 0.5 * (_2083 - (1.0 / _2083));
                        break;
                    } while(false);
                    _2117 = _2097;
                    break;
                }
                case 40:
                {
                    _2117 = 0.5 * (exp(_2096) + exp(-_2096));
                    break;
                }
                default:
                {
                    _2117 = _2096;
                    break;
                }
            }
            _1169._m0[(_1065 + (_1092 * _650._m1)) + _1114] = half(_2117);
        }
    }
}

