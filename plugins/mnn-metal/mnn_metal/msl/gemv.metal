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

struct _727
{
    float _m0[1];
};

struct _756
{
    float _m0[1];
};

constant uint _782_tmp [[function_constant(0)]];
constant uint _782 = is_function_constant_defined(_782_tmp) ? _782_tmp : 1u;
constant uint _783_tmp [[function_constant(1)]];
constant uint _783 = is_function_constant_defined(_783_tmp) ? _783_tmp : 1u;
constant uint _784_tmp [[function_constant(2)]];
constant uint _784 = is_function_constant_defined(_784_tmp) ? _784_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_782, _783, _784);
constant uint _786 = gl_WorkGroupSize.x;
constant uint _797 = (8u * _786);
constant uint _814 = (_786 / 2u);

struct _912
{
    float _m0[1];
};

struct _934
{
    float _m0[1];
};

kernel void gemv(const device _756& _758 [[buffer(0)]], const device _727& _729 [[buffer(1)]], const device _912& _914 [[buffer(2)]], device _934& _936 [[buffer(3)]], constant _645& _647 [[buffer(30)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]])
{
    threadgroup float _800[_797];
    uint _640 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
    uint _651 = gl_WorkGroupID.z / _647._m3;
    uint _657 = gl_WorkGroupID.z % _647._m3;
    uint _669 = (_651 * _647._m6) + (_657 * _647._m7);
    uint _691 = ((_651 * _647._m10) + (_657 * _647._m11)) + (min(_640, (_647._m1 - 1u)) * _647._m9);
    spvUnsafeArray<float, 8> _703;
    for (uint _1853 = 0u; _1853 < 8u; )
    {
        _703[_1853] = 0.0;
        _1853++;
        continue;
    }
    bool _711 = _640 < _647._m1;
    if (_711)
    {
        for (uint _1854 = gl_LocalInvocationID.x; _1854 < _647._m2; _1854 += _786)
        {
            uint _736 = _691 + (_1854 * _647._m8);
            for (uint _1882 = 0u; _1882 < 8u; _1882++)
            {
                if (_1882 < _647._m0)
                {
                    _703[_1882] = fma(_758._m0[(_669 + (_1882 * _647._m4)) + (_1854 * _647._m5)], _729._m0[_736], _703[_1882]);
                }
            }
        }
    }
    for (uint _1855 = 0u; _1855 < 8u; )
    {
        _800[(_1855 * _786) + gl_LocalInvocationID.x] = _703[_1855];
        _1855++;
        continue;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint _1856;
    _1856 = _814;
    for (; _1856 > 0u; _1856 = _1856 >> uint(1))
    {
        if (gl_LocalInvocationID.x < _1856)
        {
            for (uint _1879 = 0u; _1879 < 8u; )
            {
                uint _838 = (_1879 * _786) + gl_LocalInvocationID.x;
                _800[_838] += _800[_838 + _1856];
                _1879++;
                continue;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    bool _858 = gl_LocalInvocationID.x < _647._m0;
    if (_858 ? _711 : _858)
    {
        uint _898 = gl_LocalInvocationID.x * _786;
        float _1857;
        if (_647._m14 != 0u)
        {
            _1857 = fma(_647._m20, _800[_898], _647._m21 * _914._m0[(((_651 * _647._m18) + (_657 * _647._m19)) + (gl_LocalInvocationID.x * _647._m16)) + (_640 * _647._m17)]);
        }
        else
        {
            _1857 = _647._m20 * _800[_898];
        }
        float _1878;
        switch (_647._m15)
        {
            case 1:
            {
                _1878 = fast::max(_1857, 0.0);
                break;
            }
            case 2:
            {
                _1878 = fast::min(fast::max(_1857, _647._m22), _647._m23);
                break;
            }
            case 3:
            {
                float _1875;
                if (_1857 >= 0.0)
                {
                    _1875 = _1857;
                }
                else
                {
                    _1875 = _1857 * _647._m22;
                }
                _1878 = _1875;
                break;
            }
            case 4:
            {
                _1878 = 1.0 / (1.0 + exp(-_1857));
                break;
            }
            case 5:
            {
                _1878 = _1857 * (1.0 / (1.0 + exp(-_1857)));
                break;
            }
            case 6:
            {
                float _1041 = _1857 * 0.707106769084930419921875;
                float _1218 = abs(_1041);
                float _1221 = fma(0.3275910913944244384765625, _1218, 1.0);
                float _1222 = 1.0 / _1221;
                _1878 = (0.5 * _1857) * fma(sign(_1041), fma(-(fma(fma(fma((1.0614054203033447265625 / _1221) - 1.45315206050872802734375, _1222, 1.42141377925872802734375), _1222, -0.284496724605560302734375), _1222, 0.254829585552215576171875) * _1222), exp((-_1218) * _1218), 1.0), 1.0);
                break;
            }
            case 7:
            {
                float _1874;
                do
                {
                    float _1257 = abs(_1857);
                    if (_1257 < 0.0625)
                    {
                        float _1263 = _1857 * _1857;
                        _1874 = _1857 * fma(_1263, fma(_1263, fma(_1263, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                        break;
                    }
                    float _1278 = exp((-2.0) * _1257);
                    _1874 = (sign(_1857) * (1.0 - _1278)) / (1.0 + _1278);
                    break;
                } while(false);
                _1878 = _1874;
                break;
            }
            case 8:
            {
                _1878 = fast::clamp(fma(_1857, _647._m22, _647._m23), 0.0, 1.0);
                break;
            }
            case 9:
            {
                _1878 = _1857 * fast::clamp(fma(_1857, 0.16666667163372039794921875, 0.5), 0.0, 1.0);
                break;
            }
            case 16:
            {
                _1878 = exp(_1857);
                break;
            }
            case 17:
            {
                _1878 = log(_1857);
                break;
            }
            case 18:
            {
                _1878 = sqrt(_1857);
                break;
            }
            case 19:
            {
                _1878 = -_1857;
                break;
            }
            case 20:
            {
                _1878 = abs(_1857);
                break;
            }
            case 21:
            {
                _1878 = 1.0 / _1857;
                break;
            }
            case 22:
            {
                float _1295 = abs(_1857);
                float _1298 = fma(0.3275910913944244384765625, _1295, 1.0);
                float _1299 = 1.0 / _1298;
                _1878 = sign(_1857) * fma(-(fma(fma(fma((1.0614054203033447265625 / _1298) - 1.45315206050872802734375, _1299, 1.42141377925872802734375), _1299, -0.284496724605560302734375), _1299, 0.254829585552215576171875) * _1299), exp((-_1295) * _1295), 1.0);
                break;
            }
            case 23:
            {
                _1878 = floor(_1857);
                break;
            }
            case 24:
            {
                _1878 = ceil(_1857);
                break;
            }
            case 25:
            {
                float _1365 = floor(fma(_1857, 0.636619746685028076171875, 0.5));
                int _1368 = int(_1365) & 3;
                float _1901 = -_1365;
                float _1378 = fma(_1901, 7.5497901264043321134522557258606e-08, fma(_1901, 0.0004837512969970703125, fma(_1901, 1.5703125, _1857)));
                float _1872;
                if ((_1368 & 1) == 0)
                {
                    float _1384 = _1378 * _1378;
                    _1872 = fma(_1378 * _1384, fma(_1384, fma(_1384, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1378);
                }
                else
                {
                    float _1402 = _1378 * _1378;
                    _1872 = fma(_1402 * _1402, fma(_1402, fma(_1402, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1402, 1.0));
                }
                float _1873;
                if (_1368 >= 2)
                {
                    _1873 = -_1872;
                }
                else
                {
                    _1873 = _1872;
                }
                _1878 = _1873;
                break;
            }
            case 26:
            {
                float _1460 = floor(fma(_1857, 0.636619746685028076171875, 0.5));
                int _1463 = int(_1460) & 3;
                float _1897 = -_1460;
                float _1473 = fma(_1897, 7.5497901264043321134522557258606e-08, fma(_1897, 0.0004837512969970703125, fma(_1897, 1.5703125, _1857)));
                float _1870;
                if ((_1463 & 1) == 0)
                {
                    float _1479 = _1473 * _1473;
                    _1870 = fma(_1479 * _1479, fma(_1479, fma(_1479, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1479, 1.0));
                }
                else
                {
                    float _1499 = _1473 * _1473;
                    _1870 = fma(_1473 * _1499, fma(_1499, fma(_1499, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1473);
                }
                float _1871;
                if ((_1463 == 1) || (_1463 == 2))
                {
                    _1871 = -_1870;
                }
                else
                {
                    _1871 = _1870;
                }
                _1878 = _1871;
                break;
            }
            case 27:
            {
                float _1520 = exp(-abs(_1857));
                float _1869;
                if (_1520 < 0.015625)
                {
                    float _1894 = -_1520;
                    _1869 = _1520 * fma(_1894, fma(_1894, fma(_1894, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                }
                else
                {
                    _1869 = log(1.0 + _1520);
                }
                _1878 = fast::max(_1857, 0.0) + _1869;
                break;
            }
            case 29:
            {
                _1878 = rint(_1857);
                break;
            }
            case 30:
            {
                _1878 = sign(_1857);
                break;
            }
            case 31:
            {
                _1878 = _1857 / (1.0 + abs(_1857));
                break;
            }
            case 32:
            {
                float _1553 = exp(-abs(_1857));
                float _1867;
                if (_1553 < 0.015625)
                {
                    float _1891 = -_1553;
                    _1867 = _1553 * fma(_1891, fma(_1891, fma(_1891, 0.25, 0.3333333432674407958984375), 0.5), 1.0);
                }
                else
                {
                    _1867 = log(1.0 + _1553);
                }
                float _1577 = fast::max(_1857, 0.0) + _1867;
                float _1868;
                do
                {
                    float _1587 = abs(_1577);
                    if (_1587 < 0.0625)
                    {
                        float _1593 = _1577 * _1577;
                        _1868 = _1577 * fma(_1593, fma(_1593, fma(_1593, -0.0539682544767856597900390625, 0.13333334028720855712890625), -0.3333333432674407958984375), 1.0);
                        break;
                    }
                    float _1608 = exp((-2.0) * _1587);
                    _1868 = (sign(_1577) * (1.0 - _1608)) / (1.0 + _1608);
                    break;
                } while(false);
                _1878 = _1857 * _1868;
                break;
            }
            case 33:
            {
                float _1866;
                if (_1857 < 0.0)
                {
                    _1866 = _647._m22 * (exp(_1857) - 1.0);
                }
                else
                {
                    _1866 = _1857;
                }
                _1878 = _1866;
                break;
            }
            case 34:
            {
                _1878 = fast::max(_1857, 0.0) + fast::min(0.0, _647._m22 * (exp(fast::min(_1857, 0.0) / _647._m22) - 1.0));
                break;
            }
            case 35:
            {
                float _1865;
                if (_1857 <= 0.0)
                {
                    _1865 = _647._m22 * (exp(_1857) - 1.0);
                }
                else
                {
                    _1865 = _1857;
                }
                _1878 = _647._m23 * _1865;
                break;
            }
            case 36:
            {
                _1878 = (_1857 > _647._m22) ? _1857 : 0.0;
                break;
            }
            case 37:
            {
                float _1864;
                if (_1857 < (-_647._m23))
                {
                    _1864 = _1857 + _647._m22;
                }
                else
                {
                    float _1863;
                    if (_1857 > _647._m23)
                    {
                        _1863 = _1857 - _647._m22;
                    }
                    else
                    {
                        _1863 = 0.0;
                    }
                    _1864 = _1863;
                }
                _1878 = _1864;
                break;
            }
            case 38:
            {
                float _1674 = floor(fma(_1857, 0.636619746685028076171875, 0.5));
                int _1677 = int(_1674) & 3;
                float _1886 = -_1674;
                float _1687 = fma(_1886, 7.5497901264043321134522557258606e-08, fma(_1886, 0.0004837512969970703125, fma(_1886, 1.5703125, _1857)));
                bool _1650 = (_1677 & 1) == 0;
                float _1859;
                if (_1650)
                {
                    float _1693 = _1687 * _1687;
                    _1859 = fma(_1687 * _1693, fma(_1693, fma(_1693, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1687);
                }
                else
                {
                    float _1711 = _1687 * _1687;
                    _1859 = fma(_1711 * _1711, fma(_1711, fma(_1711, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1711, 1.0));
                }
                float _1860;
                if (_1677 >= 2)
                {
                    _1860 = -_1859;
                }
                else
                {
                    _1860 = _1859;
                }
                float _1861;
                if (_1650)
                {
                    float _1788 = _1687 * _1687;
                    _1861 = fma(_1788 * _1788, fma(_1788, fma(_1788, 2.4433156795566901564598083496094e-05, -0.00138873164542019367218017578125), 0.0416666455566883087158203125), fma(-0.5, _1788, 1.0));
                }
                else
                {
                    float _1808 = _1687 * _1687;
                    _1861 = fma(_1687 * _1808, fma(_1808, fma(_1808, -0.00019515295571181923151016235351562, 0.00833216123282909393310546875), -0.16666655242443084716796875), _1687);
                }
                float _1862;
                if ((_1677 == 1) || (_1677 == 2))
                {
                    _1862 = -_1861;
                }
                else
                {
                    _1862 = _1861;
                }
                _1878 = _1860 / _1862;
                break;
            }
            case 39:
            {
                float _1858;
                do
                {
                    if (abs(_1857) < 0.0625)
                    {
                        float _1834 = _1857 * _1857;
                        _1858 = _1857 * fma(_1834, fma(_1834, 0.008333333767950534820556640625, 0.16666667163372039794921875), 1.0);
                        break;
                    }
                    float _1845 = exp(_1857);
                    _1858 = 0.5 * (_1845 - (1.0 / _1845));
                    break;
                } while(false);
                _1878 = _1858;
                break;
            }
            case 40:
            {
                _1878 = 0.5 * (exp(_1857) + exp(-_1857));
                break;
            }
            default:
            {
                _1878 = _1857;
                break;
            }
        }
        _936._m0[(((_651 * _647._m12) + (_657 * _647._m13)) + (gl_LocalInvocationID.x * _647._m1)) + _640] = _1878;
    }
}

