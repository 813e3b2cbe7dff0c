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

constant uint _48_tmp [[function_constant(0)]];
constant uint _48 = is_function_constant_defined(_48_tmp) ? _48_tmp : 1u;
constant uint _49_tmp [[function_constant(1)]];
constant uint _49 = is_function_constant_defined(_49_tmp) ? _49_tmp : 1u;
constant uint _50_tmp [[function_constant(2)]];
constant uint _50 = is_function_constant_defined(_50_tmp) ? _50_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_48, _49, _50);

struct _317
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
};

struct _350
{
    float _m0[1];
};

struct _363
{
    uint _m0[1];
};

struct _415
{
    uint _m0[1];
};

struct _477
{
    float _m0[1];
};

kernel void ml_linear(const device _350& _352 [[buffer(0)]], const device _363& _365 [[buffer(1)]], device _415& _417 [[buffer(2)]], device _477& _479 [[buffer(3)]], constant _317& _319 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _513 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_513 >= _319._m0)
        {
            break;
        }
        uint _805;
        uint _807;
        _807 = 0u;
        _805 = 0u;
        uint _848;
        spvUnsafeArray<float, 64> _144;
        for (; _805 < _319._m2; _807 = _848, _805++)
        {
            float _834;
            _834 = 0.0;
            for (uint _832 = 0u; _832 < _319._m1; )
            {
                _834 = fma(_352._m0[(_513 * _319._m1) + _832], as_type<float>(_365._m0[(_805 * _319._m1) + _832]), _834);
                _832++;
                continue;
            }
            _144[_805] = _834 + as_type<float>(_365._m0[_319._m4 + _805]);
            _848 = (_144[_805] > _144[_807]) ? _805 : _807;
        }
        bool _407 = _319._m2 == 1u;
        uint _806;
        if (_407)
        {
            _806 = uint(_144[0] > 0.0);
        }
        else
        {
            _806 = _807;
        }
        uint _419 = 2u * _513;
        uint _425 = _319._m5 + (2u * _806);
        _417._m0[_419] = _365._m0[_425];
        _417._m0[_419 + 1u] = _365._m0[_425 + 1u];
        if (_407)
        {
            float _449 = _144[0];
            do
            {
                if (_319._m3 == 4u)
                {
                    float _569 = fma(2.0, _449, -1.0);
                    float _575 = log((1.0 - _569) * (1.0 + _569));
                    float _578 = fma(0.5, _575, 4.33074665069580078125);
                    _144[0] = (1.41421353816986083984375 * ((_569 < 0.0) ? (-1.0) : 1.0)) * sqrt((-_578) + sqrt(fma(_578, _578, _575 * (-6.8027210235595703125))));
                    _144[1] = 0.0;
                    break;
                }
                float _829;
                float _830;
                if (_319._m3 == 2u)
                {
                    float _605 = 1.0 / (1.0 + exp(-abs(_449)));
                    float _828;
                    if (_449 < 0.0)
                    {
                        _828 = 1.0 - _605;
                    }
                    else
                    {
                        _828 = _605;
                    }
                    _830 = _828;
                    _829 = 1.0 - _828;
                }
                else
                {
                    _830 = _449;
                    _829 = 1.0 - _449;
                }
                _144[0] = _829;
                _144[1] = _830;
                break;
            } while(false);
        }
        else
        {
            bool _628 = _319._m3 == 2u;
            if (_628 || (_319._m3 == 4u))
            {
                for (uint _822 = 0u; _822 < _319._m2; _822++)
                {
                    float _824;
                    if (_628)
                    {
                        float _759 = 1.0 / (1.0 + exp(-abs(_144[_822])));
                        float _823;
                        if (_144[_822] < 0.0)
                        {
                            _823 = 1.0 - _759;
                        }
                        else
                        {
                            _823 = _759;
                        }
                        _824 = _823;
                    }
                    else
                    {
                        float _777 = fma(2.0, _144[_822], -1.0);
                        float _783 = log((1.0 - _777) * (1.0 + _777));
                        float _786 = fma(0.5, _783, 4.33074665069580078125);
                        _824 = (1.41421353816986083984375 * ((_777 < 0.0) ? (-1.0) : 1.0)) * sqrt((-_786) + sqrt(fma(_786, _786, _783 * (-6.8027210235595703125))));
                    }
                    _144[_822] = _824;
                }
            }
            else
            {
                bool _661 = _319._m3 == 1u;
                if (_661 || (_319._m3 == 3u))
                {
                    float _816;
                    _816 = _144[0];
                    for (uint _808 = 1u; _808 < _319._m2; )
                    {
                        _816 = fast::max(_816, _144[_808]);
                        _808++;
                        continue;
                    }
                    float _812;
                    _812 = 0.0;
                    float _838;
                    for (uint _809 = 0u; _809 < _319._m2; _812 = _838, _809++)
                    {
                        bool _699;
                        if (!_661)
                        {
                            _699 = abs(_144[_809]) > 1.0000000116860974230803549289703e-07;
                        }
                        else
                        {
                            _699 = _661;
                        }
                        float _817;
                        if (_699)
                        {
                            _817 = exp(_144[_809] - _816);
                        }
                        else
                        {
                            _817 = _144[_809] * exp(-_816);
                        }
                        _144[_809] = _817;
                        if (_699)
                        {
                            _838 = _812 + _144[_809];
                        }
                        else
                        {
                            _838 = _812;
                        }
                    }
                    for (uint _810 = 0u; _810 < _319._m2; )
                    {
                        _144[_810] /= _812;
                        _810++;
                        continue;
                    }
                }
            }
        }
        uint _466 = max(_319._m2, 2u);
        for (uint _831 = 0u; _831 < _466; )
        {
            _479._m0[(_513 * _466) + _831] = _144[_831];
            _831++;
            continue;
        }
        break;
    } while(false);
}

