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

constant uint _51_tmp [[function_constant(0)]];
constant uint _51 = is_function_constant_defined(_51_tmp) ? _51_tmp : 1u;
constant uint _52_tmp [[function_constant(1)]];
constant uint _52 = is_function_constant_defined(_52_tmp) ? _52_tmp : 1u;
constant uint _53_tmp [[function_constant(2)]];
constant uint _53 = is_function_constant_defined(_53_tmp) ? _53_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_51, _52, _53);

struct _345
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
};

struct _390
{
    uint _m0[1];
};

struct _427
{
    uint _m0[1];
};

struct _601
{
    uint _m0[1];
};

struct _646
{
    float _m0[1];
};

kernel void ml_trees(const device _427& _429 [[buffer(0)]], const device _390& _392 [[buffer(1)]], device _601& _603 [[buffer(2)]], device _646& _648 [[buffer(3)]], constant _345& _347 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _686 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_686 >= _347._m0)
        {
            break;
        }
        spvUnsafeArray<float, 64> _159;
        spvUnsafeArray<bool, 64> _370;
        for (uint _943 = 0u; _943 < _347._m2; )
        {
            _159[_943] = 0.0;
            _370[_943] = false;
            _943++;
            continue;
        }
        for (uint _944 = 0u; _944 < _347._m4; _944++)
        {
            uint _978;
            _978 = _392._m0[_347._m8 + _944];
            uint _462;
            for (uint _977 = 0u; _977 < _347._m12; _978 = _462, _977++)
            {
                uint _414 = 4u * _978;
                uint _415 = _414 + 1u;
                uint _419 = _392._m0[_415] & 255u;
                if (_419 == 6u)
                {
                    break;
                }
                uint _438 = (_686 * _347._m1) + _392._m0[_414];
                float _449 = as_type<float>(_392._m0[_347._m5 + _978]);
                bool _980;
                do
                {
                    bool _745 = (_429._m0[_438] & 2139095040u) == 2139095040u;
                    bool _751;
                    if (_745)
                    {
                        _751 = (_429._m0[_438] & 8388607u) != 0u;
                    }
                    else
                    {
                        _751 = _745;
                    }
                    if (_751)
                    {
                        bool _699 = (_392._m0[_415] >> 8u) != 0u;
                        bool _706;
                        if (!_699)
                        {
                            _706 = _419 == 5u;
                        }
                        else
                        {
                            _706 = _699;
                        }
                        _980 = _706;
                        break;
                    }
                    float _709 = as_type<float>(_429._m0[_438]);
                    bool _981;
                    switch (_419)
                    {
                        case 0u:
                        {
                            _981 = _709 <= _449;
                            break;
                        }
                        case 1u:
                        {
                            _981 = _709 < _449;
                            break;
                        }
                        case 2u:
                        {
                            _981 = _709 >= _449;
                            break;
                        }
                        case 3u:
                        {
                            _981 = _709 > _449;
                            break;
                        }
                        case 4u:
                        {
                            _981 = _709 == _449;
                            break;
                        }
                        default:
                        {
                            _981 = _709 != _449;
                            break;
                        }
                    }
                    _980 = _981;
                    break;
                } while(false);
                _462 = _392._m0[_414 + (_980 ? 2u : 3u)];
            }
            for (uint _990 = 0u; _990 < _347._m2; _990++)
            {
                uint _482 = _978 * _347._m2;
                _159[_990] += as_type<float>(_392._m0[(_347._m6 + _482) + _990]);
                bool _513;
                if (!_370[_990])
                {
                    _513 = _392._m0[(_347._m7 + _482) + _990] != 0u;
                }
                else
                {
                    _513 = _370[_990];
                }
                _370[_990] = _513;
            }
        }
        for (uint _945 = 0u; _945 < _347._m11; )
        {
            _159[_945] += as_type<float>(_392._m0[_347._m10 + _945]);
            _370[_945] = true;
            _945++;
            continue;
        }
        uint _947;
        _947 = 0u;
        uint _1016;
        bool _589;
        uint _946 = 0u;
        bool _968 = false;
        for (; _946 < _347._m2; _968 = _589, _947 = _1016, _946++)
        {
            bool _578;
            if (_370[_946])
            {
                bool _566 = !_968;
                bool _577;
                if (!_566)
                {
                    _577 = _159[_946] > _159[_947];
                }
                else
                {
                    _577 = _566;
                }
                _578 = _577;
            }
            else
            {
                _578 = _370[_946];
            }
            _1016 = _578 ? _946 : _947;
            if (!_968)
            {
                _589 = _370[_946];
            }
            else
            {
                _589 = _968;
            }
            if (!_370[_946])
            {
                _159[_946] = 0.0;
            }
        }
        uint _605 = 2u * _686;
        uint _611 = _347._m9 + (2u * _947);
        _603._m0[_605] = _392._m0[_611];
        _603._m0[_605 + 1u] = _392._m0[_611 + 1u];
        bool _765 = _347._m3 == 2u;
        if (_765 || (_347._m3 == 4u))
        {
            for (uint _962 = 0u; _962 < _347._m2; _962++)
            {
                float _965;
                if (_765)
                {
                    float _896 = 1.0 / (1.0 + exp(-abs(_159[_962])));
                    float _964;
                    if (_159[_962] < 0.0)
                    {
                        _964 = 1.0 - _896;
                    }
                    else
                    {
                        _964 = _896;
                    }
                    _965 = _964;
                }
                else
                {
                    float _914 = fma(2.0, _159[_962], -1.0);
                    float _920 = log((1.0 - _914) * (1.0 + _914));
                    float _923 = fma(0.5, _920, 4.33074665069580078125);
                    _965 = (1.41421353816986083984375 * ((_914 < 0.0) ? (-1.0) : 1.0)) * sqrt((-_923) + sqrt(fma(_923, _923, _920 * (-6.8027210235595703125))));
                }
                _159[_962] = _965;
            }
        }
        else
        {
            bool _798 = _347._m3 == 1u;
            if (_798 || (_347._m3 == 3u))
            {
                float _956;
                _956 = _159[0];
                for (uint _948 = 1u; _948 < _347._m2; )
                {
                    _956 = fast::max(_956, _159[_948]);
                    _948++;
                    continue;
                }
                float _952;
                _952 = 0.0;
                float _1006;
                for (uint _949 = 0u; _949 < _347._m2; _952 = _1006, _949++)
                {
                    bool _836;
                    if (!_798)
                    {
                        _836 = abs(_159[_949]) > 1.0000000116860974230803549289703e-07;
                    }
                    else
                    {
                        _836 = _798;
                    }
                    float _957;
                    if (_836)
                    {
                        _957 = exp(_159[_949] - _956);
                    }
                    else
                    {
                        _957 = _159[_949] * exp(-_956);
                    }
                    _159[_949] = _957;
                    if (_836)
                    {
                        _1006 = _952 + _159[_949];
                    }
                    else
                    {
                        _1006 = _952;
                    }
                }
                for (uint _950 = 0u; _950 < _347._m2; )
                {
                    _159[_950] /= _952;
                    _950++;
                    continue;
                }
            }
        }
        for (uint _963 = 0u; _963 < _347._m2; )
        {
            _648._m0[(_686 * _347._m2) + _963] = _159[_963];
            _963++;
            continue;
        }
        break;
    } while(false);
}

