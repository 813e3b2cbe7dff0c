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

constant uint _40_tmp [[function_constant(0)]];
constant uint _40 = is_function_constant_defined(_40_tmp) ? _40_tmp : 1u;
constant uint _41_tmp [[function_constant(1)]];
constant uint _41 = is_function_constant_defined(_41_tmp) ? _41_tmp : 1u;
constant uint _42_tmp [[function_constant(2)]];
constant uint _42 = is_function_constant_defined(_42_tmp) ? _42_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_40, _41, _42);

struct _265
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
};

struct _299
{
    float _m0[1];
};

struct _312
{
    uint _m0[1];
};

struct _355
{
    uint _m0[1];
};

struct _400
{
    float _m0[1];
};

kernel void ml_linear(const device _299& _301 [[buffer(0)]], const device _312& _314 [[buffer(1)]], device _355& _357 [[buffer(2)]], device _400& _402 [[buffer(3)]], constant _265& _267 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _434 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_434 >= _267._m0)
        {
            break;
        }
        uint _625;
        uint _626;
        _626 = 0u;
        _625 = 0u;
        uint _660;
        spvUnsafeArray<float, 64> _136;
        for (; _625 < _267._m2; _626 = _660, _625++)
        {
            float _649;
            _649 = 0.0;
            for (uint _647 = 0u; _647 < _267._m1; )
            {
                _649 = fma(_301._m0[(_434 * _267._m1) + _647], as_type<float>(_314._m0[(_625 * _267._m1) + _647]), _649);
                _647++;
                continue;
            }
            _136[_625] = _649 + as_type<float>(_314._m0[_267._m4 + _625]);
            _660 = (_136[_625] > _136[_626]) ? _625 : _626;
        }
        uint _359 = 2u * _434;
        uint _365 = _267._m5 + (2u * _626);
        _357._m0[_359] = _314._m0[_365];
        _357._m0[_359 + 1u] = _314._m0[_365 + 1u];
        bool _448 = _267._m3 == 2u;
        if (_448 || (_267._m3 == 4u))
        {
            for (uint _641 = 0u; _641 < _267._m2; _641++)
            {
                float _644;
                if (_448)
                {
                    float _579 = 1.0 / (1.0 + exp(-abs(_136[_641])));
                    float _643;
                    if (_136[_641] < 0.0)
                    {
                        _643 = 1.0 - _579;
                    }
                    else
                    {
                        _643 = _579;
                    }
                    _644 = _643;
                }
                else
                {
                    float _597 = fma(2.0, _136[_641], -1.0);
                    float _603 = log((1.0 - _597) * (1.0 + _597));
                    float _606 = fma(0.5, _603, 4.33074665069580078125);
                    _644 = (1.41421353816986083984375 * ((_597 < 0.0) ? (-1.0) : 1.0)) * sqrt((-_606) + sqrt(fma(_606, _606, _603 * (-6.8027210235595703125))));
                }
                _136[_641] = _644;
            }
        }
        else
        {
            bool _481 = _267._m3 == 1u;
            if (_481 || (_267._m3 == 3u))
            {
                float _635;
                _635 = _136[0];
                for (uint _627 = 1u; _627 < _267._m2; )
                {
                    _635 = fast::max(_635, _136[_627]);
                    _627++;
                    continue;
                }
                float _631;
                _631 = 0.0;
                float _653;
                for (uint _628 = 0u; _628 < _267._m2; _631 = _653, _628++)
                {
                    bool _519;
                    if (!_481)
                    {
                        _519 = abs(_136[_628]) > 1.0000000116860974230803549289703e-07;
                    }
                    else
                    {
                        _519 = _481;
                    }
                    float _636;
                    if (_519)
                    {
                        _636 = exp(_136[_628] - _635);
                    }
                    else
                    {
                        _636 = _136[_628] * exp(-_635);
                    }
                    _136[_628] = _636;
                    if (_519)
                    {
                        _653 = _631 + _136[_628];
                    }
                    else
                    {
                        _653 = _631;
                    }
                }
                for (uint _629 = 0u; _629 < _267._m2; )
                {
                    _136[_629] /= _631;
                    _629++;
                    continue;
                }
            }
        }
        for (uint _642 = 0u; _642 < _267._m2; )
        {
            _402._m0[(_434 * _267._m2) + _642] = _136[_642];
            _642++;
            continue;
        }
        break;
    } while(false);
}

