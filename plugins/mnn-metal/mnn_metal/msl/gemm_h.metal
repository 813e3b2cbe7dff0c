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

struct _796
{
    half _m0[1];
};

constant uint _819 = (_639 * _688);
constant uint _830 = (_733 * _696);
constant uint _867 = (_696 + 1u);
constant uint _868 = (_733 * _867);

struct _891
{
    float _m0[1];
};

struct _1103
{
    float _m0[1];
};

struct _1125
{
    float _m0[1];
};

kernel void gemm_h(const device _796& _798 [[buffer(0)]], const device _891& _893 [[buffer(1)]], const device _1103& _1105 [[buffer(2)]], device _1125& _1127 [[buffer(3)]], constant _648& _650 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup float _775[_772];
    threadgroup float _871[_868];
    uint _642 = (gl_LocalInvocationID.y * _639) + gl_LocalInvocationID.x;
    uint _654 = gl_WorkGroupID.z / _650._m3;
    uint _660 = gl_WorkGroupID.z % _650._m3;
    uint _672 = (_654 * _650._m6) + (_660 * _650._m7);
    uint _684 = (_654 * _650._m10) + (_660 * _650._m11);
    uint _691 = gl_WorkGroupID.y * _690;
    uint _697 = gl_WorkGroupID.x * _696;
    spvUnsafeArray<float, _707> _710;
    for (uint _2048 = 0u; _2048 < _705; )
    {
        _710[_2048] = 0.0;
        _2048++;
        continue;
    }
    spvUnsafeArray<float, _689> _933;
    spvUnsafeArray<float, _695> _957;
    for (uint _2049 = 0u; _2049 < _650._m2; _2049 += _733)
    {
        for (uint _2098 = _642; _2098 < _734; _2098 += _819)
        {
            bool _740 = _650._m5 == 1u;
            uint _2121;
            if (_740)
            {
                _2121 = _2098 % _733;
            }
            else
            {
                _2121 = _2098 / _690;
            }
            uint _2123;
            if (_740)
            {
                _2123 = _2098 / _733;
            }
            else
            {
                _2123 = _2098 % _690;
            }
            uint _766 = _691 + _2123;
            uint _770 = _2049 + _2121;
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
            float _2126;
            if (_790)
            {
                _2126 = float(_798._m0[(_672 + (_766 * _650._m4)) + (_770 * _650._m5)]);
            }
            else
            {
                _2126 = 0.0;
            }
            _775[(_2121 * _771) + _2123] = _2126;
        }
        for (uint _2099 = _642; _2099 < _830; _2099 += _819)
        {
            bool _836 = _650._m9 == 1u;
            uint _2112;
            if (_836)
            {
                _2112 = _2099 % _696;
            }
            else
            {
                _2112 = _2099 / _733;
            }
            uint _2114;
            if (_836)
            {
                _2114 = _2099 / _696;
            }
            else
            {
                _2114 = _2099 % _733;
            }
            uint _862 = _697 + _2112;
            uint _866 = _2049 + _2114;
            bool _879 = _862 < _650._m1;
            bool _886;
            if (_879)
            {
                _886 = _866 < _650._m2;
            }
            else
            {
                _886 = _879;
            }
            float _2117;
            if (_886)
            {
                _2117 = _893._m0[(_684 + (_866 * _650._m8)) + (_862 * _650._m9)];
            }
            else
            {
                _2117 = 0.0;
            }
            _871[(_2114 * _867) + _2112] = _2117;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint _2100;
        _2100 = 0u;
        for (; _2100 < _733; _2100++)
        {
            for (uint _2104 = 0u; _2104 < _689; )
            {
                _933[_2104] = _775[((_2100 * _771) + gl_LocalInvocationID.y) + (_2104 * _688)];
                _2104++;
                continue;
            }
            for (uint _2105 = 0u; _2105 < _695; )
            {
                _957[_2105] = _871[((_2100 * _867) + gl_LocalInvocationID.x) + (_2105 * _639)];
                _2105++;
                continue;
            }
            uint _2106;
            _2106 = 0u;
            for (; _2106 < _689; _2106++)
            {
                for (uint _2110 = 0u; _2110 < _695; )
                {
                    uint _990 = (_2106 * _695) + _2110;
                    _710[_990] = fma(_933[_2106], _957[_2110], _710[_990]);
                    _2110++;
                    continue;
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint _1024 = (_654 * _650._m12) + (_660 * _650._m13);
    uint _1036 = (_654 * _650._m18) + (_660 * _650._m19);
    for (uint _2050 = 0u; _2050 < _689; _2050++)
    {
        uint _1051 = (_691 + gl_LocalInvocationID.y) + (_2050 * _688);
        if (_1051 >= _650._m0)
        {
            continue;
        }
        for (uint _2051 = 0u; _2051 < _695; _2051++)
        {
            uint _1073 = (_697 + gl_LocalInvocationID.x) + (_2051 * _639);
            if (_1073 >= _650._m1)
            {
                continue;
            }
            uint _1089 = (_2050 * _695) + _2051;
            float _2053;
            if (_650._m14 != 0u)
            {
                _2053 = fma(_650._m20, _710[_1089], _650._m21 * _1105._m0[(_1036 + (_1051 * _650._m16)) + (_1073 * _650._m17)]);
            }
            else
            {
                _2053 = _650._m20 * _710[_1089];
            }
            float _2074;
            switch (_650._m15)
            {
                case 1:
                {
                    _2074 = fast::max(_2053, 0.0);
                    break;
                }
                case 2:
                {
                    _2074 = fast::min(fast::max(_2053, _650._m22), _650._m23);
                    break;
                }
                case 3:
                {
                    float _2071;
                    if (_2053 >= 0.0)
                    {
                        _2071 = _2053;
                    }
                    else
                    {
                        _2071 = _2053 * _650._m22;
                    }
                    _2074 = _2071;
                    break;
                }
                case 4:
                {
                    _2074 = 1.0 / (1.0 + exp(-_2053));
                    break;
                }
                case 5:
                {
                    _2074 = _2053 * (1.0 / (1.0 + exp(-_2053)));
                    break;
                }
                case 6:
                {
                    float _1236 = _2053 * 0.707106769084930419921875;
                    float _1413 = abs(_1236);
                    float _1416 = fma(0.3275910913944244384765625, _1413, 1.0);
                    float _1417 = 1.0 / _1416;
                    _2074 = (0.5 * _2053) * fma(sign(_1236), fma(-(fma(fma(fma((1.0614054203033447265625 / _1416) - 1.45315206050872802734375, _1417, 1.42141377925872802734375), _1417, -0.284496724605560302734375), _1417, 0.254829585552215576171875) * _1417), exp((-_1413) * _1413), 1.0), 1.0);
                    break;
                }
                case 7:
                {
                    float _2070;
                    do
                    {
                        float _1452 = abs(_2053);
                        if (_1452 < 0.0625)
                        {
                            float _1458 = _2053 * _2053;
                            _2070 = _2053 * fma(_1458, fma(_1458, fma(_1458, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1473 = exp((-2.0) * _1452);
                        _2070 = (sign(_2053) * (1.0 - _1473)) / (1.0 + _1473);
                        break;
                    } while(false);
                    _2074 = _2070;
                    break;
                }
                case 8:
                {
                    _2074 = fast::clamp(fma(_2053, _650._m22, _650._m23), 0.0, 1.0);
                    break;
                }
                case 9:
                {
                    _2074 = _2053 * fast::clamp(fma(_2053, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                    break;
                }
                case 16:
                {
                    _2074 = exp(_2053);
                    break;
                }
                case 17:
                {
                    _2074 = log(_2053);
                    break;
                }
                case 18:
                {
                    _2074 = sqrt(_2053);
                    break;
                }
                case 19:
                {
                    _2074 = -_2053;
                    break;
                }
                case 20:
                {
                    _2074 = abs(_2053);
                    break;
                }
                case 21:
                {
                    _2074 = 1.0 / _2053;
                    break;
                }
                case 22:
                {
                    float _1490 = abs(_2053);
                    float _1493 = fma(0.3275910913944244384765625, _1490, 1.0);
                    float _1494 = 1.0 / _1493;
                    _2074 = sign(_2053) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1493) - 1.45315206050872802734375, _1494, 1.42141377925872802734375), _1494, -0.284496724605560302734375), _1494, 0.254829585552215576171875) * _1494), exp((-_1490) * _1490), 1.0);
                    break;
                }
                case 23:
                {
                    _2074 = floor(_2053);
                    break;
                }
                case 24:
                {
                    _2074 = ceil(_2053);
                    break;
                }
                case 25:
                {
                    float _1560 = floor(fma(_2053, 0.636619746685028076171875, 0.5));
                    int _1563 = int(_1560) & 3;
                    float _2176 = -_1560;
                    float _1573 = fma(_2176, 7.5497901264043321134522557258606e-08, fma(_2176, 0.0004837512969970703125, fma(_2176, 1.5703125, _2053)));
                    float _2068;
                    if ((_1563 & 1) == 0)
                    {
                        float _1579 = _1573 * _1573;
                        _2068 = fma(_1573 * _1579, fma(_1579, fma(_1579, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1573);
                    }
                    else
                    {
                        float _1597 = _1573 * _1573;
                        _2068 = fma(_1597 * _1597, fma(_1597, fma(_1597, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1597, 1.0));
                    }
                    float _2069;
                    if (_1563 >= 2)
                    {
                        _2069 = -_2068;
                    }
                    else
                    {
                        _2069 = _2068;
                    }
                    _2074 = _2069;
                    break;
                }
                case 26:
                {
                    float _1655 = floor(fma(_2053, 0.636619746685028076171875, 0.5));
                    int _1658 = int(_1655) & 3;
                    float _2172 = -_1655;
                    float _1668 = fma(_2172, 7.5497901264043321134522557258606e-08, fma(_2172, 0.0004837512969970703125, fma(_2172, 1.5703125, _2053)));
                    float _2066;
                    if ((_1658 & 1) == 0)
                    {
                        float _1674 = _1668 * _1668;
                        _2066 = fma(_1674 * _1674, fma(_1674, fma(_1674, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1674, 1.0));
                    }
                    else
                    {
                        float _1694 = _1668 * _1668;
                        _2066 = fma(_1668 * _1694, fma(_1694, fma(_1694, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1668);
                    }
                    float _2067;
                    if ((_1658 == 1) || (_1658 == 2))
                    {
                        _2067 = -_2066;
                    }
                    else
                    {
                        _2067 = _2066;
                    }
                    _2074 = _2067;
                    break;
                }
                case 27:
                {
                    float _1715 = exp(-abs(_2053));
                    float _2065;
                    if (_1715 < 0.015625)
                    {
                        float _2169 = -_1715;
                        _2065 = _1715 * fma(_2169, fma(_2169, fma(_2169, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2065 = log(1.0 + _1715);
                    }
                    _2074 = fast::max(_2053, 0.0) + _2065;
                    break;
                }
                case 29:
                {
                    _2074 = rint(_2053);
                    break;
                }
                case 30:
                {
                    _2074 = sign(_2053);
                    break;
                }
                case 31:
                {
                    _2074 = _2053 / (1.0 + abs(_2053));
                    break;
                }
                case 32:
                {
                    float _1748 = exp(-abs(_2053));
                    float _2063;
                    if (_1748 < 0.015625)
                    {
                        float _2166 = -_1748;
                        _2063 = _1748 * fma(_2166, fma(_2166, fma(_2166, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                    }
                    else
                    {
                        _2063 = log(1.0 + _1748);
                    }
                    float _1772 = fast::max(_2053, 0.0) + _2063;
                    float _2064;
                    do
                    {
                        float _1782 = abs(_1772);
                        if (_1782 < 0.0625)
                        {
                            float _1788 = _1772 * _1772;
                            _2064 = _1772 * fma(_1788, fma(_1788, fma(_1788, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                            break;
                        }
                        float _1803 = exp((-2.0) * _1782);
                        _2064 = (sign(_1772) * (1.0 - _1803)) / (1.0 + _1803);
                        break;
                    } while(false);
                    _2074 = _2053 * _2064;
                    break;
                }
                case 33:
                {
                    float _2062;
                    if (_2053 < 0.0)
                    {
                        _2062 = _650._m22 * (exp(_2053) - 1.0);
                    }
                    else
                    {
                        _2062 = _2053;
                    }
                    _2074 = _2062;
                    break;
                }
                case 34:
                {
                    _2074 = fast::max(_2053, 0.0) + fast::min(0.0, _650._m22 * (exp(fast::min(_2053, 0.0) / _650._m22) - 1.0));
                    break;
                }
                case 35:
                {
                    float _2061;
                    if (_2053 <= 0.0)
                    {
                        _2061 = _650._m22 * (exp(_2053) - 1.0);
                    }
                    else
                    {
                        _2061 = _2053;
                    }
                    _2074 = _650._m23 * _2061;
                    break;
                }
                case 36:
                {
                    _2074 = (_2053 > _650._m22) ? _2053 : 0.0;
                    break;
                }
                case 37:
                {
                    float _2060;
                    if (_2053 < (-_650._m23))
                    {
                        _2060 = _2053 + _650._m22;
                    }
                    else
                    {
                        float _2059;
                        if (_2053 > _650._m23)
                        {
                            _2059 = _2053 - _650._m22;
                        }
                        else
                        {
                            _2059 = 0.0;
                        }
                        _2060 = _2059;
                    }
                    _2074 = _2060;
                    break;
                }
                case 38:
                {
                    float _1869 = floor(fma(_2053, 0.636619746685028076171875, 0.5));
                    int _1872 = int(_1869) & 3;
                    float _2161 = -_1869;
                    float _1882 = fma(_2161, 7.5497901264043321134522557258606e-08, fma(_2161, 0.0004837512969970703125, fma(_2161, 1.5703125, _2053)));
                    bool _1845 = (_1872 & 1) == 0;
                    float _2055;
                    if (_1845)
                    {
                        float _1888 = _1882 * _1882;
                        _2055 = fma(_1882 * _1888, fma(_1888, fma(_1888, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1882);
                    }
                    else
                    {
                        float _1906 = _1882 * _1882;
                        _2055 = fma(_1906 * _1906, fma(_1906, fma(_1906, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1906, 1.0));
                    }
                    float _2056;
                    if (_1872 >= 2)
                    {
                        _2056 = -_2055;
                    }
                    else
                    {
                        _2056 = _2055;
                    }
                    float _2057;
                    if (_1845)
                    {
                        float _1983 = _1882 * _1882;
                        _2057 = fma(_1983 * _1983, fma(_1983, fma(_1983, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1983, 1.0));
                    }
                    else
                    {
                        float _2003 = _1882 * _1882;
                        _2057 = fma(_1882 * _2003, fma(_2003, fma(_2003, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1882);
                    }
                    float _2058;
                    if ((_1872 == 1) || (_1872 == 2))
                    {
                        _2058 = -_2057;
                    }
                    else
                    {
                        _2058 = _2057;
                    }
                    _2074 = _2056 / _2058;
                    break;
                }
                case 39:
                {
                    float _2054;
                    do
                    {
                        if (abs(_2053) < 0.0625)
                        {
                            float _2029 = _2053 * _2053;
                            _2054 = _2053 * fma(_2029, fma(_2029, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                            break;
                        }
                        float _2040 = exp(_2053);
                        _2054 = 0.5 * (_2040 - (1.0 / _2040));
                        break;
                    } while(false);
                    _2074 = _2054;
                    break;
                }
                case 40:
                {
                    _2074 = 0.5 * (exp(_2053) + exp(-_2053));
                    break;
                }
                default:
                {
                    _2074 = _2053;
                    break;
                }
            }
            _1127._m0[(_1024 + (_1051 * _650._m1)) + _1073] = _2074;
        }
    }
}

