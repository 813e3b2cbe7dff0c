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

struct _645
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

struct _728
{
    half _m0[1];
};

struct _758
{
    half _m0[1];
};

constant uint _785_tmp [[function_constant(0)]];
constant uint _785 = is_function_constant_defined(_785_tmp) ? _785_tmp : 1u;
constant uint _786_tmp [[function_constant(1)]];
constant uint _786 = is_function_constant_defined(_786_tmp) ? _786_tmp : 1u;
constant uint _787_tmp [[function_constant(2)]];
constant uint _787 = is_function_constant_defined(_787_tmp) ? _787_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_785, _786, _787);
constant uint _789 = gl_WorkGroupSize.x;
constant uint _800 = (8u * _789);
constant uint _817 = (_789 / 2u);

struct _915
{
    half _m0[1];
};

struct _938
{
    half _m0[1];
};

kernel void gemv_h(const device _758& _760 [[buffer(0)]], const device _728& _730 [[buffer(1)]], const device _915& _917 [[buffer(2)]], device _938& _940 [[buffer(3)]], constant _645& _647 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]])
{
    threadgroup float _803[_800];
    uint _640 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
    uint _651 = gl_WorkGroupID.z / _647._m3;
    uint _657 = gl_WorkGroupID.z % _647._m3;
    uint _669 = (_651 * _647._m6) + (_657 * _647._m7);
    uint _691 = ((_651 * _647._m10) + (_657 * _647._m11)) + (min(_640, (_647._m1 - 1u)) * _647._m9);
    spvUnsafeArray<float, 8> _703;
    for (uint _1858 = 0u; _1858 < 8u; )
    {
        _703[_1858] = 0.0;
        _1858++;
        continue;
    }
    bool _711 = _640 < _647._m1;
    if (_711)
    {
        for (uint _1859 = gl_LocalInvocationID.x; _1859 < _647._m2; _1859 += _789)
        {
            float _741 = float(_730._m0[_691 + (_1859 * _647._m8)]);
            for (uint _1887 = 0u; _1887 < 8u; _1887++)
            {
                if (_1887 < _647._m0)
                {
                    _703[_1887] = fma(float(_760._m0[(_669 + (_1887 * _647._m4)) + (_1859 * _647._m5)]), _741, _703[_1887]);
                }
            }
        }
    }
    for (uint _1860 = 0u; _1860 < 8u; )
    {
        _803[(_1860 * _789) + gl_LocalInvocationID.x] = _703[_1860];
        _1860++;
        continue;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint _1861;
    _1861 = _817;
    for (; _1861 > 0u; _1861 = _1861 >> uint(1))
    {
        if (gl_LocalInvocationID.x < _1861)
        {
            for (uint _1884 = 0u; _1884 < 8u; )
            {
                uint _841 = (_1884 * _789) + gl_LocalInvocationID.x;
                _803[_841] += _803[_841 + _1861];
                _1884++;
                continue;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    bool _861 = gl_LocalInvocationID.x < _647._m0;
    if (_861 ? _711 : _861)
    {
        uint _901 = gl_LocalInvocationID.x * _789;
        float _1862;
        if (_647._m14 != 0u)
        {
            _1862 = fma(_647._m20, _803[_901], _647._m21 * float(_917._m0[(((_651 * _647._m18) + (_657 * _647._m19)) + (gl_LocalInvocationID.x * _647._m16)) + (_640 * _647._m17)]));
        }
        else
        {
            _1862 = _647._m20 * _803[_901];
        }
        float _1883;
        switch (_647._m15)
        {
            case 1:
            {
                _1883 = fast::max(_1862, 0.0);
                break;
            }
            case 2:
            {
                _1883 = fast::min(fast::max(_1862, _647._m22), _647._m23);
                break;
            }
            case 3:
            {
                float _1880;
                if (_1862 >= 0.0)
                {
                    _1880 = _1862;
                }
                else
                {
                    _1880 = _1862 * _647._m22;
                }
                _1883 = _1880;
                break;
            }
            case 4:
            {
                _1883 = 1.0 / (1.0 + exp(-_1862));
                break;
            }
            case 5:
            {
                _1883 = _1862 * (1.0 / (1.0 + exp(-_1862)));
                break;
            }
            case 6:
            {
                float _1046 = _1862 * 0.707106769084930419921875;
                float _1223 = abs(_1046);
                float _1226 = fma(0.3275910913944244384765625, _1223, 1.0);
                float _1227 = 1.0 / _1226;
                _1883 = (0.5 * _1862) * fma(sign(_1046), fma(-(fma(fma(fma((1.0614054203033447265625 / _1226) - 1.45315206050872802734375, _1227, 1.42141377925872802734375), _1227, -0.284496724605560302734375), _1227, 0.254829585552215576171875) * _1227), exp((-_1223) * _1223), 1.0), 1.0);
                break;
            }
            case 7:
            {
                float _1879;
                do
                {
                    float _1262 = abs(_1862);
                    if (_1262 < 0.0625)
                    {
                        float _1268 = _1862 * _1862;
                        _1879 = _1862 * fma(_1268, fma(_1268, fma(_1268, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                        break;
                    }
                    float _1283 = exp((-2.0) * _1262);
                    _1879 = (sign(_1862) * (1.0 - _1283)) / (1.0 + _1283);
                    break;
                } while(false);
                _1883 = _1879;
                break;
            }
            case 8:
            {
                _1883 = fast::clamp(fma(_1862, _647._m22, _647._m23), 0.0, 1.0);
                break;
            }
            case 9:
            {
                _1883 = _1862 * fast::clamp(fma(_1862, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                break;
            }
            case 16:
            {
                _1883 = exp(_1862);
                break;
            }
            case 17:
            {
                _1883 = log(_1862);
                break;
            }
            case 18:
            {
                _1883 = sqrt(_1862);
                break;
            }
            case 19:
            {
                _1883 = -_1862;
                break;
            }
            case 20:
            {
                _1883 = abs(_1862);
                break;
            }
            case 21:
            {
                _1883 = 1.0 / _1862;
                break;
            }
            case 22:
            {
                float _1300 = abs(_1862);
                float _1303 = fma(0.3275910913944244384765625, _1300, 1.0);
                float _1304 = 1.0 / _1303;
                _1883 = sign(_1862) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1303) - 1.45315206050872802734375, _1304, 1.42141377925872802734375), _1304, -0.284496724605560302734375), _1304, 0.254829585552215576171875) * _1304), exp((-_1300) * _1300), 1.0);
                break;
            }
            case 23:
            {
                _1883 = floor(_1862);
                break;
            }
            case 24:
            {
                _1883 = ceil(_1862);
                break;
            }
            case 25:
            {
                float _1370 = floor(fma(_1862, 0.636619746685028076171875, 0.5));
                int _1373 = int(_1370) & 3;
                float _1906 = -_1370;
                float _1383 = fma(_1906, 7.5497901264043321134522557258606e-08, fma(_1906, 0.0004837512969970703125, fma(_1906, 1.5703125, _1862)));
                float _1877;
                if ((_1373 & 1) == 0)
                {
                    float _1389 = _1383 * _1383;
                    _1877 = fma(_1383 * _1389, fma(_1389, fma(_1389, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1383);
                }
                else
                {
                    float _1407 = _1383 * _1383;
                    _1877 = fma(_1407 * _1407, fma(_1407, fma(_1407, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1407, 1.0));
                }
                float _1878;
                if (_1373 >= 2)
                {
                    _1878 = -_1877;
                }
                else
                {
                    _1878 = _1877;
                }
                _1883 = _1878;
                break;
            }
            case 26:
            {
                float _1465 = floor(fma(_1862, 0.636619746685028076171875, 0.5));
                int _1468 = int(_1465) & 3;
                float _1902 = -_1465;
                float _1478 = fma(_1902, 7.5497901264043321134522557258606e-08, fma(_1902, 0.0004837512969970703125, fma(_1902, 1.5703125, _1862)));
                float _1875;
                if ((_1468 & 1) == 0)
                {
                    float _1484 = _1478 * _1478;
                    _1875 = fma(_1484 * _1484, fma(_1484, fma(_1484, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1484, 1.0));
                }
                else
                {
                    float _1504 = _1478 * _1478;
                    _1875 = fma(_1478 * _1504, fma(_1504, fma(_1504, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1478);
                }
                float _1876;
                if ((_1468 == 1) || (_1468 == 2))
                {
                    _1876 = -_1875;
                }
                else
                {
                    _1876 = _1875;
                }
                _1883 = _1876;
                break;
            }
            case 27:
            {
                float _1525 = exp(-abs(_1862));
                float _1874;
                if (_1525 < 0.015625)
                {
                    float _1899 = -_1525;
                    _1874 = _1525 * fma(_1899, fma(_1899, fma(_1899, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                }
                else
                {
                    _1874 = log(1.0 + _1525);
                }
                _1883 = fast::max(_1862, 0.0) + _1874;
                break;
            }
            case 29:
            {
                _1883 = rint(_1862);
                break;
            }
            case 30:
            {
                _1883 = sign(_1862);
                break;
            }
            case 31:
            {
                _1883 = _1862 / (1.0 + abs(_1862));
                break;
            }
            case 32:
            {
                float _1558 = exp(-abs(_1862));
                float _1872;
                if (_1558 < 0.015625)
                {
                    float _1896 = -_1558;
                    _1872 = _1558 * fma(_1896, fma(_1896, fma(_1896, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                }
                else
                {
                    _1872 = log(1.0 + _1558);
                }
                float _1582 = fast::max(_1862, 0.0) + _1872;
                float _1873;
                do
                {
                    float _1592 = abs(_1582);
                    if (_1592 < 0.0625)
                    {
                        float _1598 = _1582 * _1582;
                        _1873 = _1582 * fma(_1598, fma(_1598, fma(_1598, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                        break;
                    }
                    float _1613 = exp((-2.0) * _1592);
                    _1873 = (sign(_1582) * (1.0 - _1613)) / (1.0 + _1613);
                    break;
                } while(false);
                _1883 = _1862 * _1873;
                break;
            }
            case 33:
            {
                float _1871;
                if (_1862 < 0.0)
                {
                    _1871 = _647._m22 * (exp(_1862) - 1.0);
                }
                else
                {
                    _1871 = _1862;
                }
                _1883 = _1871;
                break;
            }
            case 34:
            {
                _1883 = fast::max(_1862, 0.0) + fast::min(0.0, _647._m22 * (exp(fast::min(_1862, 0.0) / _647._m22) - 1.0));
                break;
            }
            case 35:
            {
                float _1870;
                if (_1862 <= 0.0)
                {
                    _1870 = _647._m22 * (exp(_1862) - 1.0);
                }
                else
                {
                    _1870 = _1862;
                }
                _1883 = _647._m23 * _1870;
                break;
            }
            case 36:
            {
                _1883 = (_1862 > _647._m22) ? _1862 : 0.0;
                break;
            }
            case 37:
            {
                float _1869;
                if (_1862 < (-_647._m23))
                {
                    _1869 = _1862 + _647._m22;
                }
                else
                {
                    float _1868;
                    if (_1862 > _647._m23)
                    {
                        _1868 = _1862 - _647._m22;
                    }
                    else
                    {
                        _1868 = 0.0;
                    }
                    _1869 = _1868;
                }
                _1883 = _1869;
                break;
            }
            case 38:
            {
                float _1679 = floor(fma(_1862, 0.636619746685028076171875, 0.5));
                int _1682 = int(_1679) & 3;
                float _1891 = -_1679;
                float _1692 = fma(_1891, 7.5497901264043321134522557258606e-08, fma(_1891, 0.0004837512969970703125, fma(_1891, 1.5703125, _1862)));
                bool _1655 = (_1682 & 1) == 0;
                float _1864;
                if (_1655)
                {
                    float _1698 = _1692 * _1692;
                    _1864 = fma(_1692 * _1698, fma(_1698, fma(_1698, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1692);
                }
                else
                {
                    float _1716 = _1692 * _1692;
                    _1864 = fma(_1716 * _1716, fma(_1716, fma(_1716, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1716, 1.0));
                }
                float _1865;
                if (_1682 >= 2)
                {
                    _1865 = -_1864;
                }
                else
                {
                    _1865 = _1864;
                }
                float _1866;
                if (_1655)
                {
                    float _1793 = _1692 * _1692;
                    _1866 = fma(_1793 * _1793, fma(_1793, fma(_1793, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1793, 1.0));
                }
                else
                {
                    float _1813 = _1692 * _1692;
                    _1866 = fma(_1692 * _1813, fma(_1813, fma(_1813, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1692);
                }
                float _1867;
                if ((_1682 == 1) || (_1682 == 2))
                {
                    _1867 = -_1866;
                }
                else
                {
                    _1867 = _1866;
                }
                _1883 = _1865 / _1867;
                break;
            }
            case 39:
            {
                float _1863;
                do
                {
                    if (abs(_1862) < 0.0625)
                    {
                        float _1839 = _1862 * _1862;
                        _1863 = _1862 * fma(_1839, fma(_1839, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                        break;
                    }
                    float _1850 = exp(_1862);
                    _1863 = 0.5 * (_1850 - (1.0 / _1850));
                    break;
                } while(false);
                _1883 = _1863;
                break;
            }
            case 40:
            {
                _1883 = 0.5 * (exp(_1862) + exp(-_1862));
                break;
            }
            default:
            {
                _1883 = _1862;
                break;
            }
        }
        _940._m0[(((_651 * _647._m12) + (_657 * _647._m13)) + (gl_LocalInvocationID.x * _647._m1)) + _640] = half(_1883);
    }
}

