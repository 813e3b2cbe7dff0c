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

constant uint _61_tmp [[function_constant(0)]];
constant uint _61 = is_function_constant_defined(_61_tmp) ? _61_tmp : 1u;
constant uint _62_tmp [[function_constant(1)]];
constant uint _62 = is_function_constant_defined(_62_tmp) ? _62_tmp : 1u;
constant uint _63_tmp [[function_constant(2)]];
constant uint _63 = is_function_constant_defined(_63_tmp) ? _63_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_61, _62, _63);

struct _416
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
};

struct _428
{
    uint _m0[1];
};

struct _634
{
    uint _m0[1];
};

struct _734
{
    uint _m0[1];
};

struct _777
{
    float _m0[1];
};

kernel void ml_trees(const device _634& _636 [[buffer(0)]], const device _428& _430 [[buffer(1)]], device _734& _736 [[buffer(2)]], device _777& _779 [[buffer(3)]], constant _416& _418 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _949 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_949 >= _418._m0)
        {
            break;
        }
        spvUnsafeArray<float, 64> _169;
        spvUnsafeArray<bool, 64> _405;
        for (uint _1644 = 0u; _1644 < _418._m2; )
        {
            _169[_1644] = 0.0;
            _405[_1644] = false;
            _1644++;
            continue;
        }
        for (uint _1645 = 0u; _1645 < _418._m4; _1645++)
        {
            uint _1743;
            _1743 = _430._m0[_418._m8 + _1645];
            uint _669;
            for (uint _1742 = 0u; _1742 < _418._m12; _1743 = _669, _1742++)
            {
                uint _621 = 4u * _1743;
                uint _622 = _621 + 1u;
                uint _626 = _430._m0[_622] & 255u;
                if (_626 == 6u)
                {
                    break;
                }
                uint _645 = (_949 * _418._m1) + _430._m0[_621];
                float _656 = as_type<float>(_430._m0[_418._m5 + _1743]);
                bool _1745;
                do
                {
                    bool _1008 = (_636._m0[_645] & 2139095040u) == 2139095040u;
                    bool _1014;
                    if (_1008)
                    {
                        _1014 = (_636._m0[_645] & 8388607u) != 0u;
                    }
                    else
                    {
                        _1014 = _1008;
                    }
                    if (_1014)
                    {
                        bool _962 = (_430._m0[_622] >> 8u) != 0u;
                        bool _969;
                        if (!_962)
                        {
                            _969 = _626 == 5u;
                        }
                        else
                        {
                            _969 = _962;
                        }
                        _1745 = _969;
                        break;
                    }
                    float _972 = as_type<float>(_636._m0[_645]);
                    bool _1746;
                    switch (_626)
                    {
                        case 0u:
                        {
                            _1746 = _972 <= _656;
                            break;
                        }
                        case 1u:
                        {
                            _1746 = _972 < _656;
                            break;
                        }
                        case 2u:
                        {
                            _1746 = _972 >= _656;
                            break;
                        }
                        case 3u:
                        {
                            _1746 = _972 > _656;
                            break;
                        }
                        case 4u:
                        {
                            _1746 = _972 == _656;
                            break;
                        }
                        default:
                        {
                            _1746 = _972 != _656;
                            break;
                        }
                    }
                    _1745 = _1746;
                    break;
                } while(false);
                _669 = _430._m0[_621 + (_1745 ? 2u : 3u)];
            }
            for (uint _1755 = 0u; _1755 < _418._m2; _1755++)
            {
                uint _689 = _1743 * _418._m2;
                _169[_1755] += as_type<float>(_430._m0[(_418._m6 + _689) + _1755]);
                bool _720;
                if (!_405[_1755])
                {
                    _720 = _430._m0[(_418._m7 + _689) + _1755] != 0u;
                }
                else
                {
                    _720 = _405[_1755];
                }
                _405[_1755] = _720;
            }
        }
        if (_418._m2 == 2u)
        {
            bool _1048 = _418._m11 == 2u;
            float _1684;
            float _1686;
            int _1698;
            if (_1048)
            {
                float _1055 = as_type<float>(_430._m0[_418._m10 + 1u]);
                float _1678;
                if (_405[1])
                {
                    _1678 = _1055 + _169[0];
                }
                else
                {
                    _1678 = _169[1] + _1055;
                }
                float _1679;
                if (_405[1])
                {
                    _1679 = -(_1055 + _169[0]);
                }
                else
                {
                    _1679 = _169[0] + as_type<float>(_430._m0[_418._m10]);
                }
                _1698 = -1;
                _1686 = _1678;
                _1684 = _1679;
            }
            else
            {
                bool _1090 = _418._m11 == 1u;
                float _1685;
                if (_1090)
                {
                    _1685 = _169[0] + as_type<float>(_430._m0[_418._m10]);
                }
                else
                {
                    _1685 = _169[0];
                }
                _1698 = _1090 ? (-1) : 3;
                _1686 = _169[1];
                _1684 = _1685;
            }
            bool _1791 = _1048 ? true : _405[1];
            float _1689;
            if (_1791 && _405[1])
            {
                _1689 = _1686;
            }
            else
            {
                _1689 = _405[0] ? _1684 : 0.0;
            }
            int _1696;
            uint _1724;
            if ((_418._m13 & 1u) != 0u)
            {
                bool _1123 = (_418._m13 & 2u) != 0u;
                bool _1127 = _1689 > (_1123 ? 0.5 : 0.0);
                _1724 = uint(_1127);
                _1696 = (_1127 ? 0 : 1) + (_1123 ? 0 : 2);
            }
            else
            {
                _1724 = (_1689 > 0.0) ? 5u : 4u;
                _1696 = _1698;
            }
            float _1142 = _405[0] ? _1684 : 0.0;
            if (_1791)
            {
                _169[0] = _1142;
                _169[1] = _405[1] ? _1686 : 0.0;
                bool _1176 = _418._m3 == 2u;
                if (_1176 || (_418._m3 == 4u))
                {
                    for (uint _1720 = 0u; _1720 < 2u; _1720++)
                    {
                        float _1739;
                        if (_1176)
                        {
                            float _1307 = 1.0 / (1.0 + exp(-abs(_169[_1720])));
                            float _1738;
                            if (_169[_1720] < 0.0)
                            {
                                _1738 = 1.0 - _1307;
                            }
                            else
                            {
                                _1738 = _1307;
                            }
                            _1739 = _1738;
                        }
                        else
                        {
                            float _1325 = fma(2.0, _169[_1720], -1.0);
                            float _1331 = log((1.0 - _1325) * (1.0 + _1325));
                            float _1334 = fma(0.5, _1331, 4.33074665069580078125);
                            _1739 = (1.41421353816986083984375 * ((_1325 < 0.0) ? (-1.0) : 1.0)) * sqrt((-_1334) + sqrt(fma(_1334, _1334, _1331 * (-6.8027210235595703125))));
                        }
                        _169[_1720] = _1739;
                    }
                }
                else
                {
                    bool _1209 = _418._m3 == 1u;
                    if (_1209 || (_418._m3 == 3u))
                    {
                        float _1714;
                        _1714 = _169[0];
                        for (uint _1706 = 1u; _1706 < 2u; )
                        {
                            _1714 = fast::max(_1714, _169[_1706]);
                            _1706++;
                            continue;
                        }
                        float _1710;
                        _1710 = 0.0;
                        float _1775;
                        for (uint _1707 = 0u; _1707 < 2u; _1710 = _1775, _1707++)
                        {
                            bool _1247;
                            if (!_1209)
                            {
                                _1247 = abs(_169[_1707]) > 1.0000000116860974230803549289703e-07;
                            }
                            else
                            {
                                _1247 = _1209;
                            }
                            float _1715;
                            if (_1247)
                            {
                                _1715 = exp(_169[_1707] - _1714);
                            }
                            else
                            {
                                _1715 = _169[_1707] * exp(-_1714);
                            }
                            _169[_1707] = _1715;
                            if (_1247)
                            {
                                _1775 = _1710 + _169[_1707];
                            }
                            else
                            {
                                _1775 = _1710;
                            }
                        }
                        for (uint _1708 = 0u; _1708 < 2u; )
                        {
                            _169[_1708] /= _1710;
                            _1708++;
                            continue;
                        }
                    }
                }
            }
            else
            {
                do
                {
                    if (_418._m3 == 4u)
                    {
                        float _1407 = fma(2.0, _1142, -1.0);
                        float _1413 = log((1.0 - _1407) * (1.0 + _1407));
                        float _1416 = fma(0.5, _1413, 4.33074665069580078125);
                        _169[0] = (1.41421353816986083984375 * ((_1407 < 0.0) ? (-1.0) : 1.0)) * sqrt((-_1416) + sqrt(fma(_1416, _1416, _1413 * (-6.8027210235595703125))));
                        _169[1] = 0.0;
                        break;
                    }
                    float _1702;
                    if (_1696 >= 2)
                    {
                        _1702 = -_1142;
                    }
                    else
                    {
                        _1702 = 1.0 - _1142;
                    }
                    float _1704;
                    float _1705;
                    if (_418._m3 == 2u)
                    {
                        float _1443 = 1.0 / (1.0 + exp(-abs(_1142)));
                        float _1703;
                        if (_1142 < 0.0)
                        {
                            _1703 = 1.0 - _1443;
                        }
                        else
                        {
                            _1703 = _1443;
                        }
                        _1705 = _1703;
                        _1704 = 1.0 - _1703;
                    }
                    else
                    {
                        _1705 = _1142;
                        _1704 = _1702;
                    }
                    bool _1388 = _1696 < 0;
                    _169[0] = _1388 ? _1142 : _1704;
                    _169[1] = _1388 ? 0.0 : _1705;
                    break;
                } while(false);
            }
            uint _738 = 2u * _949;
            bool _740 = _1724 >= 4u;
            uint _1736;
            if (_740)
            {
                _1736 = _1724 - 4u;
            }
            else
            {
                _1736 = _430._m0[_418._m9 + (2u * _1724)];
            }
            _736._m0[_738] = _1736;
            uint _759 = _738 + 1u;
            uint _1737;
            if (_740)
            {
                _1737 = 0u;
            }
            else
            {
                _1737 = _430._m0[(_418._m9 + (2u * _1724)) + 1u];
            }
            _736._m0[_759] = _1737;
            _779._m0[_738] = _169[0];
            _779._m0[_759] = _169[1];
            break;
        }
        for (uint _1646 = 0u; _1646 < _418._m11; )
        {
            _169[_1646] += as_type<float>(_430._m0[_418._m10 + _1646]);
            _405[_1646] = true;
            _1646++;
            continue;
        }
        uint _1648;
        _1648 = 0u;
        uint _1792;
        bool _860;
        uint _1647 = 0u;
        bool _1669 = false;
        for (; _1647 < _418._m2; _1669 = _860, _1648 = _1792, _1647++)
        {
            bool _849;
            if (_405[_1647])
            {
                bool _837 = !_1669;
                bool _848;
                if (!_837)
                {
                    _848 = _169[_1647] > _169[_1648];
                }
                else
                {
                    _848 = _837;
                }
                _849 = _848;
            }
            else
            {
                _849 = _405[_1647];
            }
            _1792 = _849 ? _1647 : _1648;
            if (!_1669)
            {
                _860 = _405[_1647];
            }
            else
            {
                _860 = _1669;
            }
            if (!_405[_1647])
            {
                _169[_1647] = 0.0;
            }
        }
        uint _872 = 2u * _949;
        uint _877 = _418._m9 + (2u * _1648);
        _736._m0[_872] = _430._m0[_877];
        _736._m0[_872 + 1u] = _430._m0[_877 + 1u];
        bool _1466 = _418._m3 == 2u;
        if (_1466 || (_418._m3 == 4u))
        {
            for (uint _1663 = 0u; _1663 < _418._m2; _1663++)
            {
                float _1666;
                if (_1466)
                {
                    float _1597 = 1.0 / (1.0 + exp(-abs(_169[_1663])));
                    float _1665;
                    if (_169[_1663] < 0.0)
                    {
                        _1665 = 1.0 - _1597;
                    }
                    else
                    {
                        _1665 = _1597;
                    }
                    _1666 = _1665;
                }
                else
                {
                    float _1615 = fma(2.0, _169[_1663], -1.0);
                    float _1621 = log((1.0 - _1615) * (1.0 + _1615));
                    float _1624 = fma(0.5, _1621, 4.33074665069580078125);
                    _1666 = (1.41421353816986083984375 * ((_1615 < 0.0) ? (-1.0) : 1.0)) * sqrt((-_1624) + sqrt(fma(_1624, _1624, _1621 * (-6.8027210235595703125))));
                }
                _169[_1663] = _1666;
            }
        }
        else
        {
            bool _1499 = _418._m3 == 1u;
            if (_1499 || (_418._m3 == 3u))
            {
                float _1657;
                _1657 = _169[0];
                for (uint _1649 = 1u; _1649 < _418._m2; )
                {
                    _1657 = fast::max(_1657, _169[_1649]);
                    _1649++;
                    continue;
                }
                float _1653;
                _1653 = 0.0;
                float _1771;
                for (uint _1650 = 0u; _1650 < _418._m2; _1653 = _1771, _1650++)
                {
                    bool _1537;
                    if (!_1499)
                    {
                        _1537 = abs(_169[_1650]) > 1.0000000116860974230803549289703e-07;
                    }
                    else
                    {
                        _1537 = _1499;
                    }
                    float _1658;
                    if (_1537)
                    {
                        _1658 = exp(_169[_1650] - _1657);
                    }
                    else
                    {
                        _1658 = _169[_1650] * exp(-_1657);
                    }
                    _169[_1650] = _1658;
                    if (_1537)
                    {
                        _1771 = _1653 + _169[_1650];
                    }
                    else
                    {
                        _1771 = _1653;
                    }
                }
                for (uint _1651 = 0u; _1651 < _418._m2; )
                {
                    _169[_1651] /= _1653;
                    _1651++;
                    continue;
                }
            }
        }
        for (uint _1664 = 0u; _1664 < _418._m2; )
        {
            _779._m0[(_949 * _418._m2) + _1664] = _169[_1664];
            _1664++;
            continue;
        }
        break;
    } while(false);
}

